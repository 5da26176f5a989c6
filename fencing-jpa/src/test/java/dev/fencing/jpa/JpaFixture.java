package dev.fencing.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingExceptions;
import dev.fencing.jdbc.FencingRefusedException;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.testing.TestDatabaseExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.SharedSessionContract;
import org.hibernate.StatelessSession;
import org.hibernate.jpa.HibernatePersistenceConfiguration;

/**
 * A Hibernate {@link SessionFactory} over a {@link FencedDataSource} on the test class's database,
 * and two lease clients: {@code writer}, the current holder, and {@code zombie}, a holder that was
 * fenced off. Start it in {@code @BeforeAll}, {@link #reset()} it after each test.
 */
final class JpaFixture implements AutoCloseable {
  private static final Duration TTL = Duration.ofMinutes(5);

  final HikariDataSource pool;
  final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  final FencedDataSource dataSource;
  final SessionFactory sessionFactory;
  private final LeaseClient writer;
  private final LeaseClient zombie;
  private final List<Lease> leases = new ArrayList<>();
  private final List<SharedSessionContract> sessions = new ArrayList<>();

  /** Migrates the test database with its own roles, as its migration user. */
  static void migrate(TestDatabaseExtension db) {
    FencingMigrations.builder(db.migrationDataSource())
        .ownerRole(db.ownerRole())
        .applicationRole(db.appRole())
        .build()
        .migrate();
  }

  private JpaFixture(TestDatabaseExtension db, Map<String, ?> settings, Class<?>... entities) {
    migrate(db);
    this.pool = pool(db);
    this.dataSource = FencedDataSource.builder(pool).meterRegistry(meters).build();
    this.sessionFactory = sessionFactory(dataSource, settings, entities);
    this.writer = LeaseClient.builder(pool).holder("writer").build();
    this.zombie = LeaseClient.builder(pool).holder("zombie").build();
  }

  static JpaFixture start(TestDatabaseExtension db, Class<?>... entities) {
    return new JpaFixture(db, Map.of(), entities);
  }

  static JpaFixture start(TestDatabaseExtension db, Map<String, ?> settings, Class<?>... entities) {
    return new JpaFixture(db, settings, entities);
  }

