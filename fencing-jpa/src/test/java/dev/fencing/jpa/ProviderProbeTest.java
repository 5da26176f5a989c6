package dev.fencing.jpa;

import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import org.hibernate.SessionFactory;
import org.hibernate.engine.jdbc.connections.spi.ConnectionProvider;
import org.hibernate.engine.jdbc.connections.spi.MultiTenantConnectionProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

@SuppressWarnings("try")
class ProviderProbeTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  static final class Plain implements ConnectionProvider {
    final FencedDataSource ds;

    Plain(FencedDataSource ds) {
      this.ds = ds;
    }

    @Override
    public Connection getConnection() throws SQLException {
      return ds.getConnection();
    }

    @Override
    public void closeConnection(Connection c) throws SQLException {
      c.close();
    }

    @Override
    public boolean supportsAggressiveRelease() {
      return false;
    }

    @Override
    public boolean isUnwrappableAs(Class<?> t) {
      return false;
    }

    @Override
    public <T> T unwrap(Class<T> t) {
      throw new UnsupportedOperationException();
    }
  }

  static final class Tenants implements MultiTenantConnectionProvider<Object> {
    final FencedDataSource ds;

    Tenants(FencedDataSource ds) {
      this.ds = ds;
    }

    @Override
    public Connection getAnyConnection() throws SQLException {
      return ds.getConnection();
    }

    @Override
    public void releaseAnyConnection(Connection c) throws SQLException {
      c.close();
    }

    @Override
    public Connection getConnection(Object tenant) throws SQLException {
      return ds.getConnection();
    }

    @Override
    public void releaseConnection(Object tenant, Connection c) throws SQLException {
      c.close();
    }

    @Override
    public boolean supportsAggressiveRelease() {
      return false;
    }

    @Override
    public boolean isUnwrappableAs(Class<?> t) {
      return false;
    }

    @Override
    public <T> T unwrap(Class<T> t) {
      throw new UnsupportedOperationException();
    }
  }

  @Test
  void probe() {
    JpaFixture.migrate(db);
    try (var pool = JpaFixture.pool(db)) {
      FencedDataSource ds = FencedDataSource.wrap(pool);
      try (SessionFactory plain =
          JpaFixture.sessionFactory(
              ds,
              Map.of("hibernate.connection.provider_class", new Plain(ds)),
              LedgerEntry.class)) {
        Throwable t =
            catchThrowable(
                () ->
                    plain.inTransaction(
                        s ->
                            s.createNativeMutationQuery("delete from ledger_entry")
                                .executeUpdate()));
        System.out.println("PLAIN provider native delete, no token: " + t);
      }
      try (SessionFactory tenants =
          JpaFixture.sessionFactory(
              ds,
              Map.of("hibernate.multi_tenant_connection_provider", new Tenants(ds)),
              LedgerEntry.class)) {
        Throwable t =
            catchThrowable(
                () ->
                    tenants
                        .withOptions()
                        .tenantIdentifier((Object) "t1")
                        .openSession()
                        .doWork(
                            c -> {
                              c.createStatement().execute("delete from ledger_entry");
                            }));
        System.out.println("TENANT provider native delete, no token: " + t);
      }
    }
  }
}
