package dev.fencing.benchmark.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.benchmark.measure.Pools;
import dev.fencing.benchmark.measure.Samples;
import dev.fencing.benchmark.measure.Scale;
import dev.fencing.benchmark.report.Distribution;
import dev.fencing.benchmark.report.Section;
import dev.fencing.benchmark.report.Variant;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;

/**
 * Lease operations: acquire+release through the Java API ({@code LeaseClient.tryAcquire}, then
 * {@code Lease.close}), durable, against Curator's {@code InterProcessMutex} on an in-process
 * ZooKeeper, in interleaved rounds; and the handover time from a lease's expiry to the new holder's
 * first accepted write.
 *
 * <pre>{@code
 * List<Section> sections = LeaseBenchmark.run(dataSource, true); // quick mode
 * }</pre>
 *
 * The fence's schema must be migrated. Creates resources named {@code bench/lease/...} and {@code
 * bench/handover/...} (resources cannot be deleted) and a table {@code bench_handover}, dropped at
 * the end.
 */
public final class LeaseBenchmark {
  /** Issue 14's target for one client's acquire+release median, in ms. */
  static final double TARGET_P50_MS = 0.5;

  /** Issue 14's target for that median as a fraction of ZooKeeper's in the same rounds. */
  static final double TARGET_P50_VS_ZOOKEEPER = 0.5;

  /** The id of the fence's acquire+release latency distribution (issue 14's target). */
  public static final String P50_ID = "lease/acquire-release-p50";

  /** The id of the per-round ratio of the fence's p50 to ZooKeeper's (issue 14's target). */
  public static final String P50_VS_ZOOKEEPER_ID = "lease/acquire-release-p50-vs-zookeeper";

  private static final int WARM_UP_OPS = 30;

  private LeaseBenchmark() {}

  /**
   * Measures, in quick mode or in full.
   *
   * @return the sections "lease" (acquire+release) and "handover"
   * @throws SQLException if the database fails
   * @throws InterruptedException if interrupted
   */
  public static List<Section> run(DataSource database, boolean quick)
      throws SQLException, InterruptedException {
    return run(database, Scale.of(quick));
  }

  /**
   * Measures at {@code scale} ({@link Scale#tiny()} for tests of the harness).
   *
   * @throws SQLException if the database fails
   * @throws InterruptedException if interrupted
   */
  public static List<Section> run(DataSource database, Scale scale)
      throws SQLException, InterruptedException {
    String run = UUID.randomUUID().toString().substring(0, 8);
    List<Section> sections = new ArrayList<>();
    try (HikariDataSource pool = Pools.hikari(database, "bench-lease", scale.clients() + 1)) {
      sections.add(acquireRelease(database, pool, scale, run));
      sections.add(Handover.measure(pool, scale, run));
    }
    return sections;
  }

  /** The services compared, the fence first. etcd, once its token source exists, goes here. */
  private static List<LockService> services(DataSource pool, String run) {
    List<LockService> services = new ArrayList<>();
    services.add(new FenceLeases(pool, "bench/lease/" + run + "/"));
    services.add(call(() -> new ZooKeeperLocks("/bench/lock/" + run + "/")));
    return services;
  }

