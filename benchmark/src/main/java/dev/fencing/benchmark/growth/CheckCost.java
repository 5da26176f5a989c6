package dev.fencing.benchmark.growth;

import dev.fencing.benchmark.measure.Samples;
import dev.fencing.benchmark.report.Section;
import dev.fencing.benchmark.report.Series;
import dev.fencing.benchmark.report.Variant;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Check cost against the number of resources: a single-row UPDATE fenced by the token of a random
 * resource out of N, against the same UPDATE unfenced, interleaved.
 */
final class CheckCost {
  private CheckCost() {}

  static Section measure(Workbench w) throws SQLException {
    List<Variant> variants = new ArrayList<>();
    List<Series.Point> fencedCost = new ArrayList<>();
    List<Series.Point> unfencedCost = new ArrayList<>();
    List<Series.Point> checkCost = new ArrayList<>();
    List<String> creation = new ArrayList<>();
    StringBuilder ratios = new StringBuilder();
    SplittableRandom random = new SplittableRandom(42);
    for (int n : w.scale.resourceCounts()) {
      double seconds = w.createResources(n);
      if (seconds > 0) {
        creation.add(String.format(Locale.ROOT, "%,d in %.1f s", n, seconds));
      }
      List<Double> plain = new ArrayList<>();
      List<Double> fenced = new ArrayList<>();
      for (int round = 0; round < w.scale.rounds(); round++) {
        for (int v = 0; v < 2; v++) {
          boolean fencedTurn = (v == 0) == (round % 2 == 0);
          if (fencedTurn) {
            fenced.add(
                Workbench.rate(
                    w.fenced, w.scale.throughputMillis(), 3, fencedUpdate(w, n, random)));
          } else {
            plain.add(Workbench.rate(w.pool, w.scale.throughputMillis(), 3, CheckCost::update));
          }
        }
      }
      String base = String.format(Locale.ROOT, "unfenced (%,d resources exist)", n);
      variants.add(
          new Variant("growth-resources/unfenced-" + n, base, "tx/s", plain, null, true, null));
      variants.add(
          new Variant(
              "growth-resources/fenced-" + n,
              String.format(Locale.ROOT, "fenced, token of a random resource out of %,d", n),
              "tx/s",
              fenced,
              base,
              true,
              null));
      double fencedMicros = 1e6 / Samples.median(fenced);
      double plainMicros = 1e6 / Samples.median(plain);
      ratios.append(
          String.format(
              Locale.ROOT,
              "%s%.2f at %,d",
              ratios.length() == 0 ? "" : ", ",
              Samples.medianRatio(fenced, plain),
              n));
      fencedCost.add(new Series.Point(n, fencedMicros));
      unfencedCost.add(new Series.Point(n, plainMicros));
      checkCost.add(new Series.Point(n, fencedMicros - plainMicros));
    }
    String x = "resources (count)";
    String y = "cost per transaction (µs, median over rounds)";
    List<Series> series =
        List.of(
            new Series("fenced single-row UPDATE", x, y, fencedCost),
            new Series("unfenced single-row UPDATE", x, y, unfencedCost),
            new Series("the check (fenced - unfenced)", x, "µs per transaction", checkCost));
    List<String> findings = new ArrayList<>();
    Series.Point first = checkCost.get(0);
    Series.Point last = checkCost.get(checkCost.size() - 1);
    findings.add(
        String.format(
            Locale.ROOT,
            "The check costs %.0f µs per transaction with %,.0f resource(s) and %.0f µs with"
                + " %,.0f (fenced/unfenced: %s): one unique-index probe of the resource name,"
                + " whose depth grows with log N at most, and a share lock on its row. Its cost is"
                + " per transaction: one round trip for check_tokens (3 round trips instead of 2"
                + " for a single-row transaction) plus its plpgsql.",
            first.y(),
            first.x(),
            last.y(),
            last.x(),
            ratios));
    String method =
        String.format(
            Locale.ROOT,
            "%s mode, resource counts %s%s. Resources are created through the fence's own API"
                + " (fencing.try_acquire called set-wise, 10,000 per durable transaction: every"
                + " token a real issuance; creation: %s). For each count, %d rounds, alternating"
                + " which variant goes first: one client runs single-row UPDATEs of a random row"
                + " of a %,d-row table for %d ms, unfenced through a HikariCP pool, or fenced"
                + " through a FencedDataSource over the same pool with the token of a random"
                + " resource out of N bound for each transaction (one check_tokens call per"
                + " transaction). Commits are asynchronous (synchronous_commit = off) in both"
                + " variants so that the WAL flush, the same in both, does not hide the check.",
            w.scale.name(),
            w.scale.resourceCounts(),
            w.scale.name().equals("full")
                ? ""
                : " (the full mode goes to 1,000,000; this mode stops at "
                    + w.scale.resourceCounts().get(w.scale.resourceCounts().size() - 1)
                    + ")",
            creation.isEmpty() ? "none needed" : String.join(", ", creation),
            w.scale.rounds(),
            Workbench.ITEM_ROWS,
            w.scale.throughputMillis());
    return new Section(
        "growth-resources",
        "Check cost against the number of resources",
        method,
        variants,
        List.of(),
        series,
        findings);
  }

  private static Workbench.Transaction fencedUpdate(Workbench w, int n, SplittableRandom random) {
    return (c, i) -> {
      try (FencingScope scope = Fencing.bind(w.token(1 + random.nextInt(n)))) {
        update(c, i);
      }
    };
  }

  static void update(Connection c, int i) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("UPDATE " + Workbench.ITEMS + " SET v = v + 1 WHERE id = ?")) {
      ps.setInt(1, 1 + Math.floorMod(i * 7919, Workbench.ITEM_ROWS));
      ps.executeUpdate();
    }
  }
}
