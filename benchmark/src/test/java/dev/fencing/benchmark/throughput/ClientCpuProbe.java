package dev.fencing.benchmark.throughput;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.benchmark.throughput.Workloads.Pick;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.testing.TestDatabaseExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;
import org.hibernate.SessionFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A measurement tool, not part of the test suite (its name matches no surefire include; run it by
 * name, see {@code docs/benchmark/client-cpu.md}): the client CPU and the bytes allocated per
 * transaction by the benchmark's own transactions ({@link Workloads}) on one thread with one pooled
 * connection (HikariCP, as the benchmark), plain, through {@link FencedDataSource} with no token
 * bound, and carrying the branch's token; and the Hibernate TPC-B-like transaction plain and
 * {@code @Fenced}. Variants alternate in rounds; it prints the medians. The thread's own CPU
 * ({@code ThreadMXBean}) leaves out the JIT, GC and the server, so it is steady on a loaded
 * machine.
 */
class ClientCpuProbe {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  /** One transaction. */
  private interface Tx {
    void run(Pick p) throws Exception;
  }

  @Test
  @SuppressWarnings("try")
  void probe() throws Exception {
    FencingMigrations.builder(db.migrationDataSource())
        .ownerRole(db.ownerRole())
        .applicationRole(db.appRole())
        .build()
        .migrate();
    Plan plan = new Plan("probe", 1, 1000, 10, 100, 1, Duration.ZERO, Duration.ofSeconds(1));
    Bank bank = new Bank(db.dataSource(), plan);
    bank.create();
    HikariConfig config = new HikariConfig();
    config.setDataSource(db.dataSource());
    config.setMaximumPoolSize(1);
    config.setMinimumIdle(1);
    config.setAutoCommit(false);
    List<SessionFactory> factories = new ArrayList<>();
    try (HikariDataSource pool = new HikariDataSource(config)) {
      DataSource fenced =
          FencedDataSource.builder(pool).meterRegistry(new SimpleMeterRegistry()).build();
      DataSource fencedForOrm =
          FencedDataSource.builder(pool).meterRegistry(new SimpleMeterRegistry()).build();
      SessionFactory plainOrm = ThroughputBenchmark.factories(factories, pool, BankEntities.PLAIN);
      SessionFactory fencedOrm =
          ThroughputBenchmark.factories(factories, fencedForOrm, BankEntities.FENCED);
      Map<String, Tx> all = new LinkedHashMap<>();
      all.put("update/unfenced", p -> Workloads.update(pool, p, null));
      all.put("update/unbound", p -> Workloads.update(fenced, p, null));
      all.put(
          "update/fenced",
          p -> {
            try (FencingScope s = Fencing.bind(bank.branchToken(p.bid()))) {
              Workloads.update(fenced, p, null);
            }
          });
      all.put("update/floor", p -> Workloads.updateAfterFloor(pool, p, bank.branchToken(p.bid())));
      all.put("tpcb/unfenced", p -> Workloads.tpcb(pool, p, null));
      all.put("tpcb/unbound", p -> Workloads.tpcb(fenced, p, null));
      all.put(
          "tpcb/fenced",
          p -> {
            try (FencingScope s = Fencing.bind(bank.branchToken(p.bid()))) {
              Workloads.tpcb(fenced, p, null);
            }
          });
      all.put("hibernate/unfenced", p -> Workloads.tpcb(plainOrm, BankEntities.PLAIN_ROWS, p));
      all.put(
          "hibernate/fenced",
          p -> {
            try (FencingScope s = Fencing.bind(bank.branchToken(p.bid()))) {
              Workloads.tpcb(fencedOrm, BankEntities.FENCED_ROWS, p);
            }
          });
      all.put(
          "hibernate/floor",
          p ->
              Workloads.tpcb(
                  plainOrm,
                  BankEntities.PLAIN_ROWS,
                  p,
                  Workloads.floor(bank.branchToken(p.bid()))));
      String only = System.getProperty("probe.variants", "");
      if (!only.isEmpty()) {
        all.keySet().retainAll(Arrays.asList(only.split(",")));
      }
      System.out.print(
          measure(
              all,
              plan,
              backend(pool),
              Integer.getInteger("probe.n", 2000),
              Integer.getInteger("probe.rounds", 7)));
    } finally {
      factories.forEach(SessionFactory::close);
      bank.drop();
    }
  }

