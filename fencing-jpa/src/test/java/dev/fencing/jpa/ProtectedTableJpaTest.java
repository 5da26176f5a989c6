package dev.fencing.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingExceptions;
import dev.fencing.jdbc.FencingRefusedException;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Hibernate over a protected table ({@code fencing.protect('ledger_entry', 'ledger')}): entity
 * writes with a token bound pass the trigger; the writes Hibernate cannot see coming (bulk HQL,
 * native SQL) with no token bound, which fencing-jpa alone cannot refuse, are refused by
 * PostgreSQL.
 */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class ProtectedTableJpaTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa = JpaFixture.start(db, LedgerEntry.class);
  }

  @BeforeEach
  void seedAndProtect() {
    jpa.seed("ledger", new LedgerEntry("a", 1), new LedgerEntry("b", 2));
    admin("SELECT fencing.protect('ledger_entry', 'ledger')");
  }

  @AfterEach
  void unprotectAndReset() {
    admin("SELECT fencing.unprotect('ledger_entry')"); // reset() truncates the tables
    jpa.reset();
  }

  @AfterAll
  static void stop() {
    jpa.close();
  }

  private static void admin(String sql) {
    try (Connection c = jpa.pool.getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
  }

  private static long sum() {
    return jpa.queryLong("SELECT coalesce(sum(amount), 0) FROM ledger_entry");
  }

  @Test
  void entityWritesWithATokenPassTheTrigger() {
    try (FencingScope scope = Fencing.bind(jpa.current("ledger"))) {
      jpa.sessionFactory.inTransaction(
          s -> {
            s.persist(new LedgerEntry("c", 3));
            s.createSelectionQuery("from LedgerEntry where text = 'a'", LedgerEntry.class)
                    .getSingleResult()
                    .amount =
                10;
          });
      int updated =
          jpa.sessionFactory.fromTransaction(
              s ->
                  s.createMutationQuery("update LedgerEntry set amount = amount + 1")
                      .executeUpdate());
      assertThat(updated).isEqualTo(3);
    }
    assertThat(jpa.count("ledger_entry")).isEqualTo(3);
    assertThat(sum()).isEqualTo(10 + 2 + 3 + 3);
  }

  @Test
  void bulkUpdateWithNoTokenBoundIsRefusedByTheTrigger() {
    Throwable thrown =
        catchThrowable(
            () ->
                jpa.sessionFactory.inTransaction(
                    s ->
                        s.createMutationQuery("update LedgerEntry set amount = 0")
                            .executeUpdate()));
    assertThat(thrown).as("the bulk update must be refused").isNotNull();
    FencingRefusedException refusal =
        FencingExceptions.find(thrown)
            .orElseThrow(() -> new AssertionError("no fencing refusal in " + thrown, thrown));
    assertThat((Object) refusal).isInstanceOf(MissingFencingTokenException.class);
    assertThat(refusal.getSQLState()).isEqualTo("ZF002");
    assertThat(refusal.resource()).isEqualTo("ledger");
    assertThat(sum()).isEqualTo(3);
  }

  @Test
  void nativeDeleteWithNoTokenBoundIsRefusedByTheTrigger() {
    JpaFixture.refusal(
        MissingFencingTokenException.class,
        () ->
            jpa.sessionFactory.inTransaction(
                s -> s.createNativeMutationQuery("DELETE FROM ledger_entry").executeUpdate()));
    assertThat(jpa.count("ledger_entry")).isEqualTo(2);
  }

  @Test
  void staleTokenIsRefused() {
    try (FencingScope scope = Fencing.bind(jpa.stale("ledger"))) {
      JpaFixture.refusal(
          StaleFencingTokenException.class,
          () -> jpa.sessionFactory.inTransaction(s -> s.persist(new LedgerEntry("z", 100))));
    }
    assertThat(sum()).isEqualTo(3);
  }
}