  private static Section acquireRelease(
      DataSource database, DataSource pool, Scale scale, String run)
      throws SQLException, InterruptedException {
    List<LockService> services = services(pool, run);
    try {
      Map<LockService, List<LockService.Client>> clients = new LinkedHashMap<>();
      for (LockService s : services) {
        List<LockService.Client> list = new ArrayList<>();
        for (int i = 0; i < scale.clients(); i++) {
          list.add(call(() -> s.client(clients.size() * 1000 + list.size())));
        }
        clients.put(s, list);
        for (LockService.Client c : list) {
          for (int i = 0; i < Math.min(WARM_UP_OPS, scale.latencyOps() * 2); i++) {
            perform(c::acquireRelease);
          }
        }
      }
      Map<LockService, long[]> latencies = new LinkedHashMap<>();
      Map<LockService, List<Double>> single = new LinkedHashMap<>();
      Map<LockService, List<Double>> multi = new LinkedHashMap<>();
      for (LockService s : services) {
        latencies.put(s, new long[scale.rounds() * scale.latencyOps()]);
        single.put(s, new ArrayList<>());
        multi.put(s, new ArrayList<>());
      }
      CommitProbe probe = new CommitProbe(database, scale);
      for (int round = 0; round < scale.rounds(); round++) {
        List<LockService> order = new ArrayList<>(services);
        if (round % 2 == 1) {
          java.util.Collections.reverse(order);
        }
        for (LockService s : order) {
          LockService.Client c = clients.get(s).get(0);
          long[] into = latencies.get(s);
          long start = System.nanoTime();
          for (int i = 0; i < scale.latencyOps(); i++) {
            long t0 = System.nanoTime();
            perform(c::acquireRelease);
            into[round * scale.latencyOps() + i] = System.nanoTime() - t0;
          }
          single.get(s).add(scale.latencyOps() / ((System.nanoTime() - start) / 1e9));
        }
        for (LockService s : order) {
          multi.get(s).add(throughput(clients.get(s), scale.throughputMillis()));
        }
        probe.round();
      }
      return section(scale, services, latencies, single, multi, probe);
    } finally {
      CommitProbe.drop(database);
      for (LockService s : services) {
        call(
            () -> {
              s.close();
              return null;
            });
      }
    }
  }

  /** Operations per second of all {@code clients} running at once for {@code millis}. */
  private static double throughput(List<LockService.Client> clients, long millis)
      throws InterruptedException {
    ExecutorService threads = Executors.newFixedThreadPool(clients.size());
    try {
      CyclicBarrier start = new CyclicBarrier(clients.size());
      AtomicBoolean stop = new AtomicBoolean();
      List<Future<Long>> counts = new ArrayList<>();
      long[] began = new long[1];
      for (LockService.Client c : clients) {
        counts.add(
            threads.submit(
                () -> {
                  start.await();
                  long n = 0;
                  while (!stop.get()) {
                    c.acquireRelease();
                    n++;
                  }
                  return n;
                }));
      }
      began[0] = System.nanoTime();
      TimeUnit.MILLISECONDS.sleep(millis); // the measured period itself, not a synchronisation
      stop.set(true);
      long total = 0;
      for (Future<Long> f : counts) {
        total += get(f);
      }
      return total / ((System.nanoTime() - began[0]) / 1e9);
    } finally {
      threads.shutdownNow();
    }
  }

