package dev.fencing.benchmark.throughput;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.benchmark.report.Section;
import dev.fencing.benchmark.throughput.Rounds.Contender;
import dev.fencing.benchmark.throughput.Workloads.Pick;
import dev.fencing.benchmark.throughput.Workloads.Preamble;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Predicate;
import javax.sql.DataSource;
import org.hibernate.SessionFactory;
import org.hibernate.jpa.HibernatePersistenceConfiguration;
import org.jspecify.annotations.Nullable;

/**
 * What the fence costs in throughput: pgbench's TPC-B-like transaction, a single-row update and a
 * read-only transaction, {@link Plan#clients()} clients over one HikariCP pool, unfenced against
 * fenced ({@code FencedDataSource} with one resource per branch, with one hot resource, on tables
 * protected by row or statement triggers), against the SQL-level floor of the check (the bare
 * locking read it needs), against Hibernate with and without {@code @Fenced}, and against what
 * applications do without a fence ({@code @Version}, a lock row taken {@code FOR UPDATE}) — all in
 * the same rounds on the same tables. Every variant has a stable id ({@code tpcb/fenced-1000}); the
 * ids the issues' targets name are constants here.
 */
public final class ThroughputBenchmark {
  static final String TPCB = "tpcb";
  static final String UPDATE = "update";
  static final String HIBERNATE = "hibernate";
  static final String READ_ONLY = "read-only";
  static final String UNFENCED = "unfenced";
  static final String HIBERNATE_UNFENCED = "Hibernate, unfenced";

  /** Issue 13: single-row UPDATE, fenced with 1,000 resources, at least this of unfenced. */
  static final double TARGET_UPDATE = 0.85;

  /** Issue 13: TPC-B-like, fenced with 1,000 resources, at least this of unfenced. */
  static final double TARGET_TPCB = 0.95;

  /** Issue 13: Hibernate {@code @Fenced} at least this of Hibernate unfenced. */
  static final double TARGET_HIBERNATE = 0.95;

  /** Issue 13: a read-only transaction with a token bound, at least this of the same unbound. */
  static final double TARGET_READ_ONLY = 0.95;

  /** Issue 14: TPC-B-like, one hot resource, at least this of unfenced. */
  static final double TARGET_HOT = 0.93;

  /** Issue 14: protected tables (row triggers), at least this of unfenced. */
  static final double TARGET_PROTECTED_ROWS = 0.90;

  /** Issue 14: protected tables (statement triggers), at least this of the same unprotected. */
  static final double TARGET_PROTECTED_STATEMENT = 0.97;

  /** Issue 14: the product's check within 3% of the SQL-level floor. */
  static final double TARGET_VS_FLOOR = 0.97;

  private ThroughputBenchmark() {}

  /** Runs the quick or the full {@link Plan} on {@code database} (needs the fence migrated). */
  public static List<Section> run(DataSource database, boolean quick) throws Exception {
    return run(database, quick ? Plan.quick() : Plan.full());
  }

  /** The ids of the sections it reports, in order. */
  public static final List<String> SECTIONS = List.of(TPCB, UPDATE, HIBERNATE, READ_ONLY);

  /** Runs {@code plan} on {@code database}; creates and finally drops its own tables. */
  public static List<Section> run(DataSource database, Plan plan) throws Exception {
    return run(database, plan, section -> true);
  }

