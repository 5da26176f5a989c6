package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.zaxxer.hikari.HikariConfigMXBean;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingExceptions;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.spring.boot.FencingRefusedDataAccessException;
import dev.fencing.spring.boot.LeaseNotAcquiredException;
import dev.fencing.spring.boot.autoconfigure.app.JdbcTestApplication;
import dev.fencing.spring.boot.autoconfigure.app.LedgerService;
import dev.fencing.testing.TestDatabase;
import io.micrometer.core.instrument.MeterRegistry;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jdbc.DataSourceUnwrapper;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** A plain-JDBC application without Flyway of its own: JdbcTemplate, transactions, @WithLease. */
@ExtendWith(PerClassDatabase.class)
@SpringBootTest(
    classes = JdbcTestApplication.class,
    properties = {"fencing.lease.holder=jdbc-app", "test.account.ttl=15s"})
@DirtiesContext
class JdbcApplicationTest {
  @Autowired DataSource dataSource;
  @Autowired JdbcTemplate jdbc;
  @Autowired PlatformTransactionManager transactionManager;
  @Autowired LeaseClient leases;
  @Autowired LedgerService ledger;
  @Autowired MeterRegistry meters;
  @Autowired FencingHealthIndicator health;

  @DynamicPropertySource
  static void database(DynamicPropertyRegistry registry) {
    PerClassDatabase.register(registry, JdbcApplicationTest.class);
  }

  @BeforeAll
  static void table() throws SQLException {
    TestDatabase db = PerClassDatabase.of(JdbcApplicationTest.class);
    // as the application's user (the database's migration user), as its own migrations would
    try (Connection c = db.connect(db.migrationUser());
        Statement s = c.createStatement()) {
      s.execute("CREATE TABLE jdbc_entry (id serial PRIMARY KEY, text text NOT NULL)");
    }
  }

  @Test
  void theFenceWasMigratedAtStartUpAndTheDataSourceIsFencedAboveTheHikariPool()
      throws SQLException {
    assertThat(
            jdbc.queryForObject("SELECT count(*) FROM fencing.fencing_schema_history", Long.class))
        .isPositive();
    assertThat(dataSource).isInstanceOf(FencedDataSource.class);
    assertThat(dataSource.unwrap(HikariDataSource.class)).isNotNull();
    // Boot's unwrapper (Hikari metrics, JMX, health) still reaches the pool
    HikariDataSource pool =
        DataSourceUnwrapper.unwrap(dataSource, HikariConfigMXBean.class, HikariDataSource.class);
    assertThat(pool).isNotNull();
    assertThat(meters.find("hikaricp.connections").gauge()).isNotNull();
    assertThat(leases.holder()).isEqualTo("jdbc-app");
  }

  @Test
  void aWithLeaseMethodWritesWithItsTokenAndReleasesTheLeaseAfterTheCommit() {
    FencingToken token = ledger.post("first");
    FencingToken next = ledger.post("second");

    assertThat(next.value()).isGreaterThan(token.value()); // released and acquired again
    assertThat(Fencing.current().isEmpty()).isTrue();
    assertThat(jdbc.queryForObject("SELECT max_seen FROM fencing.status('ledger')", Long.class))
        .isEqualTo(next.value());
    assertThat(meters.get("fencing.checks").counter().count()).isGreaterThanOrEqualTo(2);
  }

  @Test
  void aStaleTokenIsRefusedAsADataAccessExceptionCarryingTheRefusal_JdbcTransactionManager() {
    assertThat(transactionManager).isInstanceOf(JdbcTransactionManager.class);
    assertStaleRefused(new TransactionTemplate(transactionManager));
  }

  @Test
  void aStaleTokenIsRefusedAsADataAccessExceptionCarryingTheRefusal_DataSourceTransactionManager() {
    assertStaleRefused(new TransactionTemplate(new DataSourceTransactionManager(dataSource)));
  }

  @SuppressWarnings("try")
  private void assertStaleRefused(TransactionTemplate transaction) {
    FencingToken stale = ledger.post("before the takeover");
    ledger.post("a newer holder"); // max_seen moves past the stale token
    Throwable refused;
    try (FencingScope scope = Fencing.bind(stale)) {
      refused =
          catchThrowable(
              () ->
                  transaction.executeWithoutResult(
                      status -> jdbc.update("INSERT INTO jdbc_entry (text) VALUES ('late')")));
    }
    assertThat(refused).isInstanceOf(FencingRefusedDataAccessException.class);
    assertThat(refused.getCause()).isInstanceOf(StaleFencingTokenException.class);
    assertThat(((FencingRefusedDataAccessException) refused).refusal().presentedToken())
        .isEqualTo(stale.value());
    assertThat(FencingExceptions.find(refused))
        .containsInstanceOf(StaleFencingTokenException.class);
    assertThat(
            jdbc.queryForObject("SELECT count(*) FROM jdbc_entry WHERE text = 'late'", Long.class))
        .isZero();
  }

