package dev.fencing.benchmark.throughput;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.benchmark.report.Ratios;
import dev.fencing.benchmark.report.Section;
import dev.fencing.benchmark.report.Variant;
import dev.fencing.benchmark.throughput.BankEntities.FencedAccount;
import dev.fencing.benchmark.throughput.BankEntities.FencedBranch;
import dev.fencing.benchmark.throughput.BankEntities.FencedHistory;
import dev.fencing.benchmark.throughput.BankEntities.FencedTeller;
import dev.fencing.benchmark.throughput.BankEntities.PlainAccount;
import dev.fencing.benchmark.throughput.BankEntities.PlainBranch;
import dev.fencing.benchmark.throughput.BankEntities.PlainHistory;
import dev.fencing.benchmark.throughput.BankEntities.PlainTeller;
import dev.fencing.benchmark.throughput.BankEntities.VersionedAccount;
import dev.fencing.benchmark.throughput.BankEntities.VersionedBranch;
import dev.fencing.benchmark.throughput.BankEntities.VersionedTeller;
import dev.fencing.benchmark.throughput.Rounds.Contender;
import dev.fencing.benchmark.throughput.Workloads.Pick;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.FencingToken;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.hibernate.SessionFactory;
import org.hibernate.jpa.HibernatePersistenceConfiguration;
import org.jspecify.annotations.Nullable;

/**
 * What the fence costs in throughput: pgbench's TPC-B-like transaction and a single-row update,
 * {@link Plan#clients()} clients over one HikariCP pool, unfenced against fenced ({@code
 * FencedDataSource} with one resource per branch, with one hot resource, on protected tables),
 * against Hibernate with and without {@code @Fenced}, and against what applications do without a
 * fence ({@code @Version}, a lock row taken {@code FOR UPDATE}) — all in the same rounds on the
 * same tables.
 */
public final class ThroughputBenchmark {
  static final String TPCB = "tpcb";
  static final String UPDATE = "update";
  static final String HIBERNATE = "hibernate";
  static final String UNFENCED = "unfenced";
  static final String HIBERNATE_UNFENCED = "Hibernate, unfenced";

  private ThroughputBenchmark() {}

  /** Runs the quick or the full {@link Plan} on {@code database} (needs the fence migrated). */
  public static List<Section> run(DataSource database, boolean quick) throws Exception {
    return run(database, quick ? Plan.quick() : Plan.full());
  }