  /** A HikariCP pool of (unfenced) connections to the test database. */
  static HikariDataSource pool(TestDatabaseExtension db) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(db.jdbcUrl());
    config.setUsername(db.user());
    config.setPassword(db.password());
    config.setMaximumPoolSize(8);
    return new HikariDataSource(config);
  }

  /** Hibernate bootstrapped programmatically: these entities, tables created, this DataSource. */
  static SessionFactory sessionFactory(
      DataSource dataSource, Map<String, ?> settings, Class<?>... entities) {
    HibernatePersistenceConfiguration configuration =
        new HibernatePersistenceConfiguration("fencing-jpa-test")
            .managedClasses(entities)
            .property("hibernate.connection.datasource", dataSource)
            .property("hibernate.hbm2ddl.auto", "create");
    settings.forEach(configuration::property);
    return configuration.createEntityManagerFactory();
  }

  /**
   * A new EntityManager (a Hibernate Session), rolled back if still in a transaction and closed by
   * {@link #reset()}: a failing test leaves no transaction open.
   */
  Session entityManager() {
    Session session = sessionFactory.openSession();
    sessions.add(session);
    return session;
  }

  /** A new StatelessSession, rolled back and closed like {@link #entityManager()}. */
  StatelessSession statelessSession() {
    StatelessSession session = sessionFactory.openStatelessSession();
    sessions.add(session);
    return session;
  }

  /** A lease of the current holder on {@code resource}; released by {@link #reset()}. */
  Lease current(String resource) {
    try {
      Lease lease =
          writer
              .tryAcquire(resource, TTL)
              .orElseThrow(() -> new AssertionError(resource + " is held: a lease leaked"));
      leases.add(lease);
      return lease;
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
  }

  /** A lease of the holder that will become the zombie; released by {@link #reset()}. */
  Lease zombieLease(String resource) {
    try {
      Lease lease = zombie.tryAcquire(resource, TTL).orElseThrow();
      leases.add(lease);
      return lease;
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
  }

  /**
   * Writes {@code entities} as the current holder of {@code resource}, under a lease released right
   * after: the test's setup.
   */
  @SuppressWarnings("try")
  void seed(String resource, Object... entities) {
    try (Lease lease = writer.tryAcquire(resource, TTL).orElseThrow();
        FencingScope scope = Fencing.bind(lease)) {
      sessionFactory.inTransaction(
          session -> {
            for (Object entity : entities) {
              session.persist(entity);
            }
          });
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
  }

  /**
   * The token of a holder of {@code resource} that has been fenced off: it acquired, then the
   * current holder acquired a newer token (and holds it until {@link #reset()}).
   */
  FencingToken stale(String resource) {
    try {
      FencingToken old;
      try (Lease previous = zombie.tryAcquire(resource, TTL).orElseThrow()) {
        old = previous.token();
      }
      assertThat(current(resource).token().value()).isGreaterThan(old.value());
      return old;
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
  }

  /** The number of rows of {@code table}, read past Hibernate. */
  long count(String table) {
    return queryLong("SELECT count(*) FROM " + table);
  }

  long queryLong(String sql, Object... parameters) {
    try (Connection c = pool.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < parameters.length; i++) {
        ps.setObject(i + 1, parameters[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
  }

  /** Tokens PostgreSQL checked through the fenced DataSource ({@code check_tokens} arguments). */
  long tokensChecked() {
    return (long) meters.counter("fencing.checks").count();
  }

  /** Calls of {@code check_tokens} through the fenced DataSource. */
  long checkCalls() {
    return meters.timer("fencing.check.latency").count();
  }

  /** Refusals of {@code token} recorded in the fence's rejection log. */
  long rejections(FencingToken token) {
    return queryLong(
        "SELECT count(*) FROM fencing.rejection WHERE resource = ? AND token = ?",
        token.resource(),
        token.value());
  }

  /** Ends the test's sessions, releases its leases and empties the application's tables. */
  void reset() {
    for (SharedSessionContract session : sessions) {
      if (session.isOpen()) {
        if (session.getTransaction().isActive()) {
          session.getTransaction().rollback();
        }
        session.close();
      }
    }
    sessions.clear();
    leases.forEach(Lease::close);
    leases.clear();
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      s.execute("SET lock_timeout = '10s'"); // a transaction a test left open fails, never hangs
      s.execute(
          "DO $$ DECLARE t text; BEGIN"
              + " FOR t IN SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = 'public'"
              + " LOOP EXECUTE 'TRUNCATE ' || t || ' CASCADE'; END LOOP; END $$");
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
  }

  @Override
  public void close() {
    reset();
    sessionFactory.close();
    writer.close();
    zombie.close();
    pool.close();
  }

  /**
   * The refusal of type {@code type} in what {@code write} throws, found the way applications find
   * it ({@link FencingExceptions#find}).
   */
  static <T extends FencingRefusedException> T refusal(Class<T> type, ThrowingCallable write) {
    Throwable thrown = catchThrowable(write);
    assertThat(thrown).as("the write must be refused").isNotNull();
    FencingRefusedException refusal =
        FencingExceptions.find(thrown)
            .orElseThrow(() -> new AssertionError("no fencing refusal in " + thrown, thrown));
    if (!type.isInstance(refusal)) {
      throw new AssertionError(
          "expected a " + type.getSimpleName() + ", found " + refusal + " in " + thrown, thrown);
    }
    return type.cast(refusal);
  }

  /** Runs {@code statements} on a connection of {@code pool}. */
  static void sql(DataSource pool, String... statements) {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      for (String statement : statements) {
        s.execute(statement);
      }
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
  }

  /** The first column of the one row {@code sql} returns, on a connection of {@code pool}. */
  static String query(DataSource pool, String sql) {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      assertThat(rs.next()).isTrue();
      return rs.getString(1);
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
  }
}
