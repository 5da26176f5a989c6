package dev.fencing.jpa;

import static dev.fencing.jpa.JpaFixture.refusal;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** persist, merge, dirty update and remove of a fenced entity: current token written, stale not. */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class EntityWritesTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa = JpaFixture.start(db, LedgerEntry.class);
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
  void persistWithTheCurrentTokenIsWritten() {
    try (FencingScope scope = Fencing.bind(jpa.current("ledger"))) {
      jpa.sessionFactory.inTransaction(s -> s.persist(new LedgerEntry("deposit", 10)));
    }

    assertThat(jpa.count("ledger_entry")).isEqualTo(1);
  }

  @Test
  void persistWithAStaleTokenIsRefusedAndNothingIsWritten() {
    FencingToken stale = jpa.stale("ledger");

    try (FencingScope scope = Fencing.bind(stale)) {
      StaleFencingTokenException refusal =
          refusal(
              StaleFencingTokenException.class,
              () ->
                  jpa.sessionFactory.inTransaction(s -> s.persist(new LedgerEntry("deposit", 10))));
      assertThat(refusal.resource()).isEqualTo("ledger");
      assertThat(refusal.presentedToken()).isEqualTo(stale.value());
    }

    assertThat(jpa.count("ledger_entry")).isZero();
    assertThat(jpa.rejections(stale)).isEqualTo(1);
  }

  @Test
  void mergeWithTheCurrentTokenIsWritten() {
    LedgerEntry entry = new LedgerEntry("deposit", 10);
    jpa.seed("ledger", entry);
    entry.amount = 20; // detached

    try (FencingScope scope = Fencing.bind(jpa.current("ledger"))) {
      jpa.sessionFactory.inTransaction(s -> s.merge(entry));
    }

    assertThat(amountOf(entry)).isEqualTo(20);
  }

  @Test
  void mergeWithAStaleTokenIsRefusedAndNothingIsWritten() {
    LedgerEntry entry = new LedgerEntry("deposit", 10);
    jpa.seed("ledger", entry);
    entry.amount = 20;

    try (FencingScope scope = Fencing.bind(jpa.stale("ledger"))) {
      refusal(
          StaleFencingTokenException.class,
          () -> jpa.sessionFactory.inTransaction(s -> s.merge(entry)));
    }

    assertThat(amountOf(entry)).isEqualTo(10);
  }

  @Test
  void dirtyUpdateWithTheCurrentTokenIsWritten() {
    LedgerEntry entry = new LedgerEntry("deposit", 10);
    jpa.seed("ledger", entry);

    try (FencingScope scope = Fencing.bind(jpa.current("ledger"))) {
      jpa.sessionFactory.inTransaction(s -> s.find(LedgerEntry.class, entry.id).amount = 30);
    }

    assertThat(amountOf(entry)).isEqualTo(30);
  }

  @Test
  void dirtyUpdateWithAStaleTokenIsRefusedAndNothingIsWritten() {
    LedgerEntry entry = new LedgerEntry("deposit", 10);
    jpa.seed("ledger", entry);

    try (FencingScope scope = Fencing.bind(jpa.stale("ledger"))) {
      refusal(
          StaleFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s -> s.find(LedgerEntry.class, entry.id).amount = 30));
    }

    assertThat(amountOf(entry)).isEqualTo(10);
  }

  @Test
  void removeWithTheCurrentTokenIsWritten() {
    LedgerEntry entry = new LedgerEntry("deposit", 10);
    jpa.seed("ledger", entry);

    try (FencingScope scope = Fencing.bind(jpa.current("ledger"))) {
      jpa.sessionFactory.inTransaction(s -> s.remove(s.find(LedgerEntry.class, entry.id)));
    }

    assertThat(jpa.count("ledger_entry")).isZero();
  }

  @Test
  void removeWithAStaleTokenIsRefusedAndNothingIsWritten() {
    LedgerEntry entry = new LedgerEntry("deposit", 10);
    jpa.seed("ledger", entry);

    try (FencingScope scope = Fencing.bind(jpa.stale("ledger"))) {
      refusal(
          StaleFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(s -> s.remove(s.find(LedgerEntry.class, entry.id))));
    }

    assertThat(jpa.count("ledger_entry")).isEqualTo(1);
  }

  private static long amountOf(LedgerEntry entry) {
    return jpa.queryLong("SELECT amount FROM ledger_entry WHERE id = ?", entry.id);
  }
}
