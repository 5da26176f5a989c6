package dev.fencing.benchmark.throughput;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.benchmark.throughput.Workloads.Pick;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.testing.RoundTrips;
import dev.fencing.testing.TestDatabaseExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;
import org.hibernate.SessionFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Measurement tool (run by name): round trips and messages per benchmark transaction. */
class RoundTripProbe {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

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
      all.put(
          "update/fenced",
          p -> {
            try (FencingScope s = Fencing.bind(bank.branchToken(p.bid()))) {
              Workloads.update(fenced, p, null);
            }
          });
      all.put("tpcb/unfenced", p -> Workloads.tpcb(pool, p, null));
      all.put(
          "tpcb/fenced",
          p -> {
            try (FencingScope s = Fencing.bind(bank.branchToken(p.bid()))) {
              Workloads.tpcb(fenced, p, null);
            }
          });
      all.put("read-only/unfenced", p -> Workloads.readOnly(pool, p));
      all.put("read-only/unbound", p -> Workloads.readOnly(fenced, p));
      all.put(
          "read-only/bound",
          p -> {
            try (FencingScope s = Fencing.bind(bank.branchToken(p.bid()))) {
              Workloads.readOnly(fenced, p);
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
      ThreadLocalRandom random = ThreadLocalRandom.current();
      StringBuilder out = new StringBuilder();
      for (Map.Entry<String, Tx> v : all.entrySet()) {
        for (int i = 0; i < 20; i++) { // past prepareThreshold
          v.getValue().run(Pick.random(plan, random));
        }
        try (RoundTrips trips = new RoundTrips()) {
          int n = 10;
          trips.reset();
          for (int i = 0; i < n; i++) {
            v.getValue().run(Pick.random(plan, random));
          }
          Map<String, Integer> kinds = new TreeMap<>();
          for (String m : trips.sent()) {
            String k = m.trim().substring(4);
            int paren = k.indexOf('(');
            String kind = paren < 0 ? k.trim() : k.substring(0, paren);
            if (kind.equals("Parse")) {
              kind += k.startsWith("Parse(stmt=null") ? "-unnamed" : "-named";
            }
            kinds.merge(kind, 1, Integer::sum);
          }
          out.append(
              String.format("%-22s round trips %.1f  ", v.getKey(), trips.count() / (double) n));
          kinds.forEach((k, c) -> out.append(String.format("%s %.1f  ", k, c / (double) n)));
          out.append('\n');
          trips.reset();
          v.getValue().run(Pick.random(plan, random));
          for (String m : trips.sent()) {
            out.append("    ").append(m.length() > 200 ? m.substring(0, 200) : m).append('\n');
          }
        }
      }
      System.out.print(out);
    } finally {
      factories.forEach(SessionFactory::close);
      bank.drop();
    }
  }
}
