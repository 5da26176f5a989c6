package dev.fencing.jpa;

import static dev.fencing.jpa.JpaFixture.refusal;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.hibernate.Session;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** JDBC batching with ordered inserts and updates: batches are fenced like single statements. */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class BatchingTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final int ROWS = 120;

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa =
        JpaFixture.start(
            db,
            Map.of(
                "hibernate.jdbc.batch_size", "50",
                "hibernate.order_inserts", "true",
                "hibernate.order_updates", "true",
                "hibernate.generate_statistics", "true"),
            LedgerEntry.class,
            Invoice.class,
            InvoiceLine.class);
  }

  @AfterEach
  void reset() {
    jpa.reset();
    jpa.sessionFactory.getStatistics().clear();
  }

  @AfterAll
  static void stop() {
    jpa.close();
  }

  @Test
  void batchedInsertsWithTheCurrentTokenAreWrittenAfterOneCheck() {
    long calls = jpa.checkCalls();

    try (FencingScope scope = Fencing.bind(jpa.current("ledger"), jpa.current("billing"))) {
      jpa.sessionFactory.inTransaction(BatchingTest::persistMixed);
    }

    assertThat(jpa.count("ledger_entry")).isEqualTo(ROWS);
    assertThat(jpa.count("invoice_line")).isEqualTo(ROWS);
    assertThat(jpa.checkCalls() - calls).isEqualTo(1);
    // batched: a statement per batch, not per row (sequence calls included)
    assertThat(jpa.sessionFactory.getStatistics().getPrepareStatementCount()).isLessThan(30);
  }

  @Test
  void batchedInsertsWithAStaleTokenWriteNothing() {
    try (FencingScope scope = Fencing.bind(jpa.stale("ledger"), jpa.current("billing").token())) {
      refusal(
          StaleFencingTokenException.class,
          () -> jpa.sessionFactory.inTransaction(BatchingTest::persistMixed));
    }

    assertThat(jpa.count("ledger_entry")).isZero();
    assertThat(jpa.count("invoice")).isZero();
    assertThat(jpa.count("invoice_line")).isZero();
  }

  @Test
  void batchedInsertsWithATokenMissingForOneEntityWriteNothing() {
    try (FencingScope scope = Fencing.bind(jpa.current("billing"))) {
      MissingFencingTokenException refusal =
          refusal(
              MissingFencingTokenException.class,
              () -> jpa.sessionFactory.inTransaction(BatchingTest::persistMixed));
      assertThat(refusal.resource()).isEqualTo("ledger");
    }

    assertThat(jpa.count("ledger_entry")).isZero();
    assertThat(jpa.count("invoice_line")).isZero();
  }

  @Test
  void batchedUpdatesWithTheCurrentTokenAreWritten() {
    List<LedgerEntry> entries = entries();
    jpa.seed("ledger", entries.toArray());

    try (FencingScope scope = Fencing.bind(jpa.current("ledger"))) {
      jpa.sessionFactory.inTransaction(
          s ->
              s.createQuery("from LedgerEntry", LedgerEntry.class).list().forEach(e -> e.amount++));
    }

    assertThat(jpa.queryLong("SELECT sum(amount) FROM ledger_entry")).isEqualTo(ROWS);
  }

  @Test
  void batchedUpdatesWithAStaleTokenWriteNothing() {
    List<LedgerEntry> entries = entries();
    jpa.seed("ledger", entries.toArray());

    try (FencingScope scope = Fencing.bind(jpa.stale("ledger"))) {
      refusal(
          StaleFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s ->
                      s.createQuery("from LedgerEntry", LedgerEntry.class)
                          .list()
                          .forEach(e -> e.amount++)));
    }

    assertThat(jpa.queryLong("SELECT sum(amount) FROM ledger_entry")).isZero();
  }

  /** Two entity types interleaved, so that order_inserts has something to reorder. */
  private static void persistMixed(Session s) {
    Invoice invoice = new Invoice("acme");
    for (int i = 0; i < ROWS; i++) {
      s.persist(new LedgerEntry("entry " + i, 0));
      invoice.add("item " + i);
    }
    s.persist(invoice);
  }

  private static List<LedgerEntry> entries() {
    List<LedgerEntry> entries = new ArrayList<>();
    for (int i = 0; i < ROWS; i++) {
      entries.add(new LedgerEntry("entry " + i, 0));
    }
    return entries;
  }
}
