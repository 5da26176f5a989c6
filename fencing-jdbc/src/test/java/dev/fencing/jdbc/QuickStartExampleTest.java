package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The README's Java quick start, run as written (plus the assertions), and what its catch block
 * says: a zombie's write throws {@link FencingRefusedException} straight from JDBC, whether it
 * binds its lease (the client refuses, ZF005) or only the token (PostgreSQL refuses, ZF001).
 */
class QuickStartExampleTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  @Test
  void quickStartWorksAsDocumented() throws Exception {
    FencingTestSupport.migrate(db);
    HikariConfig hikariConfig = new HikariConfig();
    hikariConfig.setJdbcUrl(db.jdbcUrl());
    hikariConfig.setUsername(db.user());
    hikariConfig.setPassword(db.password());
    hikariConfig.setMaximumPoolSize(2);
    try (HikariDataSource pool = new HikariDataSource(hikariConfig)) {
      try (Connection c = pool.getConnection();
          Statement s = c.createStatement()) {
        s.execute("CREATE TABLE accounts (id bigint PRIMARY KEY, balance bigint)");
        s.execute("INSERT INTO accounts VALUES (1, 100)");
      }
      boolean refused = false;

      // --- the README's snippet, as written ---
      DataSource db = FencedDataSource.wrap(pool); // pool: your HikariCP pool, as it is
      try (LeaseClient leases = LeaseClient.builder(pool).holder("worker-7").build();
          Lease lease = leases.acquire("ledger", Duration.ofSeconds(30), Duration.ofSeconds(10));
          FencingScope scope = Fencing.bind(lease);
          Connection c = db.getConnection()) {
        c.setAutoCommit(false);
        try (PreparedStatement ps =
            c.prepareStatement("UPDATE accounts SET balance = balance - 10 WHERE id = 1")) {
          ps.executeUpdate(); // PostgreSQL checks the token first
        }
        c.commit();
      } catch (FencingRefusedException e) {
        refused = true;
      }
      // --- end of the snippet ---

      assertThat(refused).isFalse();
      assertThat(balance(pool)).isEqualTo(90);

      // The catch block's claim: a zombie's write is a FencingRefusedException from JDBC itself.
      try (LeaseClient zombies = LeaseClient.builder(pool).holder("zombie").build();
          LeaseClient workers = LeaseClient.builder(pool).holder("worker-8").build()) {
        Lease zombie = zombies.acquire("ledger", Duration.ofMillis(300), Duration.ofSeconds(10));
        // waits for the zombie's lease to expire on the database clock
        try (Lease current =
            workers.acquire("ledger", Duration.ofSeconds(30), Duration.ofSeconds(30))) {
          assertThat(current.token().value()).isGreaterThan(zombie.token().value());
          SQLException lost = refusal(db, Fencing.bind(zombie));
          assertThat((Throwable) lost).isInstanceOf(LeaseLostException.class);
          assertThat(lost.getSQLState()).isEqualTo("ZF005");
          SQLException stale = refusal(db, Fencing.bind(zombie.token()));
          assertThat((Throwable) stale).isInstanceOf(StaleFencingTokenException.class);
          assertThat(stale.getSQLState()).isEqualTo("ZF001");
        }
      }
      assertThat(balance(pool)).isEqualTo(90);
    }
  }

  private static FencingRefusedException refusal(DataSource db, FencingScope scope) {
    try (scope;
        Connection c = db.getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps =
          c.prepareStatement("UPDATE accounts SET balance = balance - 10 WHERE id = 1")) {
        return catchThrowableOfType(FencingRefusedException.class, ps::executeUpdate);
      }
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
  }

  private static long balance(DataSource pool) throws SQLException {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT balance FROM accounts WHERE id = 1")) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
