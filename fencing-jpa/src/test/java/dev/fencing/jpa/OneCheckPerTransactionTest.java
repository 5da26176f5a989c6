package dev.fencing.jpa;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.testing.TestDatabaseExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** PostgreSQL checks each bound token once per transaction, however many entities it writes. */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class OneCheckPerTransactionTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final int ENTITIES = 1_000;

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
  void flushingAThousandEntitiesOfOneResourceChecksOnce() {
    long calls = jpa.checkCalls();
    long tokens = jpa.tokensChecked();

    try (FencingScope scope = Fencing.bind(jpa.current("ledger"))) {
      jpa.sessionFactory.inTransaction(
          s -> {
            for (int i = 0; i < ENTITIES; i++) {
              s.persist(new LedgerEntry("entry " + i, i));
            }
          });
    }

    assertThat(jpa.count("ledger_entry")).isEqualTo(ENTITIES);
    assertThat(jpa.checkCalls() - calls).isEqualTo(1);
    assertThat(jpa.tokensChecked() - tokens).isEqualTo(1);
  }

  @Test
  void eachTransactionChecksAgain() {
    long calls = jpa.checkCalls();

    try (FencingScope scope = Fencing.bind(jpa.current("ledger"))) {
      for (int t = 0; t < 3; t++) {
        jpa.sessionFactory.inTransaction(s -> s.persist(new LedgerEntry("entry", 1)));
      }
    }

    assertThat(jpa.checkCalls() - calls).isEqualTo(3);
  }

  @Test
  void readsAreNotChecked() {
    LedgerEntry entry = new LedgerEntry("entry", 1);
    jpa.seed("ledger", entry);
    long calls = jpa.checkCalls();

    try (FencingScope scope = Fencing.bind(jpa.current("ledger"))) {
      jpa.sessionFactory.inTransaction(s -> s.find(LedgerEntry.class, entry.id));
    }

    assertThat(jpa.checkCalls() - calls).isZero();
  }
}
