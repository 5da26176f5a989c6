package dev.fencing.benchmark.throughput;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The JDBC transactions measured do the work they claim or fail: a statement that changed no row (a
 * missing row, a write skipped) must not count as a fast transaction.
 */
class WorkloadsTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static HikariDataSource pool;

  @BeforeAll
  static void bank() throws Exception {
    FencingMigrations.builder(db.migrationDataSource())
        .ownerRole(db.ownerRole())
        .applicationRole(db.appRole())
        .build()
        .migrate();
    new Bank(db.dataSource(), Plan.tiny()).create();
    HikariConfig config = new HikariConfig();
    config.setDataSource(db.dataSource());
    config.setMaximumPoolSize(1);
    config.setAutoCommit(false); // as the benchmark's pool
    pool = new HikariDataSource(config);
  }

  @AfterAll
  static void close() {
    pool.close();
  }

  @Test
  void theTransactionsWriteOneRowPerStatement() throws Exception {
    long history = count("pgbench_history");
    long before = balance("pgbench_accounts", "aid", 1);
    Workloads.tpcb(pool, new Workloads.Pick(1, 1, 1, 7), null);
    Workloads.update(pool, new Workloads.Pick(1, 1, 1, 3), null);
    assertThat(count("pgbench_history")).isEqualTo(history + 1);
    assertThat(balance("pgbench_accounts", "aid", 1)).isEqualTo(before + 10);
  }

  @Test
  void anUpdateThatChangedNoRowFailsTheTransaction() throws Exception {
    long before = balance("pgbench_accounts", "aid", 1);
    long history = count("pgbench_history");
    // account 0 does not exist: the UPDATE matches no row
    assertThatThrownBy(() -> Workloads.update(pool, new Workloads.Pick(1, 1, 0, 5), null))
        .as("single-row UPDATE of a missing account")
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("changed 0 rows");
    assertThatThrownBy(() -> Workloads.tpcb(pool, new Workloads.Pick(1, 0, 1, 5), null))
        .as("TPC-B with a missing teller")
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("changed 0 rows");
    assertThatThrownBy(() -> Workloads.tpcb(pool, new Workloads.Pick(0, 1, 1, 5), null))
        .as("TPC-B with a missing branch")
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("changed 0 rows");
    assertThat(balance("pgbench_accounts", "aid", 1))
        .as("nothing of the failed transactions committed")
        .isEqualTo(before);
    assertThat(count("pgbench_history")).isEqualTo(history);
  }

  @Test
  void theFailureIsNotRetryableSoTheBenchmarkStops() {
    assertThat(Rounds.isRetryable(new IllegalStateException("changed 0 rows"))).isFalse();
  }

  private static long count(String table) throws Exception {
    return query("SELECT count(*) FROM " + Bank.SCHEMA + "." + table);
  }

  private static long balance(String table, String key, int id) throws Exception {
    String column = table.equals("pgbench_accounts") ? "abalance" : key.charAt(0) + "balance";
    return query(
        "SELECT " + column + " FROM " + Bank.SCHEMA + "." + table + " WHERE " + key + " = " + id);
  }

  private static long query(String sql) throws Exception {
    try (Connection c = db.dataSource().getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
