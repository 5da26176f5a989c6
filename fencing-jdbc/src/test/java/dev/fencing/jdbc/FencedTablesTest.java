package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.insert;
import static dev.fencing.jdbc.FencingTestSupport.present;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link FencedTables} declarations belong to the data source they were made for: another {@link
 * FencedDataSource} of the same JVM (another database, another application module) is not bound by
 * them, and a plain data source has none.
 */
class FencedTablesTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;

  @BeforeAll
  static void migrate() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    FencingTestSupport.createTestSchema(plain);
  }

  @Test
  void aDeclarationGuardsItsOwnDataSourceOnly() throws SQLException {
    FencedDataSource declared = FencedDataSource.wrap(plain);
    FencedDataSource other = FencedDataSource.wrap(plain);
    FencedTables.of(declared).orElseThrow().requireToken("t", "tables-own");

    try (Connection c = declared.getConnection()) {
      assertThatThrownBy(() -> insert(c, 9101))
          .isInstanceOfSatisfying(
              MissingFencingTokenException.class,
              e -> assertThat(e.resource()).isEqualTo("tables-own"));
    }
    assertThat(present(plain, 9101)).isFalse();

    try (Connection c = other.getConnection()) {
      insert(c, 9102);
    }
    assertThat(present(plain, 9102)).isTrue();
  }

  /**
   * A row write announced in a transaction that a SQL string then ends (as {@code commit()} or
   * {@code rollback()} would) is forgotten with it: it does not let a bulk write of the next
   * transaction through unjudged, and an announcement made afterwards still counts.
   */
  @ParameterizedTest
  @ValueSource(strings = {"COMMIT", "ROLLBACK", "END", "ABORT", "rollback work"})
  void anAnnouncementEndsWithTheTransactionASqlStringEnds(String end) throws SQLException {
    FencingTestSupport.exec(plain, "DROP TABLE IF EXISTS stale_rows");
    FencingTestSupport.exec(plain, "CREATE TABLE stale_rows (id int PRIMARY KEY)");
    FencingTestSupport.exec(plain, "INSERT INTO stale_rows VALUES (1)");
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    FencedTables.of(fenced).orElseThrow().requireRowResources("stale_rows");

    try (Connection c = fenced.getConnection();
        Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      FencedTables.announceRowWrite("stale_rows"); // its statement never came
      s.execute(end);

      assertThatThrownBy(() -> s.executeUpdate("DELETE FROM stale_rows"))
          .as("a bulk write of an unprotected per-row table, in the next transaction")
          .isInstanceOf(MissingFencingTokenException.class)
          .hasMessageContaining("stale_rows");
      c.rollback();

      FencedTables.announceRowWrite("stale_rows");
      assertThat(s.executeUpdate("INSERT INTO stale_rows VALUES (2)")).isOne();
      c.commit();
    } finally {
      FencedTables.withdrawRowWrite("stale_rows");
    }
    try (Connection c = plain.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*) FROM stale_rows")) {
      rs.next();
      assertThat(rs.getInt(1)).as("the refused DELETE deleted nothing").isEqualTo(2);
    }
  }

  @Test
  void aWrapperOfAFencedDataSourceFindsItsDeclarationsAndAPlainOneHasNone() throws SQLException {
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    DataSource wrapper = new DelegatingDataSource(fenced);
    FencedTables.of(wrapper).orElseThrow().requireToken("t", "tables-wrapped");
    try (Connection c = fenced.getConnection()) {
      assertThatThrownBy(() -> insert(c, 9103)).isInstanceOf(MissingFencingTokenException.class);
    }
    assertThat(present(plain, 9103)).isFalse();
    assertThat(FencedTables.of(plain)).isEmpty();
  }

  /** A pool's or framework's proxy: delegates everything, unwraps to what it wraps. */
  private record DelegatingDataSource(DataSource target) implements DataSource {
    @Override
    public Connection getConnection() throws SQLException {
      return target.getConnection();
    }

    @Override
    public Connection getConnection(String user, String password) throws SQLException {
      return target.getConnection(user, password);
    }

    @Override
    public java.io.PrintWriter getLogWriter() throws SQLException {
      return target.getLogWriter();
    }

    @Override
    public void setLogWriter(java.io.PrintWriter out) throws SQLException {
      target.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
      target.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
      return target.getLoginTimeout();
    }

    @Override
    public java.util.logging.Logger getParentLogger() {
      return java.util.logging.Logger.getGlobal();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
      return iface.isInstance(target) ? iface.cast(target) : target.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
      return iface.isInstance(target) || target.isWrapperFor(iface);
    }
  }
}
