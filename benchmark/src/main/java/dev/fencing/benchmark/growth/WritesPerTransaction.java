package dev.fencing.benchmark.growth;

import dev.fencing.benchmark.measure.Samples;
import dev.fencing.benchmark.report.Section;
import dev.fencing.benchmark.report.Series;
import dev.fencing.benchmark.report.Variant;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.FencingToken;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Writes per transaction from 1 to 1,000: one check per transaction, so the fenced/unfenced ratio
 * approaches 1 as the transaction grows.
 */
final class WritesPerTransaction {
  private WritesPerTransaction() {}

  static Section measure(Workbench w, FencingToken hot) throws SQLException {
    List<Variant> variants = new ArrayList<>();
    List<Series.Point> ratios = new ArrayList<>();
    List<Series.Point> perWrite = new ArrayList<>();
    for (int k : w.scale.writesPerTransaction()) {
      List<Double> plain = new ArrayList<>();
      List<Double> fenced = new ArrayList<>();
      Workbench.Transaction writes = (c, n) -> writes(c, n, k);
      for (int round = 0; round < w.scale.rounds(); round++) {
        for (int v = 0; v < 2; v++) {
          if ((v == 0) == (round % 2 == 0)) {
            try (FencingScope scope = Fencing.bind(hot)) {
              fenced.add(Workbench.rate(w.fenced, w.scale.throughputMillis(), 2, writes));
            }
          } else {
            plain.add(Workbench.rate(w.pool, w.scale.throughputMillis(), 2, writes));
          }
        }
      }
      String base = String.format(Locale.ROOT, "unfenced, %,d writes per transaction", k);
      variants.add(
          new Variant("growth-writes/unfenced-" + k, base, "tx/s", plain, null, true, null));
      variants.add(
          new Variant(
              "growth-writes/fenced-" + k,
              String.format(Locale.ROOT, "fenced, %,d writes per transaction", k),
              "tx/s",
              fenced,
              base,
              true,
              null));
      ratios.add(new Series.Point(k, Samples.medianRatio(fenced, plain)));
      perWrite.add(new Series.Point(k, 1e6 / Samples.median(fenced) / k));
    }
    String x = "writes per transaction";
    List<Series> series =
        List.of(
            new Series("fenced / unfenced throughput", x, "ratio (median of rounds)", ratios),
            new Series("fenced cost per write", x, "µs per write", perWrite));
    Series.Point first = ratios.get(0);
    Series.Point last = ratios.get(ratios.size() - 1);
    List<String> findings =
        List.of(
            String.format(
                Locale.ROOT,
                "Fenced/unfenced throughput: %.3f with %.0f write(s) per transaction, %.3f with"
                    + " %,.0f: the check runs once per transaction, before its first write.",
                first.y(),
                first.x(),
                last.y(),
                last.x()));
    String method =
        String.format(
            Locale.ROOT,
            "%s mode, %d rounds per point, alternating which variant goes first. One client;"
                + " each transaction runs k single-row UPDATEs (k statements, distinct rows of a"
                + " %,d-row table) and commits; for %d ms and at least 2 transactions per"
                + " measurement. Fenced: through a FencedDataSource with the token of one"
                + " resource bound (one check_tokens call per transaction); unfenced: the same"
                + " pool directly. Commits asynchronous in both.",
            w.scale.name(),
            w.scale.rounds(),
            Workbench.ITEM_ROWS,
            w.scale.throughputMillis());
    return new Section(
        "growth-writes",
        "Writes per transaction: one check per transaction",
        method,
        variants,
        List.of(),
        series,
        findings);
  }

  private static void writes(Connection c, int n, int k) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("UPDATE " + Workbench.ITEMS + " SET v = v + 1 WHERE id = ?")) {
      for (int j = 0; j < k; j++) {
        ps.setInt(1, 1 + Math.floorMod(n * 7919 + j, Workbench.ITEM_ROWS));
        ps.executeUpdate();
      }
    }
  }
}
