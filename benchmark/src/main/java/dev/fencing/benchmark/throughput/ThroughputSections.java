package dev.fencing.benchmark.throughput;

import dev.fencing.benchmark.report.Ratios;
import dev.fencing.benchmark.report.Section;
import dev.fencing.benchmark.report.Variant;
import dev.fencing.benchmark.throughput.Rounds.Contender;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** The throughput benchmark's results as report sections, with their methods and findings. */
final class ThroughputSections {
  /** The name of the floor variants, before their resource count. */
  static final String FLOOR = "SQL-level floor (bare FOR SHARE read), unfenced";

  private ThroughputSections() {}

  /**
   * A comparison reported as a variant of its own although it measures nothing new: the samples of
   * {@code variant} against another baseline of the same rounds.
   */
  private record Derived(String id, String name, String variant, String baseline, double target) {}

  /** The product's check against the SQL-level floor (issue 14: within 3%). */
  private static final List<Derived> DERIVED =
      List.of(
          new Derived(
              "tpcb/check-vs-floor-1000",
              "fenced, 1,000 resources, against the SQL-level floor",
              "tpcb/fenced-1000",
              "tpcb/floor-1000",
              ThroughputBenchmark.TARGET_VS_FLOOR),
          new Derived(
              "tpcb/check-vs-floor-hot",
              "fenced, one hot resource, against the SQL-level floor",
              "tpcb/fenced-hot",
              "tpcb/floor-hot",
              ThroughputBenchmark.TARGET_VS_FLOOR));

  static List<Section> of(
      Plan plan, Map<Contender, Rounds.Result> results, Map<String, SimpleMeterRegistry> meters) {
    String common =
        plan.describe()
            + ". One HikariCP pool of "
            + plan.clients()
            + " connections (autocommit off) serves every variant; each client thread runs"
            + " transactions back to back. Every round gives each variant one turn (rotated order),"
            + " so each ratio compares a variant with its baseline measured in the same round;"
            + " the reported ratio is the median of the per-round ratios, the spread their min and"
            + " max. Fenced variants bind the token of the transaction's branch (a lease per"
            + " branch, taken before the run) or, for the hot resource, one token shared by all"
            + " clients; FencedDataSource checks the bound tokens as it does for applications.";
    List<Section> sections = new ArrayList<>();
    sections.add(
        section(
            plan,
            ThroughputBenchmark.TPCB,
            "TPC-B-like transaction (pgbench), JDBC",
            common
                + " Transaction: pgbench's built-in TPC-B (3 UPDATEs, 1 SELECT, 1 INSERT),"
                + " with teller and account drawn from the transaction's branch. Protected tables"
                + " (row triggers): fencing.protect_rows_per_row(table, 'bid', 'protected-branch:') on all"
                + " four tables, the clients bound to protected-branch:<bid>'s token; (statement"
                + " triggers): fencing.protect(table, bench-leader-protected) on all four, the"
                + " clients bound to that resource's token, compared with the same fenced"
                + " hot-resource workload unprotected (what the protection itself costs); each"
                + " protection only during its variant's turns, on resources of their own (a"
                + " protected resource's checks leave a marker, so the fenced variants never use"
                + " them). SQL-level floor (issue 14):"
                + " unfenced, with the bare locking read the check needs sent as the same extra"
                + " statement first, SELECT 1 FROM bench_floor WHERE name = ? AND max_seen = ? FOR"
                + " SHARE on a benchmark-owned table holding each resource's token (one row per"
                + " branch, and the hot resource's row for the hot floor); check-vs-floor ratios"
                + " reuse the fenced variants' samples against the floor of the same rounds.",
            results,
            meters));
    sections.add(
        section(
            plan,
            ThroughputBenchmark.UPDATE,
            "Single-row UPDATE, JDBC",
            common
                + " Transaction: one UPDATE of a random account, then COMMIT. Protected tables:"
                + " fencing.protect_rows_per_row(table, 'bid', 'protected-branch:') during that variant's"
                + " turns, on resources of its own.",
            results,
            meters));
    sections.add(
        section(
            plan,
            ThroughputBenchmark.HIBERNATE,
            "TPC-B-like transaction as Hibernate entities",
            common
                + " Transaction: find account, teller and branch, change their balances,"
                + " persist a history entry (IDENTITY), commit: 3 SELECTs, 1 INSERT, 3 UPDATEs."
                + " @Fenced entities use one resource per branch; @Version entities add a version"
                + " column check to each UPDATE.",
            results,
            meters));
    sections.add(
        section(
            plan,
            ThroughputBenchmark.READ_ONLY,
            "Read-only transaction, JDBC",
            common
                + " Transaction: 3 SELECTs by primary key (the account's, the teller's and the"
                + " branch's balance, all of one branch), then COMMIT; no write. The target"
                + " compares the transaction with the branch's token bound against the same"
                + " transaction through the same FencedDataSource with nothing bound; the unbound"
                + " one is also compared with the plain pool.",
            results,
            meters));
    return sections;
  }