  /** Runs {@code plan} on {@code database}; creates and finally drops its own tables. */
  @SuppressWarnings("try")
  public static List<Section> run(DataSource database, Plan plan) throws Exception {
    Bank bank = new Bank(database, plan);
    bank.create();
    ExecutorService threads = Executors.newFixedThreadPool(plan.clients());
    HikariDataSource pool = pool(database, plan);
    List<SessionFactory> factories = new ArrayList<>();
    try {
      Map<String, SimpleMeterRegistry> meters = new LinkedHashMap<>();
      SessionFactory plainOrm = factories(factories, pool, BankEntities.PLAIN);
      SessionFactory versionedOrm = factories(factories, pool, BankEntities.VERSIONED);
      SessionFactory fencedOrm =
          factories(factories, fenced(pool, meters, "hibernate"), BankEntities.FENCED);
      FencedDataSource fenced1000 = fenced(pool, meters, "resources");
      FencedDataSource fencedHot = fenced(pool, meters, "hot");
      FencedDataSource fencedProtected = fenced(pool, meters, "protected");
      String many = String.format(Locale.ROOT, "%,d resources", plan.branches());

      List<Contender> contenders = new ArrayList<>();
      for (String section : List.of(TPCB, UPDATE)) {
        boolean tpcb = section.equals(TPCB);
        Double hotTarget = tpcb ? 0.90 : null;
        Double target = tpcb ? 0.95 : null;
        contenders.add(
            jdbc(section, UNFENCED, null, null, plan, pool, null, null, tpcb, null, null));
        contenders.add(
            jdbc(
                section,
                "fenced, " + many,
                UNFENCED,
                target,
                plan,
                fenced1000,
                bank::branchToken,
                null,
                tpcb,
                null,
                null));
        contenders.add(
            jdbc(
                section,
                "fenced, one hot resource (leader)",
                UNFENCED,
                hotTarget,
                plan,
                fencedHot,
                bid -> bank.hotToken(),
                null,
                tpcb,
                null,
                null));
        contenders.add(
            jdbc(
                section,
                "protected tables (row triggers), fenced, " + many,
                UNFENCED,
                target,
                plan,
                fencedProtected,
                bank::branchToken,
                null,
                tpcb,
                bank::protect,
                bank::unprotect));
        contenders.add(
            jdbc(
                section,
                "lock row FOR UPDATE, per branch",
                UNFENCED,
                null,
                plan,
                pool,
                null,
                bid -> "branch:" + bid,
                tpcb,
                null,
                null));
        if (tpcb) {
          contenders.add(
              jdbc(
                  section,
                  "lock row FOR UPDATE, one hot row",
                  UNFENCED,
                  null,
                  plan,
                  pool,
                  null,
                  bid -> Bank.HOT,
                  true,
                  null,
                  null));
        }
      }
      contenders.add(
          new Contender(
              HIBERNATE,
              HIBERNATE_UNFENCED,
              null,
              null,
              r ->
                  Workloads.tpcb(
                      plainOrm,
                      PlainAccount.class,
                      PlainTeller.class,
                      PlainBranch.class,
                      PlainHistory::new,
                      Pick.random(plan, r)),
              null,
              null));
      contenders.add(
          new Contender(
              HIBERNATE,
              "Hibernate, @Fenced, " + many,
              HIBERNATE_UNFENCED,
              0.95,
              r -> {
                Pick p = Pick.random(plan, r);
                try (FencingScope scope = Fencing.bind(bank.branchToken(p.bid()))) {
                  Workloads.tpcb(
                      fencedOrm,
                      FencedAccount.class,
                      FencedTeller.class,
                      FencedBranch.class,
                      FencedHistory::new,
                      p);
                }
              },
              null,
              null));
      contenders.add(
          new Contender(
              HIBERNATE,
              "Hibernate, @Version optimistic locking",
              HIBERNATE_UNFENCED,
              null,
              r ->
                  Workloads.tpcb(
                      versionedOrm,
                      VersionedAccount.class,
                      VersionedTeller.class,
                      VersionedBranch.class,
                      PlainHistory::new,
                      Pick.random(plan, r)),
              null,
              null));

      Map<Contender, Rounds.Result> results = new Rounds(plan, threads).run(contenders);
      return sections(plan, results, meters);
    } finally {
      factories.forEach(SessionFactory::close);
      pool.close();
      threads.shutdownNow();
      bank.drop();
    }
  }

  /** Resolves the token (or none) and the lock row (or none) of a transaction's branch. */
  private interface PerBranch<T> {
    T of(int bid);
  }

  @SuppressWarnings("try")
  private static Contender jdbc(
      String section,
      String name,
      @Nullable String baseline,
      @Nullable Double target,
      Plan plan,
      DataSource database,
      @Nullable PerBranch<FencingToken> token,
      @Nullable PerBranch<String> lock,
      boolean tpcb,
      Rounds.@Nullable Hook before,
      Rounds.@Nullable Hook after) {
    Rounds.Client client =
        r -> {
          Pick p = Pick.random(plan, r);
          String lockRow = lock == null ? null : lock.of(p.bid());
          if (token == null) {
            transaction(database, p, lockRow, tpcb);
            return;
          }
          try (FencingScope scope = Fencing.bind(token.of(p.bid()))) {
            transaction(database, p, lockRow, tpcb);
          }
        };
    return new Contender(section, name, baseline, target, client, before, after);
  }

  private static void transaction(DataSource database, Pick p, @Nullable String lock, boolean tpcb)
      throws java.sql.SQLException {
    if (tpcb) {
      Workloads.tpcb(database, p, lock);
    } else {
      Workloads.update(database, p, lock);
    }
  }

  private static HikariDataSource pool(DataSource database, Plan plan) {
    HikariConfig config = new HikariConfig();
    config.setDataSource(database);
    config.setMaximumPoolSize(plan.clients());
    config.setMinimumIdle(plan.clients());
    config.setAutoCommit(false);
    config.setPoolName("fencing-benchmark");
    return new HikariDataSource(config);
  }

  private static FencedDataSource fenced(
      DataSource pool, Map<String, SimpleMeterRegistry> meters, String key) {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    meters.put(key, registry);
    return FencedDataSource.builder(pool).meterRegistry(registry).build();
  }

