package dev.fencing.jpa;

import dev.fencing.jdbc.FencedTables;
import dev.fencing.jdbc.FencingConnection;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;
import javax.sql.DataSource;
import org.hibernate.engine.jdbc.connections.spi.ConnectionProvider;
import org.hibernate.engine.jdbc.connections.spi.MultiTenantConnectionProvider;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.service.spi.ServiceRegistryImplementor;
import org.jspecify.annotations.Nullable;

/**
 * Finds the {@link FencedTables} of the {@code FencedDataSource} a {@code SessionFactory} with
 * {@code @Fenced} entities takes its connections from, for {@link FencingIntegrator} to declare the
 * entities' tables on.
 *
 * <p>Fails closed: when the connections are fenced but their {@code FencedDataSource} cannot be
 * found (a {@code ConnectionProvider} that does not unwrap to its {@code DataSource}, a
 * multi-tenant provider, whose tenants' connections may come from any data source), the
 * declarations could not be made, and a bulk or native write of a fenced table would need no token
 * of the entity's resource (none at all): such a {@code SessionFactory} is refused at start. When
 * the connections are not fenced, nothing is declared, and the entity writes are refused by the
 * listener, saying how to wire the data source.
 */
final class FencedTablesLookup {
  private FencedTablesLookup() {}

  /**
   * The declarations of the data source {@code sessionFactory} takes its connections from; null if
   * its connections are not fenced.
   *
   * @throws IllegalStateException if they are, but their {@code FencedDataSource} cannot be found
   */
  static @Nullable FencedTables find(SessionFactoryImplementor sessionFactory) {
    ServiceRegistryImplementor services = sessionFactory.getServiceRegistry();
    MultiTenantConnectionProvider<?> tenants =
        services.getService(MultiTenantConnectionProvider.class);
    ConnectionProvider provider = services.getService(ConnectionProvider.class);
    DataSource dataSource =
        tenants == null && provider != null && provider.isUnwrappableAs(DataSource.class)
            ? provider.unwrap(DataSource.class)
            : null;
    Optional<FencedTables> found = lookUp(dataSource);
    if (found.isPresent()) {
      return found.get();
    }
    if (!connectionsAreFenced(tenants, provider)) {
      return null;
    }
    // A pool over the FencedDataSource may unwrap to it only once started (HikariCP's no-argument
    // constructor starts it at the first connection, which Hibernate may not have asked for yet).
    found = lookUp(dataSource);
    if (found.isPresent()) {
      return found.get();
    }
    throw new IllegalStateException(
        "fencing-jpa: the SessionFactory's connections are fenced, but "
            + (tenants != null
                ? "they come from a MultiTenantConnectionProvider (" + tenants + ")"
                : dataSource != null
                    ? "its DataSource ("
                        + dataSource
                        + ") does not unwrap to their FencedDataSource (isWrapperFor)"
                    : "its ConnectionProvider ("
                        + provider
                        + ") does not unwrap to their DataSource")
            + ", so fencing-jpa cannot declare the tables of its @Fenced entities on their"
            + " FencedDataSource, and a bulk or native write of those tables would need no token"
            + " for the entity's resource. Give Hibernate the FencedDataSource (or a pool over or"
            + " under it) as hibernate.connection.datasource / jakarta.persistence.nonJtaDataSource,"
            + " or make the ConnectionProvider unwrap to it (isUnwrappableAs(DataSource.class));"
            + " multi-tenant connection providers are not supported with @Fenced entities.");
  }

  private static Optional<FencedTables> lookUp(@Nullable DataSource dataSource) {
    if (dataSource == null) {
      return Optional.empty();
    }
    try {
      return FencedTables.of(dataSource);
    } catch (SQLException e) {
      throw new IllegalStateException(
          "fencing-jpa could not ask the SessionFactory's DataSource whether it is fenced", e);
    }
  }

  /** Whether a connection of the session factory's provider is fenced; asks for one. */
  private static boolean connectionsAreFenced(
      @Nullable MultiTenantConnectionProvider<?> tenants, @Nullable ConnectionProvider provider) {
    try {
      if (tenants != null) {
        Connection connection = tenants.getAnyConnection();
        try {
          return isFenced(connection);
        } finally {
          tenants.releaseAnyConnection(connection);
        }
      }
      if (provider != null) {
        Connection connection = provider.getConnection();
        try {
          return isFenced(connection);
        } finally {
          provider.closeConnection(connection);
        }
      }
      return false;
    } catch (SQLException e) {
      throw new IllegalStateException(
          "fencing-jpa could not tell whether the SessionFactory's connections are fenced (it"
              + " must, to declare the tables of its @Fenced entities on their FencedDataSource)",
          e);
    }
  }

  private static boolean isFenced(Connection connection) throws SQLException {
    return connection instanceof FencingConnection
        || connection.isWrapperFor(FencingConnection.class);
  }
}