  /**
   * Runs the variants of the sections {@code selected} accepts ({@link #SECTIONS}) of {@code plan}
   * on {@code database}, and reports those sections alone; with none of them selected, it sets
   * nothing up and reports nothing.
   */
  @SuppressWarnings("try")
  public static List<Section> run(DataSource database, Plan plan, Predicate<String> selected)
      throws Exception {
    if (SECTIONS.stream().noneMatch(selected)) {
      return List.of(); // --sections names none of ours: no bank to seed, no leases to take
    }
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
          factories(factories, fenced(pool, meters, "fenced"), BankEntities.FENCED);
      FencedDataSource fenced1000 = fenced(pool, meters, "fenced-1000");
      FencedDataSource fencedHot = fenced(pool, meters, "fenced-hot");
      FencedDataSource fencedRows = fenced(pool, meters, "protected-row");
      FencedDataSource fencedStatement = fenced(pool, meters, "protected-statement");
      FencedDataSource fencedReads = fenced(pool, meters, "bound-1000");
      String many = String.format(Locale.ROOT, "%,d resources", plan.branches());
      String hot = "fenced, one hot resource (leader)";

      List<Contender> contenders = new ArrayList<>();
      for (String section : List.of(TPCB, UPDATE)) {
        boolean tpcb = section.equals(TPCB);
        Jdbc jdbc = new Jdbc(section, plan, tpcb);
        contenders.add(jdbc.contender("unfenced", UNFENCED, null, null, pool, null, null));
        contenders.add(
            jdbc.contender(
                "fenced-1000",
                "fenced, " + many,
                UNFENCED,
                tpcb ? TARGET_TPCB : TARGET_UPDATE,
                fenced1000,
                bank::branchToken,
                null));
        contenders.add(
            jdbc.contender(
                "fenced-hot",
                hot,
                UNFENCED,
                tpcb ? TARGET_HOT : null,
                fencedHot,
                bid -> bank.hotToken(),
                null));
        contenders.add(
            jdbc.contender(
                    "protected-row",
                    "protected tables (row triggers), fenced, " + many,
                    UNFENCED,
                    tpcb ? TARGET_PROTECTED_ROWS : null,
                    fencedRows,
                    bank::protectedBranchToken,
                    null)
                .around(bank::protect, bank::unprotect));
        if (tpcb) {
          contenders.add(
              jdbc.contender(
                      "protected-statement",
                      "protected tables (statement triggers, one resource for all four), fenced,"
                          + " one hot resource",
                      hot,
                      TARGET_PROTECTED_STATEMENT,
                      fencedStatement,
                      bid -> bank.protectedHotToken(),
                      null)
                  .around(bank::protectByHotResource, bank::unprotect));
          contenders.add(
              jdbc.contender(
                  "floor-1000",
                  ThroughputSections.FLOOR + ", " + many,
                  UNFENCED,
                  null,
                  pool,
                  null,
                  bid -> Workloads.floor(bank.branchToken(bid))));
          contenders.add(
              jdbc.contender(
                  "floor-hot",
                  ThroughputSections.FLOOR + ", one hot resource",
                  UNFENCED,
                  null,
                  pool,
                  null,
                  bid -> Workloads.floor(bank.hotToken())));
        }
        if (!tpcb) {
          contenders.add(
              new Contender(
                  UPDATE + "/floor-1000",
                  ThroughputSections.FLOOR + ", in the UPDATE's round trip, " + many,
                  UNFENCED,
                  null,
                  r -> {
                    Pick p = Pick.random(plan, r);
                    Workloads.updateAfterFloor(pool, p, bank.branchToken(p.bid()));
                  },
                  null,
                  null));
        }
        contenders.add(
            jdbc.contender(
                "lock-row-per-branch",
                "lock row FOR UPDATE, per branch",
                UNFENCED,
                null,
                pool,
                null,
                bid -> Workloads.lockRow("branch:" + bid)));
        if (tpcb) {
          contenders.add(
              jdbc.contender(
                  "lock-row-hot",
                  "lock row FOR UPDATE, one hot row",
                  UNFENCED,
                  null,
                  pool,
                  null,
                  bid -> Workloads.lockRow(Bank.HOT)));
        }
      }
      contenders.add(
          new Contender(
              HIBERNATE + "/unfenced",
              HIBERNATE_UNFENCED,
              null,
              null,
              r -> Workloads.tpcb(plainOrm, BankEntities.PLAIN_ROWS, Pick.random(plan, r)),
              null,
              null));
      contenders.add(
          new Contender(
              HIBERNATE + "/fenced",
              "Hibernate, @Fenced, " + many,
              HIBERNATE_UNFENCED,
              TARGET_HIBERNATE,
              r -> {
                Pick p = Pick.random(plan, r);
                try (FencingScope scope = Fencing.bind(bank.branchToken(p.bid()))) {
                  Workloads.tpcb(fencedOrm, BankEntities.FENCED_ROWS, p);
                }
              },
              null,
              null));
      contenders.add(
          new Contender(
              HIBERNATE + "/floor-1000",
              "Hibernate, " + ThroughputSections.FLOOR + ", " + many,
              HIBERNATE_UNFENCED,
              null,
              r -> {
                Pick p = Pick.random(plan, r);
                Workloads.tpcb(
                    plainOrm,
                    BankEntities.PLAIN_ROWS,
                    p,
                    Workloads.floor(bank.branchToken(p.bid())));
              },
              null,
              null));
      contenders.add(
          new Contender(
              HIBERNATE + "/version",
              "Hibernate, @Version optimistic locking",
              HIBERNATE_UNFENCED,
              null,
              r -> Workloads.tpcb(versionedOrm, BankEntities.VERSIONED_ROWS, Pick.random(plan, r)),
              null,
              null));
      String unbound = "3 SELECTs through FencedDataSource, no token bound";
      contenders.add(
          new Contender(
              READ_ONLY + "/unfenced",
              "3 SELECTs, unfenced",
              null,
              null,
              r -> Workloads.readOnly(pool, Pick.random(plan, r)),
              null,
              null));
      contenders.add(
          new Contender(
              READ_ONLY + "/unbound",
              unbound,
              "3 SELECTs, unfenced",
              null,
              r -> Workloads.readOnly(fencedReads, Pick.random(plan, r)),
              null,
              null));
      contenders.add(
          new Contender(
              READ_ONLY + "/bound-1000",
              "3 SELECTs through FencedDataSource, the branch's token bound, " + many,
              unbound,
              TARGET_READ_ONLY,
              r -> {
                Pick p = Pick.random(plan, r);
                try (FencingScope scope = Fencing.bind(bank.branchToken(p.bid()))) {
                  Workloads.readOnly(fencedReads, p);
                }
              },
              null,
              null));

      contenders.removeIf(c -> !selected.test(c.section()));
      if (contenders.isEmpty()) {
        return List.of();
      }
      List<Rounds.Pair> pairs = pairs(contenders, many);
      Rounds.Outcome outcome = new Rounds(plan, threads).run(contenders, pairs);
      return ThroughputSections.of(plan, outcome, meters);
    } finally {
      factories.forEach(SessionFactory::close);
      pool.close();
      threads.shutdownNow();
      bank.drop();
    }
  }

  /**
   * Every contender with a baseline against it, under its own id, then the product's check against
   * the SQL-level floor (issue 14: within 3%): {@code tpcb/fenced-1000} and {@code tpcb/fenced-hot}
   * measured next to {@code tpcb/floor-1000} and {@code tpcb/floor-hot}.
   */
  private static List<Rounds.Pair> pairs(List<Contender> contenders, String many) {
    Map<String, Contender> byId = new LinkedHashMap<>();
    contenders.forEach(c -> byId.put(c.id(), c));
    List<Rounds.Pair> pairs = new ArrayList<>();
    for (Contender c : contenders) {
      if (c.baseline() != null) {
        Contender baseline =
            contenders.stream()
                .filter(b -> b.section().equals(c.section()) && b.name().equals(c.baseline()))
                .findFirst()
                .orElseThrow(
                    () -> new IllegalStateException(c.id() + ": no baseline " + c.baseline()));
        pairs.add(Rounds.Pair.of(c, baseline));
      }
    }
    if (!byId.containsKey(TPCB + "/fenced-1000")) {
      return pairs; // the tpcb section is not measured
    }
    pairs.add(
        new Rounds.Pair(
            TPCB + "/check-vs-floor-1000",
            "fenced, " + many + ", against the SQL-level floor",
            byId.get(TPCB + "/fenced-1000"),
            byId.get(TPCB + "/floor-1000"),
            TARGET_VS_FLOOR));
    pairs.add(
        new Rounds.Pair(
            TPCB + "/check-vs-floor-hot",
            "fenced, one hot resource, against the SQL-level floor",
            byId.get(TPCB + "/fenced-hot"),
            byId.get(TPCB + "/floor-hot"),
            TARGET_VS_FLOOR));
    return pairs;
  }

  /** Resolves what a transaction of branch {@code bid} needs: its token, its preamble. */
  private interface PerBranch<T> {
    T of(int bid);
  }

  /** The JDBC contenders of one section (TPC-B-like or single-row UPDATE). */
  private record Jdbc(String section, Plan plan, boolean tpcb) {
    @SuppressWarnings("try")
    Contender contender(
        String slug,
        String name,
        @Nullable String baseline,
        @Nullable Double target,
        DataSource database,
        @Nullable PerBranch<FencingToken> token,
        @Nullable PerBranch<Preamble> preamble) {
      Rounds.Client client =
          r -> {
            Pick p = Pick.random(plan, r);
            Preamble first = preamble == null ? null : preamble.of(p.bid());
            if (token == null) {
              transaction(database, p, first);
              return;
            }
            try (FencingScope scope = Fencing.bind(token.of(p.bid()))) {
              transaction(database, p, first);
            }
          };
      return new Contender(section + "/" + slug, name, baseline, target, client, null, null);
    }

    private void transaction(DataSource database, Pick p, @Nullable Preamble first)
        throws java.sql.SQLException {
      if (tpcb) {
        Workloads.tpcb(database, p, first);
      } else {
        Workloads.update(database, p, first);
      }
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

  /** A fenced view of {@code pool} whose check latency is recorded under {@code slug}. */
  private static FencedDataSource fenced(
      DataSource pool, Map<String, SimpleMeterRegistry> meters, String slug) {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    meters.put(slug, registry);
    return FencedDataSource.builder(pool).meterRegistry(registry).build();
  }

  /**
   * A Hibernate session factory of {@code entities} on {@code dataSource}, added to {@code all}.
   */
  static SessionFactory factories(
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
}
