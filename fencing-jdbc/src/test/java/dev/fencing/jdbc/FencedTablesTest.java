package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.insert;
import static dev.fencing.jdbc.FencingTestSupport.present;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

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
