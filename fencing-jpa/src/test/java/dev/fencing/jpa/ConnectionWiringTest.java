package dev.fencing.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import javax.sql.DataSource;
import org.hibernate.SessionFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * fencing-jpa requires Hibernate's connections to come from a FencedDataSource, directly or through
 * HikariCP either way round, and says how to wire it when they do not.
 */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class ConnectionWiringTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  @BeforeAll
  static void migrate() {
    JpaFixture.migrate(db);
  }

  @Test
  void aPlainDataSourceUnderHibernateFailsSayingHowToWireIt() throws SQLException {
    IllegalStateException e = wiringFailure(db.dataSource());

    assertThat(e.getMessage())
        .contains(
            LedgerEntry.class.getName(), "FencedDataSource", "hibernate.connection.datasource");
  }

  @Test
  void aPlainHikariPoolUnderHibernateFails() throws SQLException {
    try (HikariDataSource pool = pool(db.dataSource())) {
      wiringFailure(pool);
    }
  }

  @Test
  void unfencedEntitiesAreWrittenThroughAPlainDataSource() throws SQLException {
    try (SessionFactory sf =
        JpaFixture.sessionFactory(db.dataSource(), Map.of(), LedgerEntry.class, Person.class)) {
      sf.inTransaction(s -> s.persist(new Person("ada")));
    }

    assertThat(count("person")).isEqualTo(1);
  }

  @Test
  void aFencedDataSourceDirectlyUnderHibernateWorks() throws SQLException {
    writesThrough(FencedDataSource.wrap(db.dataSource()));
  }

  @Test
  void aFencedDataSourceOverHikariWorks() throws SQLException {
    try (HikariDataSource pool = pool(db.dataSource())) {
      writesThrough(FencedDataSource.wrap(pool));
    }
  }

  @Test
  void hikariOverAFencedDataSourceWorks() throws SQLException {
    try (HikariDataSource pool = pool(FencedDataSource.wrap(db.dataSource()))) {
      writesThrough(pool);
    }
  }

  private static IllegalStateException wiringFailure(DataSource unfenced) throws SQLException {
    Throwable thrown;
    try (SessionFactory sf =
            JpaFixture.sessionFactory(unfenced, Map.of(), LedgerEntry.class, Person.class);
        LeaseClient leases = LeaseClient.builder(db.dataSource()).holder("writer").build();
        Lease lease = leases.tryAcquire("ledger", Duration.ofMinutes(1)).orElseThrow();
        FencingScope scope = Fencing.bind(lease)) {
      thrown =
          catchThrowable(
              () ->
                  sf.inTransaction(
                      s -> {
                        s.persist(new Person("written first"));
                        s.persist(new LedgerEntry("a", 1));
                      }));
    }
    assertThat(count("ledger_entry")).isZero();
    assertThat(count("person")).isZero();
    // thrown at the flush, inside commit: JPA wraps it in a RollbackException
    for (Throwable t = thrown; t != null; t = t.getCause()) {
      if (t instanceof IllegalStateException wiring) {
        return wiring;
      }
    }
    throw new AssertionError("no IllegalStateException in " + thrown, thrown);
  }

  private static void writesThrough(DataSource fenced) throws SQLException {
    try (SessionFactory sf =
            JpaFixture.sessionFactory(fenced, Map.of(), LedgerEntry.class, Person.class);
        LeaseClient leases = LeaseClient.builder(db.dataSource()).holder("writer").build();
        Lease lease = leases.tryAcquire("ledger", Duration.ofMinutes(1)).orElseThrow();
        FencingScope scope = Fencing.bind(lease)) {
      sf.inTransaction(s -> s.persist(new LedgerEntry("a", 1)));
    }
    assertThat(count("ledger_entry")).isEqualTo(1);
  }

  private static HikariDataSource pool(DataSource dataSource) {
    HikariConfig config = new HikariConfig();
    config.setDataSource(dataSource);
    config.setMaximumPoolSize(2);
    return new HikariDataSource(config);
  }

  private static long count(String table) throws SQLException {
    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*) FROM " + table)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
