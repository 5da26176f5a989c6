package dev.fencing.jpa;

import static dev.fencing.jpa.JpaFixture.refusal;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import org.hibernate.Session;
import org.hibernate.Transaction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * IDENTITY ids make Hibernate insert inside {@code persist()}; SEQUENCE ids wait for the flush.
 * Both are fenced at the moment the INSERT is sent.
 */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class IdGenerationTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa = JpaFixture.start(db, IdentityEntry.class, LedgerEntry.class);
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
  void identityInsertWithTheCurrentTokenIsWritten() {
    try (FencingScope scope = Fencing.bind(jpa.current("ledger"))) {
      jpa.sessionFactory.inTransaction(s -> s.persist(new IdentityEntry("a")));
    }

    assertThat(jpa.count("identity_entry")).isEqualTo(1);
  }

  @Test
  void identityInsertWithAStaleTokenIsRefusedInsidePersist() {
    Session s = jpa.entityManager();
    try (FencingScope scope = Fencing.bind(jpa.stale("ledger"))) {
      Transaction tx = s.beginTransaction();
      refusal(StaleFencingTokenException.class, () -> s.persist(new IdentityEntry("a")));
      tx.rollback();
    }

    assertThat(jpa.count("identity_entry")).isZero();
  }

  @Test
  void identityInsertWithNoTokenIsRefusedInsidePersist() {
    Session s = jpa.entityManager();
    Transaction tx = s.beginTransaction();
    refusal(MissingFencingTokenException.class, () -> s.persist(new IdentityEntry("a")));
    assertThat(tx.getRollbackOnly()).isTrue();
    tx.rollback();

    assertThat(jpa.count("identity_entry")).isZero();
  }

  @Test
  void sequenceInsertWithTheCurrentTokenIsWritten() {
    try (FencingScope scope = Fencing.bind(jpa.current("ledger"))) {
      jpa.sessionFactory.inTransaction(s -> s.persist(new LedgerEntry("a", 1)));
    }

    assertThat(jpa.count("ledger_entry")).isEqualTo(1);
  }

  @Test
  void sequenceInsertWithAStaleTokenIsRefused() {
    try (FencingScope scope = Fencing.bind(jpa.stale("ledger"))) {
      refusal(
          StaleFencingTokenException.class,
          () -> jpa.sessionFactory.inTransaction(s -> s.persist(new LedgerEntry("a", 1))));
    }

    assertThat(jpa.count("ledger_entry")).isZero();
  }

  @Test
  void sequenceInsertWithNoTokenIsRefusedAtTheFlushNotAtPersist() {
    Session s = jpa.entityManager();
    Transaction tx = s.beginTransaction();
    s.persist(new LedgerEntry("a", 1));
    refusal(MissingFencingTokenException.class, s::flush);
    tx.rollback();

    assertThat(jpa.count("ledger_entry")).isZero();
  }
}