  private static Section section(
      Scale scale,
      List<LockService> services,
      Map<LockService, long[]> latencies,
      Map<LockService, List<Double>> single,
      Map<LockService, List<Double>> multi,
      CommitProbe probe) {
    List<Variant> variants = new ArrayList<>();
    List<Distribution> distributions = new ArrayList<>();
    LockService baseline = services.get(services.size() - 1); // ZooKeeper: what users pick today
    String one = ", 1 client";
    String many = ", " + scale.clients() + " clients (distinct locks)";
    for (LockService s : services) {
      boolean isBaseline = s == baseline;
      variants.add(
          new Variant(
              "lease/" + s.slug() + "-1-client",
              s.name() + one,
              "ops/s",
              single.get(s),
              isBaseline ? null : baseline.name() + one,
              true,
              null));
      variants.add(
          new Variant(
              "lease/" + s.slug() + "-many-clients",
              s.name() + many,
              "ops/s",
              multi.get(s),
              isBaseline ? null : baseline.name() + many,
              true,
              null));
    }
    // the medians round by round: "<= 0.5x ZooKeeper's in the same rounds" is their ratio
    String p50 = " acquire+release p50 of the round, 1 client";
    for (LockService s : services) {
      boolean isBaseline = s == baseline;
      variants.add(
          new Variant(
              isBaseline ? "lease/" + s.slug() + "-p50" : P50_VS_ZOOKEEPER_ID,
              s.name() + p50,
              "ms",
              roundMedians(latencies.get(s), scale),
              isBaseline ? null : baseline.name() + p50,
              false,
              isBaseline ? null : TARGET_P50_VS_ZOOKEEPER));
    }
    for (LockService s : services) {
      distributions.add(
          Samples.millis(
              s instanceof FenceLeases ? P50_ID : "lease/" + s.slug() + "-acquire-release",
              s.name() + " acquire+release" + one,
              latencies.get(s),
              s instanceof FenceLeases ? TARGET_P50_MS : null));
    }
    distributions.add(probe.durable());
    distributions.add(probe.async());
    Distribution fence = distributions.get(0);
    Distribution zk = distributions.get(1);
    List<String> findings = new ArrayList<>();
    findings.add(
        String.format(
            Locale.ROOT,
            "Fencing lease acquire+release, 1 client: p50 %.2f ms (target <= %.1f ms: %s);"
                + " ZooKeeper in the same rounds: p50 %.2f ms (target: the fence's <= %.1fx"
                + " ZooKeeper's, round by round: %s).",
            fence.p50(),
            TARGET_P50_MS,
            fence.p50() <= TARGET_P50_MS ? "met" : "MISSED",
            zk.p50(),
            TARGET_P50_VS_ZOOKEEPER,
            Samples.medianRatio(
                        roundMedians(latencies.get(services.get(0)), scale),
                        roundMedians(latencies.get(baseline), scale))
                    <= TARGET_P50_VS_ZOOKEEPER
                ? "met"
                : "MISSED"));
    findings.add(
        String.format(
            Locale.ROOT,
            "A durable commit (WAL flush) costs p50 %.2f ms here against %.2f ms for an"
                + " asynchronous one: the acquisition must flush once (its token is issued only"
                + " when durable), and ZooKeeper flushes its transaction log for the lock node's"
                + " create and its delete.",
            probe.durable().p50(),
            probe.async().p50()));
    findings.addAll(LeaseFindings.whereTheTimeGoes());
    String method =
        String.format(
            Locale.ROOT,
            "%s mode, %d rounds. Each round, in alternating order: one client doing %d"
                + " acquire+release operations back to back, each timed (latency and 1-client"
                + " throughput); then %d clients on %d distinct locks for %d ms each (throughput)."
                + " Fencing: LeaseClient.tryAcquire(resource, 30 s) then Lease.close() (release),"
                + " through a HikariCP pool of %d connections, synchronous_commit forced on for"
                + " the acquisition by the fence. ZooKeeper: Curator InterProcessMutex"
                + " acquire/release on an in-process TestingServer (standalone, fsync on), one"
                + " session per client. Warm-up of up to %d operations per client first. A"
                + " commit probe (1-row INSERT, synchronous_commit on vs off) runs in each round."
                + " Targets: the fence's p50 over all rounds (lease/acquire-release-p50), and the"
                + " median over the rounds of its per-round p50 divided by ZooKeeper's per-round"
                + " p50 (lease/acquire-release-p50-vs-zookeeper; lower is better).",
            scale.name(),
            scale.rounds(),
            scale.latencyOps(),
            scale.clients(),
            scale.clients(),
            scale.throughputMillis(),
            scale.clients() + 1,
            WARM_UP_OPS);
    return new Section(
        "lease",
        "Lease acquire+release: fencing vs ZooKeeper",
        method,
        variants,
        distributions,
        List.of(),
        findings);
  }

  /** The median latency (ms) of each round's operations. */
  private static List<Double> roundMedians(long[] nanos, Scale scale) {
    List<Double> medians = new ArrayList<>();
    for (int round = 0; round < scale.rounds(); round++) {
      long[] slice =
          java.util.Arrays.copyOfRange(
              nanos, round * scale.latencyOps(), (round + 1) * scale.latencyOps());
      medians.add(Samples.millis("x/x", "round", slice, null).p50());
    }
    return medians;
  }

  // --- exceptions ------------------------------------------------------------------------------

  @FunctionalInterface
  interface Work<T> {
    T run() throws Exception;
  }

  @FunctionalInterface
  interface Action {
    void run() throws Exception;
  }

  private static void perform(Action action) {
    call(
        () -> {
          action.run();
          return null;
        });
  }

  /** Runs work that may throw anything (Curator declares Exception); checked ones are wrapped. */
  static <T> T call(Work<T> work) {
    try {
      return work.run();
    } catch (RuntimeException e) {
      throw e;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    } catch (Exception e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  private static <T> T get(Future<T> f) throws InterruptedException {
    try {
      return f.get();
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException("a client failed: " + e.getCause(), e.getCause());
    }
  }

  /** One statement on a connection of its own. */
  static void execute(DataSource database, String sql) throws SQLException {
    try (Connection c = database.getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }
}
