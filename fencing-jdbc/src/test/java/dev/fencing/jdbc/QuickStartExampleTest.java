package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

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

/** The README's Java quick start, run as written (plus the assertions). */
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
    try (HikariDataSource pool = new HikariDataSource(hikariConfig);
        LeaseClient leases = LeaseClient.builder(pool).holder("worker-7").keepAlive(true).build()) {
      try (Connection c = pool.getConnection();
          Statement s = c.createStatement()) {
        s.execute("CREATE TABLE accounts (id bigint PRIMARY KEY, balance bigint)");
        s.execute("INSERT INTO accounts VALUES (1, 100)");
      }
      DataSource db = FencedDataSource.wrap(pool);
      boolean refused = false;

      try (Lease lease = leases.acquire("ledger", Duration.ofSeconds(30), Duration.ofSeconds(10));
          FencingScope scope = Fencing.bind(lease);
          Connection c = db.getConnection()) {
        c.setAutoCommit(false);
        try (PreparedStatement ps =
            c.prepareStatement("UPDATE accounts SET balance = balance - ? WHERE id = ?")) {
          ps.setLong(1, 10);
          ps.setLong(2, 1);
          ps.executeUpdate();
        }
        c.commit();
      } catch (SQLException e) {
        if (FencingExceptions.find(e).isPresent()) {
          refused = true;
        }
      }

      assertThat(refused).isFalse();
      try (Connection c = pool.getConnection();
          Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT balance FROM accounts WHERE id = 1")) {
        rs.next();
        assertThat(rs.getLong(1)).isEqualTo(90);
      }
    }
  }
}