  @Test
  void whenHeldElsewhere_throwSkipOrWait() throws SQLException {
    try (LeaseClient other =
            LeaseClient.builder(PerClassDatabase.of(getClass()).dataSource())
                .holder("other")
                .build();
        Lease held = other.acquire("ledger", Duration.ofSeconds(30), Duration.ofSeconds(10))) {
      int runs = ledger.runs();
      assertThatThrownBy(() -> ledger.underLease(() -> "never"))
          .isInstanceOf(LeaseNotAcquiredException.class)
          .hasMessageContaining("\"ledger\"");
      assertThat(ledger.postIfFree("skipped")).isEmpty();
      assertThatThrownBy(() -> ledger.postWaitingBriefly("waited"))
          .isInstanceOf(LeaseNotAcquiredException.class)
          .satisfies(
              e ->
                  assertThat(((LeaseNotAcquiredException) e).waited())
                      .isEqualTo(Duration.ofMillis(100)));
      assertThat(ledger.runs()).as("none of them ran").isEqualTo(runs);
      assertThat(held.isLost()).isFalse();
    }
    assertThat(
            jdbc.queryForObject(
                "SELECT count(*) FROM jdbc_entry WHERE text = 'skipped'", Long.class))
        .isZero();
  }

  @Test
  void waitTakesTheLeaseOnceTheOtherHoldersLeaseExpired() throws SQLException {
    long before;
    try (LeaseClient other =
        LeaseClient.builder(PerClassDatabase.of(getClass()).dataSource()).holder("other").build()) {
      Lease held = other.acquire("ledger", Duration.ofSeconds(1), Duration.ofSeconds(10));
      before = held.token().value(); // never released: it expires on the database clock
      FencingToken mine = ledger.postWhenFree("after the expiry");
      assertThat(mine.value()).isGreaterThan(before);
    }
  }

  @Test
  void theResourceComesFromTheArgumentsAndBadOnesAreRefused() {
    FencingToken token = ledger.touchAccount("42");
    assertThat(token.resource()).isEqualTo("account:42");
    assertThatThrownBy(() -> ledger.touchAccount(null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("#number")
        .hasMessageContaining("is null");
    assertThatThrownBy(() -> ledger.touchAccount("4 2"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("\"account:4 2\"");
    assertThat(Fencing.current().isEmpty()).isTrue();
  }

  @Test
  void healthIsUpAndListsTheLeasesThisInstanceHolds() {
    Health inside = ledger.underLease(health::health);
    assertThat(inside.getStatus()).isEqualTo(Status.UP);
    assertThat(inside.getDetails()).containsEntry("schema", "fencing");
    assertThat((Iterable<?>) inside.getDetails().get("leases"))
        .singleElement()
        .satisfies(
            l -> {
              @SuppressWarnings("unchecked")
              Map<String, Object> lease = (Map<String, Object>) l;
              assertThat(lease)
                  .containsEntry("resource", "ledger")
                  .containsEntry("holder", "jdbc-app");
            });
    assertThat((Iterable<?>) health.health().getDetails().get("leases")).isEmpty();
  }

  @Test
  void aReentrantCallRunsUnderTheOuterLease() {
    Optional<FencingToken> inner =
        ledger.underLease(
            () ->
                Optional.of(
                    ledger.underLease(() -> Fencing.current().token("ledger").orElseThrow())));
    assertThat(inner).isPresent();
  }

  /**
   * Leases of three resources inside a caller's transaction, one nested in a method of another
   * (registered before it) and one called after it (bound inside it, registered after), are all
   * deferred to its completion; they are unbound innermost first, so nothing stays bound on the
   * thread (registration order left the outer token bound for the thread's next task).
   */
  @Test
  void nestedLeasesDeferredToTheCallersTransactionLeaveNothingBound() throws SQLException {
    FencingToken account =
        new TransactionTemplate(transactionManager)
            .execute(
                status -> {
                  FencingToken nested = ledger.underLease(() -> ledger.touchAccount("nested"));
                  ledger.touchAccount("sibling");
                  return nested;
                });
    assertThat(account.resource()).isEqualTo("account:nested");
    assertThat(Fencing.current().isEmpty()).as("nothing bound after the transaction").isTrue();
    assertThat(leases.tryAcquire("ledger", Duration.ofSeconds(30)))
        .as("the outer lease was released")
        .hasValueSatisfying(Lease::close);
  }
}
