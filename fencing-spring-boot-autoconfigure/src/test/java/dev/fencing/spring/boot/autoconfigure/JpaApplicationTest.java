package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingExceptions;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.spring.boot.FencingRefusedDataAccessException;
import dev.fencing.spring.boot.autoconfigure.app.JpaLedgerService;
import dev.fencing.spring.boot.autoconfigure.app.JpaTestApplication;
import dev.fencing.spring.boot.autoconfigure.app.LedgerEntry;
import dev.fencing.spring.boot.autoconfigure.app.LedgerEntryRepository;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A JPA application with Spring Data repositories and its own Flyway migrations (which protect a
 * table with {@code fencing.protect}, so the fence's migrations must have run first).
 */
@ExtendWith(PerClassDatabase.class)
@SpringBootTest(classes = JpaTestApplication.class)
@DirtiesContext
class JpaApplicationTest {
  @Autowired JdbcTemplate jdbc;
  @Autowired PlatformTransactionManager transactionManager;
  @Autowired JpaLedgerService ledger;
  @Autowired LedgerEntryRepository entries;
  @PersistenceContext EntityManager em;

  @DynamicPropertySource
  static void database(DynamicPropertyRegistry registry) {
    PerClassDatabase.register(registry, JpaApplicationTest.class);
  }

  @Test
  void theFenceMigratedBeforeTheApplicationsOwnFlywayWhichStillRan() {
    assertThat(
            jdbc.queryForObject("SELECT count(*) FROM fencing.fencing_schema_history", Long.class))
        .isPositive();
    assertThat(
            jdbc.queryForObject(
                "SELECT count(*) FROM flyway_schema_history WHERE success", Long.class))
        .isEqualTo(1);
    assertThat(
            jdbc.queryForObject(
                "SELECT count(*) FROM fencing.protected_table WHERE resource = 'ledger'",
                Long.class))
        .isEqualTo(1);
  }

  @Test
  void aWithLeaseTransactionalMethodIsFencedThroughTheCommitsFlush() {
    long id = ledger.post("deposit", 10);
    ledger.adjust(id, 5); // the UPDATE is flushed at the commit, inside the lease advice
    assertThat(amount(id)).isEqualTo(15);
    assertThat(Fencing.current().isEmpty()).isTrue();
  }

  @Test
  void theBindingCoversTheCommitWhenTheLeaseAdviceRunsInsideTheTransaction() {
    long id = ledger.post("inside", 5);
    new TransactionTemplate(transactionManager)
        .executeWithoutResult(status -> ledger.adjustInCallersTransaction(id, 7));
    assertThat(amount(id)).isEqualTo(12);
    assertThat(Fencing.current().isEmpty()).as("unbound after the transaction").isTrue();
  }

  @Test
  void aRepositoryWriteWithoutTokenIsRefusedAsDataAccessException() {
    Throwable refused = catchThrowable(() -> entries.save(new LedgerEntry("no token", 1)));
    assertThat(refused).isInstanceOf(FencingRefusedDataAccessException.class);
    assertThat(FencingExceptions.find(refused))
        .containsInstanceOf(MissingFencingTokenException.class);
    assertThat(entries.countByText("no token")).isZero();
  }

  @Test
  @SuppressWarnings("try")
  void aStaleTokenIsRefusedThroughARepository() {
    FencingToken stale = staleToken();
    Throwable refused;
    try (FencingScope scope = Fencing.bind(stale)) {
      refused = catchThrowable(() -> entries.save(new LedgerEntry("stale repository", 1)));
    }
    assertThat(refused).isInstanceOf(FencingRefusedDataAccessException.class);
    assertThat(refused.getCause()).isInstanceOf(StaleFencingTokenException.class);
    assertThat(entries.countByText("stale repository")).isZero();
  }

  @Test
  @SuppressWarnings("try")
  void aStaleTokenIsRefusedAtTheCommitOfAJpaTransactionManagerTransaction() {
    assertThat(transactionManager).isInstanceOf(JpaTransactionManager.class);
    long id = ledger.post("stale at commit", 1);
    FencingToken stale = staleToken();
    Throwable refused;
    try (FencingScope scope = Fencing.bind(stale)) {
      refused =
          catchThrowable(
              () ->
                  new TransactionTemplate(transactionManager)
                      .executeWithoutResult(
                          status -> em.find(LedgerEntry.class, id).add(100))); // UPDATE at commit
    }
    assertThat(refused).isInstanceOf(FencingRefusedDataAccessException.class);
    assertThat(refused.getCause()).isInstanceOf(StaleFencingTokenException.class);
    assertThat(amount(id)).isEqualTo(1);
  }

  private long amount(long id) {
    return jdbc.queryForObject("SELECT amount FROM ledger_entry WHERE id = ?", Long.class, id);
  }

  @Test
  void protectedTableRefusesAnUnfencedJdbcWriteToo() {
    Throwable refused =
        catchThrowable(
            () -> jdbc.update("INSERT INTO ledger_entry (text, amount) VALUES ('raw', 1)"));
    assertThat(refused).isInstanceOf(FencingRefusedDataAccessException.class);
    assertThat(refused.getCause()).isInstanceOf(MissingFencingTokenException.class);
  }

  /** A token of ledger that a newer holder has since superseded. */
  private FencingToken staleToken() {
    ledger.post("older holder", 1);
    long older = jdbc.queryForObject("SELECT max_seen FROM fencing.status('ledger')", Long.class);
    ledger.post("newer holder", 1);
    return FencingToken.of("ledger", older);
  }
}
