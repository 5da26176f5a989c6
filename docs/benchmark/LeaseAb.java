import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Lease acquire+release, two builds side by side (docs/benchmark/lease-and-growth.md, "Lease
 * acquire+release: before/after in one run"). Each build is a fencing-benchmark.jar loaded in a
 * class loader of its own, with a HikariCP pool of one connection (from that jar) on a database of
 * its own, migrated by that build; rounds alternate between the builds (which goes first too),
 * and each round runs on a new backend (the pool's connection replaced and warmed up first).
 * Per acquire+release: wall time (p50, p90), the backend's CPU (/proc/PID/schedstat: the server
 * must be local), the client thread's CPU, and WAL records, bytes and syncs (pg_stat_wal: the
 * cluster's, so run it on a private cluster nothing else uses).
 *
 * <p>usage: java docs/benchmark/LeaseAb.java URL_BASE USER JAR_A DB_A JAR_B DB_B [ROUNDS] [N]
 *
 * <p>e.g. java docs/benchmark/LeaseAb.java jdbc:postgresql://127.0.0.1:5499/ postgres
 * /tmp/before.jar lease_before benchmark/target/fencing-benchmark.jar lease_after 10 2000
 */
public class LeaseAb {
  record Variant(String name, Object pool, Object client) {}

  record Round(double p50, double p90, double backendUs, double clientUs, double walRecords,
      double walBytes, double walSyncs) {}

  public static void main(String[] args) throws Exception {
    String base = args[0];
    String user = args[1];
    int rounds = args.length > 6 ? Integer.parseInt(args[6]) : 10;
    int n = args.length > 7 ? Integer.parseInt(args[7]) : 2000;
    Variant a = open("A", Path.of(args[2]), base + args[3], user);
    Variant b = open("B", Path.of(args[4]), base + args[5], user);
    List<Round> ra = new ArrayList<>();
    List<Round> rb = new ArrayList<>();
    try (Connection stats = DriverManager.getConnection(base + args[3], user, "")) {
      for (Variant v : List.of(a, b)) {
        run(v, n, stats, "warm"); // plans cached, pool warm
      }
      for (int r = 0; r < rounds; r++) {
        boolean aFirst = r % 2 == 0;
        for (Variant v : aFirst ? List.of(a, b) : List.of(b, a)) {
          Round round = run(v, n, stats, "r" + r);
          (v == a ? ra : rb).add(round);
          System.out.printf(
              "round %d %s: p50 %.3f ms p90 %.3f ms, backend %.1f us, client %.1f us,"
                  + " WAL %.2f records %.0f bytes %.3f syncs per acquire+release%n",
              r, v.name(), round.p50(), round.p90(), round.backendUs(), round.clientUs(),
              round.walRecords(), round.walBytes(), round.walSyncs());
        }
      }
    }
    summary("A " + args[2], ra);
    summary("B " + args[4], rb);
    double[] ratios = new double[ra.size()];
    for (int i = 0; i < ratios.length; i++) {
      ratios[i] = rb.get(i).p50() / ra.get(i).p50();
    }
    Arrays.sort(ratios);
    System.out.printf(
        "p50 B/A per round: median %.3f (%.3f - %.3f)%n",
        median(ratios), ratios[0], ratios[ratios.length - 1]);
    System.exit(0);
  }

  static Variant open(String name, Path jar, String url, String user) throws Exception {
    URLClassLoader loader =
        new URLClassLoader(new URL[] {jar.toUri().toURL()}, ClassLoader.getPlatformClassLoader());
    Class<?> configClass = loader.loadClass("com.zaxxer.hikari.HikariConfig");
    Object config = configClass.getConstructor().newInstance();
    configClass.getMethod("setDriverClassName", String.class).invoke(config, "org.postgresql.Driver");
    configClass.getMethod("setJdbcUrl", String.class).invoke(config, url);
    configClass.getMethod("setUsername", String.class).invoke(config, user);
    configClass.getMethod("setMaximumPoolSize", int.class).invoke(config, 1);
    configClass.getMethod("setMinimumIdle", int.class).invoke(config, 1);
    configClass.getMethod("setPoolName", String.class).invoke(config, "lease-ab-" + name);
    Object pool =
        loader.loadClass("com.zaxxer.hikari.HikariDataSource")
            .getConstructor(configClass)
            .newInstance(config);
    Class<?> clientClass = loader.loadClass("dev.fencing.jdbc.LeaseClient");
    Object builder = clientClass.getMethod("builder", DataSource.class).invoke(null, pool);
    builder = builder.getClass().getMethod("holder", String.class).invoke(builder, "lease-ab");
    Object client = builder.getClass().getMethod("build").invoke(builder);
    return new Variant(name, pool, client);
  }

  /**
   * The pool's one connection replaced by a new one, warmed up, and its backend's pid. One backend
   * per round, not per run: a backend's CPU per operation was seen to stay 20-40% above or below
   * another's for its whole life (same build, same database, rounds interleaved), which a run on
   * one backend per build reads as a difference between the builds.
   */
  static long freshBackend(Variant v, int warmUp) throws Exception {
    Object mx = v.pool().getClass().getMethod("getHikariPoolMXBean").invoke(v.pool());
    mx.getClass().getMethod("softEvictConnections").invoke(mx); // the idle one is closed now
    long pid;
    try (Connection c = ((DataSource) v.pool()).getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      pid = rs.getLong(1);
    }
    Method tryAcquire = tryAcquire(v);
    for (int i = 0; i < warmUp; i++) { // past pgjdbc's prepareThreshold and the plan cache's five
      acquireRelease(v, tryAcquire);
    }
    // the warm-up's statistics reported now, so that the round's WAL figures hold the round alone
    flushStats((DataSource) v.pool());
    return pid;
  }

  static Method tryAcquire(Variant v) throws Exception {
    return v.client().getClass().getMethod("tryAcquire", String.class, Duration.class);
  }

  /** One acquire and release of the variant's resource. */
  static void acquireRelease(Variant v, Method tryAcquire) throws Exception {
    Optional<?> lease =
        (Optional<?>) tryAcquire.invoke(v.client(), "lease-ab-" + v.name(), Duration.ofSeconds(30));
    ((AutoCloseable) lease.orElseThrow()).close();
  }

  static Round run(Variant v, int n, Connection stats, String round) throws Exception {
    Method tryAcquire = tryAcquire(v);
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long pid = freshBackend(v, Math.max(100, n / 10));
    double[] wal0 = wal(stats);
    long cpu0 = backendCpu(pid);
    long client0 = threads.getCurrentThreadCpuTime();
    double[] ms = new double[n];
    for (int i = 0; i < n; i++) {
      long t0 = System.nanoTime();
      acquireRelease(v, tryAcquire);
      ms[i] = (System.nanoTime() - t0) / 1e6;
    }
    long client1 = threads.getCurrentThreadCpuTime();
    long cpu1 = backendCpu(pid);
    flushStats((DataSource) v.pool());
    double[] wal1 = wal(stats);
    Arrays.sort(ms);
    return new Round(
        ms[n / 2],
        ms[n * 9 / 10],
        (cpu1 - cpu0) / 1e3 / n,
        (client1 - client0) / 1e3 / n,
        (wal1[0] - wal0[0]) / n,
        (wal1[1] - wal0[1]) / n,
        (wal1[2] - wal0[2]) / n);
  }

  /**
   * Makes the lease backend (the pool's one connection) report its statistics, its WAL counters
   * included, before the round's are read: PostgreSQL 15 flushes them before it answers the query
   * after pg_stat_force_next_flush(), rather than on its own once-a-second schedule. The WAL
   * writer's syncs of asynchronous commits stay on the writer's schedule: a round's syncs may hold
   * some of the round before.
   */
  static void flushStats(DataSource pool) throws Exception {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      if (c.getMetaData().getDatabaseMajorVersion() >= 15) { // PostgreSQL 14 (the embedded one) has
        s.execute("SELECT pg_stat_force_next_flush()"); // no such call: its WAL figures lag a round
      }
    }
  }

  static double[] wal(Connection stats) throws Exception {
    try (Statement s = stats.createStatement();
        ResultSet rs = s.executeQuery("SELECT wal_records, wal_bytes, wal_sync FROM pg_stat_wal")) {
      rs.next();
      return new double[] {rs.getDouble(1), rs.getDouble(2), rs.getDouble(3)};
    }
  }

  static long backendCpu(long pid) throws Exception {
    return Long.parseLong(
        Files.readString(Path.of("/proc/" + pid + "/schedstat")).trim().split(" ")[0]);
  }

  static void summary(String name, List<Round> rounds) {
    System.out.printf(
        "%s: p50 %.3f ms (%.3f - %.3f), p90 %.3f, backend CPU %.1f us, client CPU %.1f us,"
            + " WAL records %.2f, bytes %.0f, syncs %.3f (medians over %d rounds)%n",
        name,
        median(rounds.stream().mapToDouble(Round::p50).toArray()),
        rounds.stream().mapToDouble(Round::p50).min().orElse(0),
        rounds.stream().mapToDouble(Round::p50).max().orElse(0),
        median(rounds.stream().mapToDouble(Round::p90).toArray()),
        median(rounds.stream().mapToDouble(Round::backendUs).toArray()),
        median(rounds.stream().mapToDouble(Round::clientUs).toArray()),
        median(rounds.stream().mapToDouble(Round::walRecords).toArray()),
        median(rounds.stream().mapToDouble(Round::walBytes).toArray()),
        median(rounds.stream().mapToDouble(Round::walSyncs).toArray()),
        rounds.size());
  }

  static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int m = sorted.length / 2;
    return sorted.length % 2 == 1 ? sorted[m] : (sorted[m - 1] + sorted[m]) / 2;
  }
}
