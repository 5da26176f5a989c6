package dev.fencing.benchmark.compare;

import dev.fencing.benchmark.compare.Comparison.Row;
import java.util.List;

/** Renders the measured rows as the founding document's table, in Markdown. */
final class FoundingTable {
  static final List<String> HEADER =
      List.of(
          "Approach",
          "Produces monotonic token? (measured)",
          "Stale-holder write blocked? (document)",
          "Stale write blocked (measured)",
          "Stale write blocked when it lands before the new holder's first write (measured)",
          "Data afterwards (measured)",
          "Notes / tradeoff");

  private FoundingTable() {}

  static String markdown(List<Row> rows) {
    StringBuilder out = new StringBuilder();
    line(out, HEADER);
    line(out, HEADER.stream().map(h -> "---").toList());
    for (Row row : rows) {
      line(out, cells(row));
    }
    return out.toString();
  }

  static List<String> cells(Row row) {
    Measurement m = row.measurement();
    if (m == null) {
      String notRun = "not run: " + row.notRun();
      return List.of(
          row.spec().name(),
          notRun,
          row.spec().claimsBlocked(),
          notRun,
          notRun,
          notRun,
          row.spec().note());
    }
    String monotonic = m.tokenEvidence();
    if (m.monotonic() != row.spec().claimsMonotonic()) {
      monotonic += " (document: " + (row.spec().claimsMonotonic() ? "Yes" : "No") + ")";
    }
    Measurement early = row.early();
    return List.of(
        row.spec().name(),
        monotonic,
        row.spec().claimsBlocked(),
        m.staleEvidence(),
        early == null ? "not run" : early.staleEvidence(),
        m.dataEvidence(),
        row.spec().note());
  }

  private static void line(StringBuilder out, List<String> cells) {
    out.append('|');
    for (String cell : cells) {
      out.append(' ').append(cell.replace("|", "\\|").replace("\n", " ")).append(" |");
    }
    out.append('\n');
  }
}
