package dev.fencing.benchmark.throughput;

import dev.fencing.benchmark.report.Ratios;
import dev.fencing.benchmark.report.Section;
import dev.fencing.benchmark.report.Variant;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/** The throughput benchmark's results as report sections, with their methods and findings. */
final class ThroughputSections {
  /** The name of the floor variants, before their resource count. */
  static final String FLOOR = "SQL-level floor (bare FOR SHARE read), unfenced";

  private ThroughputSections() {}

  static List<Section> of(
      Plan plan, Rounds.Outcome results, Map<String, SimpleMeterRegistry> meters) {
    String common =
        plan.describe()
            + ". One HikariCP pool of "
            + plan.clients()
            + " connections (autocommit off) serves every variant; each client thread runs"
            + " transactions back to back. Each variant is measured next to its own baseline: in"
            + " every round each comparison takes one turn of four adjacent slices (ABBA, BAAB in"
            + " odd rounds; pairs in an order rotated per round), so the machine's load at that"
            + " moment falls on both and a linear drift within the turn cancels; a round's ratio is"
            + " the variant's throughput over its two slices against the baseline's over the two"
            + " around them (baselineSamples), the reported ratio the median over the rounds, the"
            + " spread their min and max. A baseline's own samples are its throughput over all its"
            + " slices of a round. Fenced variants bind the token of the transaction's branch (a lease per"
            + " branch, taken before the run) or, for the hot resource, one token shared by all"
            + " clients; FencedDataSource checks the bound tokens as it does for applications.";
    List<Section> sections = new ArrayList<>();
    add(
        sections,
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
                + " come from turns of the fenced variant next to the floor variant.",
            results,
            meters));
    add(
        sections,
        section(
            plan,
            ThroughputBenchmark.UPDATE,
            "Single-row UPDATE, JDBC",
            common
                + " Transaction: one UPDATE of a random account, then COMMIT. Protected tables:"
                + " fencing.protect_rows_per_row(table, 'bid', 'protected-branch:') during that"
                + " variant's slices, on resources of its own. SQL-level floor: unfenced, the bare"
                + " locking read SELECT 1 FROM bench_floor WHERE name = ? AND max_seen = ? FOR"
                + " SHARE and the UPDATE as one multi-statement PreparedStatement, in one round"
                + " trip as the fence carries its check: what any check that reads the row costs"
                + " on the smallest transaction.",
            results,
            meters));
    add(
        sections,
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
    add(
        sections,
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

  /** Adds {@code section} unless none of its variants was measured (not selected). */
  private static void add(List<Section> sections, @Nullable Section section) {
    if (section != null) {
      sections.add(section);
    }
  }

  private static @Nullable Section section(
      Plan plan,
      String id,
      String title,
      String method,
      Rounds.Outcome results,
      Map<String, SimpleMeterRegistry> meters) {
    List<Variant> variants = new ArrayList<>();
    List<String> findings = new ArrayList<>();
    Map<String, Rounds.Result> byName = new LinkedHashMap<>();
    Map<String, Variant> byId = new LinkedHashMap<>();
    Map<String, Rounds.Pair> pairs = new LinkedHashMap<>();
    results.pairs().keySet().forEach(p -> pairs.put(p.id(), p));
    results
        .contenders()
        .forEach(
            (c, r) -> {
              if (c.section().equals(id)) {
                Rounds.Pair own = pairs.get(c.id());
                Variant v =
                    own == null
                        ? new Variant(c.id(), c.name(), "tx/s", r.samples, null, true, null)
                        : paired(own, results.pairs().get(own));
                variants.add(v);
                byName.put(c.name(), r);
                byId.put(c.id(), v);
              }
            });
    results
        .pairs()
        .forEach(
            (p, r) -> {
              if (p.variant().section().equals(id) && !byId.containsKey(p.id())) {
                variants.add(paired(p, r));
              }
            });
    if (variants.isEmpty()) {
      return null;
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

  /** A pair's variant: its throughput in each round's turn, against its baseline's in that turn. */
  private static Variant paired(Rounds.Pair p, Rounds.PairResult r) {
    return new Variant(
        p.id(), p.name(), "tx/s", r.variant, p.baseline().name(), true, p.target(), r.baseline);
  }

  /** Mean time of one transaction of one client: clients × measured time / transactions. */
  private static double latencyMicros(Rounds.Result r, int clients) {
    return r.transactions == 0 ? Double.NaN : 1e6 * r.measuredSeconds * clients / r.transactions;
  }
}
