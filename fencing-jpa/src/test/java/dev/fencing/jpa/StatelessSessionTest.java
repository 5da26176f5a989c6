package dev.fencing.jpa;

import static dev.fencing.jpa.JpaFixture.refusal;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import org.hibernate.StatelessSession;
import org.hibernate.Transaction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * StatelessSession insert, update, delete and upsert, and the collections it writes (whose events
 * carry no session).
 */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class StatelessSessionTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa = JpaFixture.start(db, LedgerEntry.class, Setting.class, Document.class, Person.class);
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
  void insertWithTheCurrentTokenIsWritten() {
    try (FencingScope scope = Fencing.bind(jpa.current("ledger"))) {
      jpa.sessionFactory.inStatelessTransaction(s -> s.insert(new LedgerEntry("a", 1)));
    }

    assertThat(jpa.count("ledger_entry")).isEqualTo(1);
  }

  @Test
  void insertWithAStaleTokenIsRefused() {
    try (FencingScope scope = Fencing.bind(jpa.stale("ledger"))) {
      refusal(
          StaleFencingTokenException.class,
          () -> jpa.sessionFactory.inStatelessTransaction(s -> s.insert(new LedgerEntry("a", 1))));
    }

    assertThat(jpa.count("ledger_entry")).isZero();
  }

  @Test
  void insertWithNoTokenIsRefusedAndItsTransactionCannotCommit() {
    StatelessSession s = jpa.statelessSession();
    Transaction tx = s.beginTransaction();
    s.insert(new Person("not fenced, written first"));
    refusal(MissingFencingTokenException.class, () -> s.insert(new LedgerEntry("a", 1)));
    assertThat(tx.getRollbackOnly()).isTrue();
    tx.commit(); // marked for rollback: Hibernate rolls back instead
    assertThat(tx.isActive()).isFalse();

    assertThat(jpa.count("ledger_entry")).isZero();
    assertThat(jpa.count("person")).isZero();
  }

  @Test
  void updateWithTheCurrentTokenIsWritten() {
    LedgerEntry entry = new LedgerEntry("a", 1);
    jpa.seed("ledger", entry);
    entry.amount = 2;

    try (FencingScope scope = Fencing.bind(jpa.current("ledger"))) {
      jpa.sessionFactory.inStatelessTransaction(s -> s.update(entry));
    }

    assertThat(jpa.queryLong("SELECT amount FROM ledger_entry")).isEqualTo(2);
  }

  @Test
  void updateWithAStaleTokenIsRefused() {
    LedgerEntry entry = new LedgerEntry("a", 1);
    jpa.seed("ledger", entry);
    entry.amount = 2;

    try (FencingScope scope = Fencing.bind(jpa.stale("ledger"))) {
      refusal(
          StaleFencingTokenException.class,
          () -> jpa.sessionFactory.inStatelessTransaction(s -> s.update(entry)));
    }

    assertThat(jpa.queryLong("SELECT amount FROM ledger_entry")).isEqualTo(1);
  }

  @Test
  void updateWithNoTokenIsRefused() {
    LedgerEntry entry = new LedgerEntry("a", 1);
    jpa.seed("ledger", entry);
    entry.amount = 2;

    refusal(
        MissingFencingTokenException.class,
        () -> jpa.sessionFactory.inStatelessTransaction(s -> s.update(entry)));

    assertThat(jpa.queryLong("SELECT amount FROM ledger_entry")).isEqualTo(1);
  }

  @Test
  void deleteWithTheCurrentTokenIsWritten() {
    LedgerEntry entry = new LedgerEntry("a", 1);
    jpa.seed("ledger", entry);

    try (FencingScope scope = Fencing.bind(jpa.current("ledger"))) {
      jpa.sessionFactory.inStatelessTransaction(s -> s.delete(entry));
    }

    assertThat(jpa.count("ledger_entry")).isZero();
  }

  @Test
  void deleteWithAStaleTokenIsRefused() {
    LedgerEntry entry = new LedgerEntry("a", 1);
    jpa.seed("ledger", entry);

    try (FencingScope scope = Fencing.bind(jpa.stale("ledger"))) {
      refusal(
          StaleFencingTokenException.class,
          () -> jpa.sessionFactory.inStatelessTransaction(s -> s.delete(entry)));
    }

    assertThat(jpa.count("ledger_entry")).isEqualTo(1);
  }

  @Test
  void deleteWithNoTokenIsRefused() {
    LedgerEntry entry = new LedgerEntry("a", 1);
    jpa.seed("ledger", entry);

    refusal(
        MissingFencingTokenException.class,
        () -> jpa.sessionFactory.inStatelessTransaction(s -> s.delete(entry)));

    assertThat(jpa.count("ledger_entry")).isEqualTo(1);
  }

  @Test
  void upsertWithTheCurrentTokenIsWritten() {
    try (FencingScope scope = Fencing.bind(jpa.current("config"))) {
      jpa.sessionFactory.inStatelessTransaction(s -> s.upsert(new Setting("mode", "fast")));
      jpa.sessionFactory.inStatelessTransaction(s -> s.upsert(new Setting("mode", "safe")));
    }

    assertThat(jpa.queryLong("SELECT count(*) FROM setting WHERE value = 'safe'")).isEqualTo(1);
    assertThat(jpa.count("setting")).isEqualTo(1);
  }

  @Test
  void upsertWithAStaleTokenIsRefused() {
    jpa.seed("config", new Setting("mode", "fast"));

    try (FencingScope scope = Fencing.bind(jpa.stale("config"))) {
      refusal(
          StaleFencingTokenException.class,
          () ->
              jpa.sessionFactory.inStatelessTransaction(
                  s -> s.upsert(new Setting("mode", "safe"))));
    }

    assertThat(jpa.queryLong("SELECT count(*) FROM setting WHERE value = 'fast'")).isEqualTo(1);
  }

  @Test
  void upsertWithNoTokenIsRefused() {
    refusal(
        MissingFencingTokenException.class,
        () ->
            jpa.sessionFactory.inStatelessTransaction(s -> s.upsert(new Setting("mode", "safe"))));

    assertThat(jpa.count("setting")).isZero();
  }

  @Test
  void insertWithAnElementCollectionWithTheCurrentTokenWritesTheCollection() {
    try (FencingScope scope = Fencing.bind(jpa.current("docs"))) {
      jpa.sessionFactory.inStatelessTransaction(s -> s.insert(new Document("spec", "a", "b")));
    }

    assertThat(jpa.count("document")).isEqualTo(1);
    assertThat(jpa.count("document_tag")).isEqualTo(2);
  }

  @Test
  void insertWithAnElementCollectionWithAStaleTokenWritesNothing() {
    try (FencingScope scope = Fencing.bind(jpa.stale("docs"))) {
      refusal(
          StaleFencingTokenException.class,
          () ->
              jpa.sessionFactory.inStatelessTransaction(
                  s -> s.insert(new Document("spec", "a", "b"))));
    }

    assertThat(jpa.count("document")).isZero();
    assertThat(jpa.count("document_tag")).isZero();
  }

  @Test
  void deleteWithAnElementCollectionWithNoTokenDeletesNothing() {
    Document document = new Document("spec", "a", "b");
    jpa.seed("docs", document);

    refusal(
        MissingFencingTokenException.class,
        () -> jpa.sessionFactory.inStatelessTransaction(s -> s.delete(document)));

    assertThat(jpa.count("document")).isEqualTo(1);
    assertThat(jpa.count("document_tag")).isEqualTo(2);
  }

  @Test
  void deleteWithAnElementCollectionWithTheCurrentTokenDeletesBoth() {
    Document document = new Document("spec", "a", "b");
    jpa.seed("docs", document);

    try (FencingScope scope = Fencing.bind(jpa.current("docs"))) {
      jpa.sessionFactory.inStatelessTransaction(s -> s.delete(document));
    }

    assertThat(jpa.count("document")).isZero();
    assertThat(jpa.count("document_tag")).isZero();
  }
}