  private static Section section(
      Plan plan,
      String id,
      String title,
      String method,
      Map<Contender, Rounds.Result> results,
      Map<String, SimpleMeterRegistry> meters) {
    List<Variant> variants = new ArrayList<>();
    List<String> findings = new ArrayList<>();
    Map<String, Rounds.Result> byName = new LinkedHashMap<>();
    Map<String, Variant> byId = new LinkedHashMap<>();
    results.forEach(
        (c, r) -> {
          if (c.section().equals(id)) {
            Variant v =
                new Variant(c.id(), c.name(), "tx/s", r.samples, c.baseline(), true, c.target());
            variants.add(v);
            byName.put(c.name(), r);
            byId.put(c.id(), v);
          }
        });
    for (Derived d : DERIVED) {
      Variant of = byId.get(d.variant());
      Variant against = byId.get(d.baseline());
      if (of != null && against != null) {
        variants.add(
            new Variant(d.id(), d.name(), "tx/s", of.samples(), against.name(), true, d.target()));
      }
    }
    Section draft = new Section(id, title, method, variants, List.of(), List.of(), List.of());
    for (Variant v : variants) {
      Rounds.Result r = byName.get(v.name());
      if (r != null && r.retryable > 0) {
        findings.add(
            String.format(
                Locale.ROOT,
                "%s: %d transactions failed with a serialization,"
                    + " deadlock or optimistic-lock conflict (not counted).",
                v.id(),
                r.retryable));
      }
      Ratios.of(draft, v)
          .flatMap(ratios -> ratios.meets(v).filter(met -> !met).map(met -> ratios))
          .ifPresent(
              ratios ->
                  findings.add(
                      String.format(
                          Locale.ROOT,
                          "TARGET MISSED: %s (%s), median ratio %.3f"
                              + " (rounds %.3f–%.3f), target %.2f.",
                          v.id(),
                          v.name(),
                          ratios.median(),
                          ratios.min(),
                          ratios.max(),
                          v.target())));
    }
    Rounds.Result base = byName.values().iterator().next();
    double baseLatency = latencyMicros(base, plan.clients());
    for (Map.Entry<String, SimpleMeterRegistry> m : meters.entrySet()) {
      Timer timer = m.getValue().find("fencing.check.latency").timer();
      Variant variant = byId.get(id + "/" + m.getKey());
      if (variant == null) {
        continue;
      }
      if (timer == null || timer.count() == 0) {
        findings.add(
            variant.id() + ": its data source sent no check_tokens call in the whole run.");
        continue;
      }
      double latency = latencyMicros(byName.get(variant.name()), plan.clients());
      findings.add(
          String.format(
              Locale.ROOT,
              "%s: a transaction took %.0f µs on average (baseline %.0f"
                  + " µs, %+.0f µs); the check_tokens call, measured in the client, averaged %.0f µs"
                  + " over all this data source's checks (%d, all workloads).",
              variant.id(),
              latency,
              baseLatency,
              latency - baseLatency,
              timer.mean(TimeUnit.MICROSECONDS),
              timer.count()));
    }
    return new Section(id, title, method, variants, List.of(), List.of(), findings);
  }

  /** Mean time of one transaction of one client: clients × measured time / transactions. */
  private static double latencyMicros(Rounds.Result r, int clients) {
    return r.transactions == 0 ? Double.NaN : 1e6 * r.measuredSeconds * clients / r.transactions;
  }
}