  /**
   * The schedstat file of the pool's one backend (its CPU time in ns, first field), or null when
   * the server is not on this machine (no process of the backend's pid here, or one that is not
   * PostgreSQL's).
   */
  private static Path backend(DataSource pool) throws SQLException {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      Path process = Path.of("/proc", rs.getString(1));
      c.commit();
      // a process of that pid here that is no PostgreSQL backend: the server is elsewhere
      return isPostgres(process) ? process.resolve("schedstat") : null;
    }
  }

  private static boolean isPostgres(Path process) {
    try {
      return Files.readString(process.resolve("comm")).startsWith("postgres");
    } catch (IOException e) {
      return false; // no such process here
    }
  }

  private static double serverNanos(Path schedstat) throws IOException {
    return schedstat == null
        ? Double.NaN
        : Double.parseDouble(Files.readString(schedstat).trim().split(" ")[0]);
  }

  private static String measure(Map<String, Tx> all, Plan plan, Path server, int n, int rounds)
      throws Exception {
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long self = Thread.currentThread().getId();
    Map<String, List<double[]>> results = new LinkedHashMap<>();
    ThreadLocalRandom random = ThreadLocalRandom.current();
    for (int round = -2; round < rounds; round++) { // two unrecorded rounds: JIT warm-up
      for (Map.Entry<String, Tx> v : all.entrySet()) {
        Pick[] picks = new Pick[n];
        for (int i = 0; i < n; i++) {
          picks[i] = Pick.random(plan, random);
        }
        long w0 = System.nanoTime();
        long c0 = threads.getCurrentThreadCpuTime();
        long a0 = threads.getThreadAllocatedBytes(self);
        double s0 = serverNanos(server);
        for (Pick p : picks) {
          v.getValue().run(p);
        }
        long c1 = threads.getCurrentThreadCpuTime();
        long a1 = threads.getThreadAllocatedBytes(self);
        long w1 = System.nanoTime();
        double s1 = serverNanos(server);
        if (round >= 0) {
          results
              .computeIfAbsent(v.getKey(), k -> new ArrayList<>())
              .add(
                  new double[] {
                    (c1 - c0) / 1000.0 / n,
                    (a1 - a0) / (double) n,
                    (w1 - w0) / 1000.0 / n,
                    (s1 - s0) / 1000.0 / n
                  });
        }
      }
    }
    StringBuilder out =
        new StringBuilder(
            String.format(
                "client thread per transaction, medians of %d rounds of %d:%n"
                    + "%-20s %9s %9s %11s %9s %9s %9s %9s%n",
                rounds,
                n,
                "variant",
                "CPU µs",
                "min–max",
                "bytes",
                "wall µs",
                "min–max",
                "server µs",
                "min–max"));
    results.forEach(
        (k, v) -> {
          double[] cpu = v.stream().mapToDouble(x -> x[0]).sorted().toArray();
          double[] bytes = v.stream().mapToDouble(x -> x[1]).sorted().toArray();
          double[] wall = v.stream().mapToDouble(x -> x[2]).sorted().toArray();
          double[] backend = v.stream().mapToDouble(x -> x[3]).sorted().toArray();
          out.append(
              String.format(
                  "%-20s %9.1f %4.0f–%-4.0f %11.0f %9.1f %4.0f–%-4.0f %9.1f %4.0f–%-4.0f%n",
                  k,
                  cpu[cpu.length / 2],
                  cpu[0],
                  cpu[cpu.length - 1],
                  bytes[bytes.length / 2],
                  wall[wall.length / 2],
                  wall[0],
                  wall[wall.length - 1],
                  backend[backend.length / 2],
                  backend[0],
                  backend[backend.length - 1]));
        });
    return out.toString();
  }
}
