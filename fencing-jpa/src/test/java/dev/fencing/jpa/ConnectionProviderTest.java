package dev.fencing.jpa;

import static dev.fencing.jpa.JpaFixture.refusal;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import javax.sql.DataSource;
import org.hibernate.SessionFactory;
import org.hibernate.engine.jdbc.connections.spi.ConnectionProvider;
import org.hibernate.engine.jdbc.connections.spi.MultiTenantConnectionProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * fencing-jpa declares the tables of {@code @Fenced} entities on the {@code FencedDataSource}
 * Hibernate's connections come from; it found that data source only by unwrapping a plain {@code
 * ConnectionProvider}. A provider that does not unwrap to it (a custom one, a multi-tenant one)
 * left every table undeclared while the entity writes passed (their connections are fenced): a
 * native or bulk delete of {@link LedgerEntry}'s table passed with no token bound at all. Such a
 * {@code SessionFactory} is now refused at start; one whose provider unwraps to the {@code
 * FencedDataSource}, or whose connections are not fenced (its entity writes refused at write time),
 * starts as before.
 */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class ConnectionProviderTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static HikariDataSource pool;

  @BeforeAll
  static void start() {
    JpaFixture.migrate(db);
    pool = JpaFixture.pool(db);
  }

  @AfterAll
  static void stop() {
    pool.close();
  }

  /** Connections of {@code dataSource}; unwraps to it only if {@code unwraps}. */
  private record Provider(DataSource dataSource, boolean unwraps) implements ConnectionProvider {
    @Override
    public Connection getConnection() throws SQLException {
      return dataSource.getConnection();
    }

    @Override
    public void closeConnection(Connection connection) throws SQLException {
      connection.close();
    }

    @Override
    public boolean supportsAggressiveRelease() {
      return false;
    }

    @Override
    public boolean isUnwrappableAs(Class<?> type) {
      return unwraps && type.isInstance(dataSource);
    }

    @Override
    public <T> T unwrap(Class<T> type) {
      if (!isUnwrappableAs(type)) {
        throw new IllegalArgumentException("cannot unwrap to " + type);
      }
      return type.cast(dataSource);
    }
  }

  /** Every tenant's connections from one {@code dataSource}. */
  private record Tenants(DataSource dataSource) implements MultiTenantConnectionProvider<Object> {
    @Override
    public Connection getAnyConnection() throws SQLException {
      return dataSource.getConnection();
    }

    @Override
    public void releaseAnyConnection(Connection connection) throws SQLException {
      connection.close();
    }

    @Override
    public Connection getConnection(Object tenant) throws SQLException {
      return dataSource.getConnection();
    }

    @Override
    public void releaseConnection(Object tenant, Connection connection) throws SQLException {
      connection.close();
    }

    @Override
    public boolean supportsAggressiveRelease() {
      return false;
    }

    @Override
    public boolean isUnwrappableAs(Class<?> type) {
      return false;
    }

    @Override
    public <T> T unwrap(Class<T> type) {
      throw new IllegalArgumentException("cannot unwrap to " + type);
    }
  }

  private static SessionFactory start(String setting, Object provider) {
    return JpaFixture.sessionFactory(
        FencedDataSource.wrap(pool), Map.of(setting, provider), LedgerEntry.class);
  }

  private static String refusedAtStart(String setting, Object provider) {
    Throwable thrown =
        catchThrowable(
            () -> {
              try (SessionFactory started = start(setting, provider)) {
                // started: fenced connections, no tables declared
              }
            });
    assertThat(thrown).as("Hibernate must refuse to start").isNotNull();
    for (Throwable t = thrown; t != null; t = t.getCause()) {
      if (t instanceof IllegalStateException && t.getMessage().startsWith("fencing-jpa:")) {
        return t.getMessage();
      }
    }
    throw new AssertionError("no refusal of fencing-jpa in " + thrown, thrown);
  }

  @Test
  void aConnectionProviderThatDoesNotUnwrapToItsFencedDataSourceIsRefusedAtStart() {
    assertThat(
            refusedAtStart(
                "hibernate.connection.provider_class",
                new Provider(FencedDataSource.wrap(pool), false)))
        .contains("does not unwrap to their DataSource")
        .contains("cannot declare the tables of its @Fenced entities");
  }

  @Test
  void aMultiTenantProviderOfFencedConnectionsIsRefusedAtStart() {
    assertThat(
            refusedAtStart(
                "hibernate.multi_tenant_connection_provider",
                new Tenants(FencedDataSource.wrap(pool))))
        .contains("MultiTenantConnectionProvider");
  }

  /** Its tables are declared: a native delete needs the entity's resource's token. */
  @Test
  void aConnectionProviderThatUnwrapsToItsFencedDataSourceDeclaresTheTables() throws Exception {
    try (SessionFactory factory =
            start(
                "hibernate.connection.provider_class",
                new Provider(FencedDataSource.wrap(pool), true));
        LeaseClient client = LeaseClient.builder(pool).holder("writer").build()) {
      refusal(
          MissingFencingTokenException.class,
          () ->
              factory.inTransaction(
                  s -> s.createNativeMutationQuery("DELETE FROM ledger_entry").executeUpdate()));
      try (var lease = client.tryAcquire("ledger", Duration.ofMinutes(1)).orElseThrow();
          FencingScope scope = Fencing.bind(lease)) {
        factory.inTransaction(s -> s.persist(new LedgerEntry("rent", 5)));
      }
      assertThat(count(factory)).isEqualTo(1);
    }
  }

  /**
   * A pool over the {@code FencedDataSource} that has not started yet (HikariCP's no-argument
   * constructor starts it at the first {@code getConnection}, and Hibernate asks for none before
   * integrating when JDBC metadata access is off): it unwraps to the {@code FencedDataSource} only
   * once started. The tables are declared all the same, not refused as undeclarable.
   */
  @Test
  void aPoolOverTheFencedDataSourceNotStartedYetDeclaresTheTables() throws Exception {
    JpaFixture.sessionFactory(FencedDataSource.wrap(pool), Map.of(), LedgerEntry.class).close();
    try (HikariDataSource lazy = new HikariDataSource()) {
      lazy.setDataSource(FencedDataSource.wrap(pool));
      lazy.setMaximumPoolSize(2);
      try (SessionFactory factory =
          JpaFixture.sessionFactory(
              lazy,
              Map.of(
                  "hibernate.boot.allow_jdbc_metadata_access", "false",
                  "hibernate.dialect", "org.hibernate.dialect.PostgreSQLDialect",
                  "hibernate.hbm2ddl.auto", "none"),
              LedgerEntry.class)) {
        refusal(
            MissingFencingTokenException.class,
            () ->
                factory.inTransaction(
                    s -> s.createNativeMutationQuery("DELETE FROM ledger_entry").executeUpdate()));
      }
    }
  }

  /** Unfenced connections: as before, it starts, and its fenced entity writes are refused. */
  @Test
  void aConnectionProviderOfUnfencedConnectionsStartsAndItsEntityWritesAreRefused() {
    try (SessionFactory factory =
        start("hibernate.connection.provider_class", new Provider(pool, false))) {
      Throwable thrown =
          catchThrowable(() -> factory.inTransaction(s -> s.persist(new LedgerEntry("rent", 5))));
      assertThat(thrown).hasMessageContaining("Hibernate's connection is not fenced");
      assertThat(count(factory)).isZero();
    }
  }

  private static long count(SessionFactory factory) {
    return factory.fromTransaction(
        s ->
            s.createNativeQuery("SELECT count(*) FROM ledger_entry", Long.class).getSingleResult());
  }
}