  private static SessionFactory factories(
      List<SessionFactory> all, DataSource dataSource, Class<?>[] entities) {
    SessionFactory factory =
        new HibernatePersistenceConfiguration("fencing-benchmark-" + all.size())
            .managedClasses(entities)
            .property("hibernate.connection.datasource", dataSource)
            .property("hibernate.connection.provider_disables_autocommit", true)
            .property("hibernate.default_schema", Bank.SCHEMA)
            .property("hibernate.hbm2ddl.auto", "none")
            .createEntityManagerFactory();
    all.add(factory);
    return factory;
  }

  private static List<Section> sections(
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
            + " clients; FencedDataSource sends check_tokens before the first write of each"
            + " transaction. Protected tables: fencing.protect_rows(table, 'bid', 'branch:') on all"
            + " four tables during that variant's turns only.";
    List<Section> sections = new ArrayList<>();
    sections.add(
        section(
            plan,
            TPCB,
            "TPC-B-like transaction (pgbench), JDBC",
            common
                + " Transaction: pgbench's built-in TPC-B (3 UPDATEs, 1 SELECT, 1 INSERT),"
                + " with teller and account drawn from the transaction's branch.",
            results,
            meters));
    sections.add(
        section(
            plan,
            UPDATE,
            "Single-row UPDATE, JDBC",
            common + " Transaction: one UPDATE of a random account, then COMMIT.",
            results,
            meters));
    sections.add(
        section(
            plan,
            HIBERNATE,
            "TPC-B-like transaction as Hibernate entities",
            common
                + " Transaction: find account, teller and branch, change their balances,"
                + " persist a history entry (IDENTITY), commit: 3 SELECTs, 1 INSERT, 3 UPDATEs."
                + " @Fenced entities use one resource per branch; @Version entities add a version"
                + " column check to each UPDATE.",
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
    results.forEach(
        (c, r) -> {
          if (c.section().equals(id)) {
            variants.add(new Variant(c.name(), "tx/s", r.samples, c.baseline(), true, c.target()));
            byName.put(c.name(), r);
          }
        });
    Section draft = new Section(id, title, method, variants, List.of(), List.of(), List.of());
    for (Variant v : variants) {
      Rounds.Result r = byName.get(v.name());
      if (r.retryable > 0) {
        findings.add(
            String.format(
                Locale.ROOT,
                "%s: %d transactions failed with a serialization,"
                    + " deadlock or optimistic-lock conflict (not counted).",
                v.name(),
                r.retryable));
      }
      Ratios.of(draft, v)
          .flatMap(ratios -> ratios.meets(v).filter(met -> !met).map(met -> ratios))
          .ifPresent(
              ratios ->
                  findings.add(
                      String.format(
                          Locale.ROOT,
                          "TARGET MISSED: %s, median ratio %.3f"
                              + " (rounds %.3f–%.3f), target %.2f.",
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
      if (timer == null || timer.count() == 0) {
        continue;
      }
      String variant = variantFor(m.getKey(), byName.keySet());
      if (variant == null) {
        continue;
      }
      double latency = latencyMicros(byName.get(variant), plan.clients());
      findings.add(
          String.format(
              Locale.ROOT,
              "%s: a transaction took %.0f µs on average (baseline %.0f"
                  + " µs, %+.0f µs); the check_tokens call, measured in the client, averaged %.0f µs"
                  + " over all this data source's checks (%d, all workloads).",
              variant,
              latency,
              baseLatency,
              latency - baseLatency,
              timer.mean(TimeUnit.MICROSECONDS),
              timer.count()));
    }
    return new Section(id, title, method, variants, List.of(), List.of(), findings);
  }

  /** The fenced data source (by meter key) behind a variant of this section, or null. */
  private static @Nullable String variantFor(String key, java.util.Set<String> names) {
    for (String name : names) {
      boolean match =
          switch (key) {
            case "resources" -> name.startsWith("fenced, ") && !name.contains("hot");
            case "hot" -> name.startsWith("fenced, one hot");
            case "protected" -> name.startsWith("protected tables");
            case "hibernate" -> name.startsWith("Hibernate, @Fenced");
            default -> false;
          };
      if (match) {
        return name;
      }
    }
    return null;
  }

  /** Mean time of one transaction of one client: clients × measured time / transactions. */
  private static double latencyMicros(Rounds.Result r, int clients) {
    return r.transactions == 0 ? Double.NaN : 1e6 * r.measuredSeconds * clients / r.transactions;
  }
}
