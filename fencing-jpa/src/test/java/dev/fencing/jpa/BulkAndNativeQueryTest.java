package dev.fencing.jpa;

import static dev.fencing.jpa.JpaFixture.refusal;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import jakarta.persistence.EntityManager;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Bulk JPQL and native mutations fire no entity events: the FencedDataSource fences them like any
 * write, and, knowing the tables of {@code @Fenced} entities from fencing-jpa, requires a token for
 * the entity's own resource (see also ProtectedTableJpaTest).
 */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class BulkAndNativeQueryTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa = JpaFixture.start(db, LedgerEntry.class);
  }

  @BeforeEach
  void seed() {
    jpa.seed("ledger", new LedgerEntry("a", 1), new LedgerEntry("b", 2));
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
  void bulkUpdateWithTheCurrentTokenIsWritten() {
    try (FencingScope scope = Fencing.bind(jpa.current("ledger"))) {
      int updated =
          jpa.sessionFactory.fromTransaction(
              s ->
                  s.createMutationQuery("update LedgerEntry set amount = amount * 10")
                      .executeUpdate());
      assertThat(updated).isEqualTo(2);
    }

    assertThat(sum()).isEqualTo(30);
  }

  @Test
  void bulkUpdateWithAStaleTokenIsRefused() {
    try (FencingScope scope = Fencing.bind(jpa.stale("ledger"))) {
      refusal(
          StaleFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s ->
                      s.createMutationQuery("update LedgerEntry set amount = amount * 10")
                          .executeUpdate()));
    }

    assertThat(sum()).isEqualTo(3);
  }

  @Test
  void bulkDeleteWithTheCurrentTokenIsWritten() {
    try (FencingScope scope = Fencing.bind(jpa.current("ledger"))) {
      jpaUpdate("delete from LedgerEntry");
    }

    assertThat(jpa.count("ledger_entry")).isZero();
  }

  @Test
  void bulkDeleteWithAStaleTokenIsRefused() {
    try (FencingScope scope = Fencing.bind(jpa.stale("ledger"))) {
      refusal(StaleFencingTokenException.class, () -> jpaUpdate("delete from LedgerEntry"));
    }

    assertThat(jpa.count("ledger_entry")).isEqualTo(2);
  }

  @Test
  void nativeMutationWithTheCurrentTokenIsWritten() {
    try (FencingScope scope = Fencing.bind(jpa.current("ledger"))) {
      jpa.sessionFactory.inTransaction(
          s -> s.createNativeMutationQuery("UPDATE ledger_entry SET amount = 0").executeUpdate());
    }

    assertThat(sum()).isZero();
  }

  @Test
  void nativeMutationWithAStaleTokenIsRefused() {
    try (FencingScope scope = Fencing.bind(jpa.stale("ledger"))) {
      refusal(
          StaleFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s ->
                      s.createNativeMutationQuery("UPDATE ledger_entry SET amount = 0")
                          .executeUpdate()));
    }

    assertThat(sum()).isEqualTo(3);
  }

  @Test
  void jpaNativeQueryWithAStaleTokenIsRefused() {
    try (FencingScope scope = Fencing.bind(jpa.stale("ledger"))) {
      refusal(StaleFencingTokenException.class, () -> jpaNativeUpdate("DELETE FROM ledger_entry"));
    }

    assertThat(jpa.count("ledger_entry")).isEqualTo(2);
  }

  /**
   * Issue 13 closed the former gap: a bulk write of a {@code @Fenced("ledger")} entity needs a
   * token for "ledger" itself, on an unprotected table too; with none bound it is refused before it
   * runs.
   */
  @Test
  void withNoTokenBoundABulkUpdateIsRefused() {
    MissingFencingTokenException refusal =
        refusal(
            MissingFencingTokenException.class,
            () ->
                jpa.sessionFactory.inTransaction(
                    s ->
                        s.createMutationQuery("update LedgerEntry set amount = 0")
                            .executeUpdate()));
    assertThat(refusal.resource()).isEqualTo("ledger");

    assertThat(sum()).isEqualTo(3);
  }

  @Test
  void withAnotherResourcesTokenBoundABulkUpdateIsRefused() {
    try (FencingScope scope = Fencing.bind(jpa.current("not-the-ledger"))) {
      MissingFencingTokenException refusal =
          refusal(
              MissingFencingTokenException.class,
              () ->
                  jpa.sessionFactory.inTransaction(
                      s ->
                          s.createMutationQuery("update LedgerEntry set amount = 0")
                              .executeUpdate()));
      assertThat(refusal.resource()).isEqualTo("ledger");
    }

    assertThat(sum()).isEqualTo(3);
  }

  @Test
  void withAnotherResourcesTokenBoundANativeDeleteIsRefused() {
    try (FencingScope scope = Fencing.bind(jpa.current("not-the-ledger"))) {
      refusal(
          MissingFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s ->
                      s.createNativeMutationQuery("DELETE FROM public.LEDGER_ENTRY")
                          .executeUpdate()));
    }

    assertThat(sum()).isEqualTo(3);
  }

  /**
   * A comment between a write's keywords and its table (or a quoted, schema-qualified name) does
   * not hide the table: the native write still needs the ledger's own token.
   */
  @Test
  void aCommentBeforeTheTableDoesNotHideItFromTheTokenItNeeds() {
    String[] writes = {
      "UPDATE /*x*/ ledger_entry SET amount = 0",
      "UPDATE --x\n ledger_entry SET amount = 0",
      "UPDATE /* a /* nested */ one */ public . \"ledger_entry\" SET amount = 0",
      "DELETE /**/ FROM ledger_entry",
      "INSERT /*x*/ INTO ledger_entry (id, text, amount) VALUES (99, 'z', 5)",
      "TRUNCATE /*x*/ ledger_entry",
    };
    try (FencingScope scope = Fencing.bind(jpa.current("not-the-ledger"))) {
      for (String sql : writes) {
        MissingFencingTokenException refusal =
            refusal(
                MissingFencingTokenException.class,
                () ->
                    jpa.sessionFactory.inTransaction(
                        s -> s.createNativeMutationQuery(sql).executeUpdate()));
        assertThat(refusal.resource()).as(sql).isEqualTo("ledger");
      }
    }

    assertThat(sum()).isEqualTo(3);
    assertThat(jpa.count("ledger_entry")).isEqualTo(2);
  }

  @Test
  void withBothTokensBoundABulkUpdateIsWritten() {
    try (FencingScope scope = Fencing.bind(jpa.current("not-the-ledger"), jpa.current("ledger"))) {
      jpa.sessionFactory.inTransaction(
          s -> s.createMutationQuery("update LedgerEntry set amount = 0").executeUpdate());
    }

    assertThat(sum()).isZero();
  }

  /** Through the standard JPA API. */
  private static int jpaUpdate(String jpql) {
    return jpa.sessionFactory.fromTransaction(
        s -> {
          EntityManager em = s;
          return em.createQuery(jpql).executeUpdate();
        });
  }

  private static int jpaNativeUpdate(String sql) {
    return jpa.sessionFactory.fromTransaction(
        s -> {
          EntityManager em = s;
          return em.createNativeQuery(sql).executeUpdate();
        });
  }

  private static long sum() {
    return jpa.queryLong("SELECT coalesce(sum(amount), 0) FROM ledger_entry");
  }
}
