package dev.fencing.jpa;

import static dev.fencing.jpa.JpaFixture.refusal;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import jakarta.persistence.EntityManager;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code @EntityListeners(FencedEntityListener.class)}: the standard JPA callbacks refuse a missing
 * token when {@code persist()} or {@code remove()} is called, before any flush.
 */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class EntityListenerVariantTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa = JpaFixture.start(db, Memo.class);
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
  void persistWithNoTokenIsRefusedByTheCallbackAtPersist() {
    EntityManager em = jpa.entityManager();
    em.getTransaction().begin();
    // SEQUENCE ids: Hibernate sends nothing before the flush, so this is the callback speaking.
    Throwable thrown = catchThrowable(() -> em.persist(new Memo("front", "call back")));
    assertThat(thrown).isInstanceOf(FencingPersistenceException.class);
    assertThat(thrown.getCause()).isInstanceOf(MissingFencingTokenException.class);
    assertThat(thrown.getMessage()).contains("desk:front", "persist");
    assertThat(em.getTransaction().getRollbackOnly()).isTrue();
    em.getTransaction().rollback();

    assertThat(jpa.count("memo")).isZero();
  }

  @Test
  void persistWithAnotherDesksTokenIsRefusedAtPersist() {
    EntityManager em = jpa.entityManager();
    try (FencingScope scope = Fencing.bind(jpa.current("desk:back"))) {
      em.getTransaction().begin();
      MissingFencingTokenException refusal =
          refusal(
              MissingFencingTokenException.class, () -> em.persist(new Memo("front", "call back")));
      assertThat(refusal.resource()).isEqualTo("desk:front");
      em.getTransaction().rollback();
    }

    assertThat(jpa.count("memo")).isZero();
  }

  @Test
  void persistWithTheCurrentTokenIsWritten() {
    try (FencingScope scope = Fencing.bind(jpa.current("desk:front"))) {
      jpa.sessionFactory.inTransaction(s -> s.persist(new Memo("front", "call back")));
    }

    assertThat(jpa.count("memo")).isEqualTo(1);
  }

  @Test
  void persistWithAStaleTokenPassesTheCallbackAndIsRefusedByPostgres() {
    try (FencingScope scope = Fencing.bind(jpa.stale("desk:front"))) {
      refusal(
          StaleFencingTokenException.class,
          () -> jpa.sessionFactory.inTransaction(s -> s.persist(new Memo("front", "call back"))));
    }

    assertThat(jpa.count("memo")).isZero();
  }

  @Test
  void removeWithNoTokenIsRefusedByTheCallbackAtRemove() {
    Memo memo = new Memo("front", "call back");
    jpa.seed("desk:front", memo);

    EntityManager em = jpa.entityManager();
    em.getTransaction().begin();
    Memo loaded = em.find(Memo.class, memo.id);
    MissingFencingTokenException refusal =
        refusal(MissingFencingTokenException.class, () -> em.remove(loaded));
    assertThat(refusal.getMessage()).contains("remove");
    em.getTransaction().rollback();

    assertThat(jpa.count("memo")).isEqualTo(1);
  }

  @Test
  void aTokenUnboundBeforeTheFlushIsCaughtByTheIntegratorNotTheCallback() {
    EntityManager em = jpa.entityManager();
    em.getTransaction().begin();
    try (FencingScope scope = Fencing.bind(jpa.current("desk:front"))) {
      em.persist(new Memo("front", "call back")); // the callback is satisfied here
    }
    MissingFencingTokenException refusal =
        refusal(MissingFencingTokenException.class, em.getTransaction()::commit);
    assertThat(refusal.getMessage()).contains("insert");

    assertThat(jpa.count("memo")).isZero();
  }
}
