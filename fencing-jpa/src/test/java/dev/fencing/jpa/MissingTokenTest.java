package dev.fencing.jpa;

import static dev.fencing.jpa.JpaFixture.refusal;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingExceptions;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityTransaction;
import jakarta.persistence.RollbackException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A fenced entity written with no token bound: a specific exception, the whole transaction rolled
 * back, and an EntityManager that can go on once the application has bound a token.
 */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class MissingTokenTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa = JpaFixture.start(db, LedgerEntry.class, Person.class);
  }

  @AfterEach
  void reset() {
    jpa.reset();
  }

  @AfterAll
  static void stop() {
    jpa.close();
  }

  @Test
  void theRefusalIsAFencingPersistenceExceptionCausedByMissingFencingToken() {
    EntityManager em = jpa.entityManager();
    em.getTransaction().begin();
    em.persist(new LedgerEntry("a", 1));
    Throwable thrown = catchThrowable(em::flush);

    assertThat(thrown).isInstanceOf(FencingPersistenceException.class);
    assertThat(thrown.getCause()).isInstanceOf(MissingFencingTokenException.class);
    assertThat(thrown.getMessage()).contains("ledger", LedgerEntry.class.getName(), "insert");
    assertThat(FencingExceptions.find(thrown).orElseThrow() == thrown.getCause()).isTrue();
    MissingFencingTokenException missing = (MissingFencingTokenException) thrown.getCause();
    assertThat(missing.resource()).isEqualTo("ledger");
    assertThat(missing.getSQLState()).isEqualTo("ZF002");
    assertThat(missing.presentedToken()).isNull();
  }

  @Test
  void atCommitJpaWrapsTheRefusalInARollbackException() {
    Throwable thrown =
        catchThrowable(
            () -> jpa.sessionFactory.inTransaction(s -> s.persist(new LedgerEntry("a", 1))));

    assertThat(thrown)
        .isInstanceOf(RollbackException.class)
        .cause()
        .isInstanceOf(FencingPersistenceException.class);
    assertThat(FencingExceptions.find(thrown).orElseThrow().resource()).isEqualTo("ledger");
  }

  @Test
  void theWholeTransactionIsRolledBackAtCommit() {
    EntityManager em = jpa.entityManager();
    EntityTransaction tx = em.getTransaction();
    tx.begin();
    em.persist(new Person("written first, not fenced"));
    em.persist(new LedgerEntry("a", 1));
    refusal(MissingFencingTokenException.class, tx::commit);
    assertThat(tx.isActive()).isFalse();

    assertThat(jpa.count("person")).isZero();
    assertThat(jpa.count("ledger_entry")).isZero();
  }

  @Test
  void theEntityManagerRecoversAfterARefusedCommit() {
    EntityManager em = jpa.entityManager();
    em.getTransaction().begin();
    em.persist(new LedgerEntry("refused", 1));
    refusal(MissingFencingTokenException.class, em.getTransaction()::commit);
    em.clear();

    try (FencingScope scope = Fencing.bind(jpa.current("ledger"))) {
      em.getTransaction().begin();
      em.persist(new LedgerEntry("accepted", 2));
      em.getTransaction().commit();
    }

    assertThat(jpa.count("ledger_entry")).isEqualTo(1);
    assertThat(jpa.queryLong("SELECT amount FROM ledger_entry WHERE text = 'accepted'"))
        .isEqualTo(2);
  }

  @Test
  void theEntityManagerRecoversAfterARefusedFlush() {
    EntityManager em = jpa.entityManager();
    em.getTransaction().begin();
    em.persist(new LedgerEntry("refused", 1));
    refusal(MissingFencingTokenException.class, em::flush);
    assertThat(em.getTransaction().getRollbackOnly()).isTrue();
    em.getTransaction().rollback();
    em.clear();

    try (FencingScope scope = Fencing.bind(jpa.current("ledger"))) {
      em.getTransaction().begin();
      em.persist(new LedgerEntry("accepted", 2));
      em.getTransaction().commit();
    }

    assertThat(jpa.count("ledger_entry")).isEqualTo(1);
  }

  @Test
  void aNewEntityManagerWritesOnceTheTokenIsBound() {
    refusal(
        MissingFencingTokenException.class,
        () -> jpa.sessionFactory.inTransaction(s -> s.persist(new LedgerEntry("refused", 1))));

    try (FencingScope scope = Fencing.bind(jpa.current("ledger"))) {
      jpa.sessionFactory.inTransaction(s -> s.persist(new LedgerEntry("accepted", 2)));
    }

    assertThat(jpa.count("ledger_entry")).isEqualTo(1);
  }

  @Test
  void aTokenBoundAroundPersistButNotTheCommitIsMissingAtTheFlush() {
    EntityManager em = jpa.entityManager();
    em.getTransaction().begin();
    try (FencingScope scope = Fencing.bind(jpa.current("ledger"))) {
      em.persist(new LedgerEntry("a", 1));
    }
    refusal(MissingFencingTokenException.class, em.getTransaction()::commit);

    assertThat(jpa.count("ledger_entry")).isZero();
  }
}
