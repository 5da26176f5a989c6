package dev.fencing.jpa;

import static dev.fencing.jpa.JpaFixture.refusal;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Writes Hibernate cascades from an aggregate root: cascade persist and remove, orphan removal. */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class CascadeAndOrphanTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa = JpaFixture.start(db, Invoice.class, InvoiceLine.class);
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
  void cascadePersistWithTheCurrentTokenWritesTheRootAndItsLines() {
    try (FencingScope scope = Fencing.bind(jpa.current("billing"))) {
      jpa.sessionFactory.inTransaction(s -> s.persist(new Invoice("acme", "bolts", "nuts")));
    }

    assertThat(jpa.count("invoice")).isEqualTo(1);
    assertThat(jpa.count("invoice_line")).isEqualTo(2);
  }

  @Test
  void cascadePersistWithAStaleTokenWritesNothing() {
    try (FencingScope scope = Fencing.bind(jpa.stale("billing"))) {
      refusal(
          StaleFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s -> s.persist(new Invoice("acme", "bolts", "nuts"))));
    }

    assertThat(jpa.count("invoice")).isZero();
    assertThat(jpa.count("invoice_line")).isZero();
  }

  @Test
  void cascadeRemoveWithTheCurrentTokenRemovesTheRootAndItsLines() {
    Invoice invoice = new Invoice("acme", "bolts", "nuts");
    jpa.seed("billing", invoice);

    try (FencingScope scope = Fencing.bind(jpa.current("billing"))) {
      jpa.sessionFactory.inTransaction(s -> s.remove(s.find(Invoice.class, invoice.id)));
    }

    assertThat(jpa.count("invoice")).isZero();
    assertThat(jpa.count("invoice_line")).isZero();
  }

  @Test
  void cascadeRemoveWithAStaleTokenRemovesNothing() {
    Invoice invoice = new Invoice("acme", "bolts", "nuts");
    jpa.seed("billing", invoice);

    try (FencingScope scope = Fencing.bind(jpa.stale("billing"))) {
      refusal(
          StaleFencingTokenException.class,
          () -> jpa.sessionFactory.inTransaction(s -> s.remove(s.find(Invoice.class, invoice.id))));
    }

    assertThat(jpa.count("invoice")).isEqualTo(1);
    assertThat(jpa.count("invoice_line")).isEqualTo(2);
  }

  @Test
  void orphanRemovalWithTheCurrentTokenDeletesTheOrphan() {
    Invoice invoice = new Invoice("acme", "bolts", "nuts");
    jpa.seed("billing", invoice);

    try (FencingScope scope = Fencing.bind(jpa.current("billing"))) {
      jpa.sessionFactory.inTransaction(s -> s.find(Invoice.class, invoice.id).lines.remove(0));
    }

    assertThat(jpa.count("invoice_line")).isEqualTo(1);
  }

  @Test
  void orphanRemovalWithAStaleTokenDeletesNothing() {
    Invoice invoice = new Invoice("acme", "bolts", "nuts");
    jpa.seed("billing", invoice);

    try (FencingScope scope = Fencing.bind(jpa.stale("billing"))) {
      refusal(
          StaleFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s -> s.find(Invoice.class, invoice.id).lines.remove(0)));
    }

    assertThat(jpa.count("invoice_line")).isEqualTo(2);
  }

  @Test
  void orphanRemovalWithNoTokenIsRefusedBeforeTheDelete() {
    Invoice invoice = new Invoice("acme", "bolts", "nuts");
    jpa.seed("billing", invoice);

    MissingFencingTokenException refusal =
        refusal(
            MissingFencingTokenException.class,
            () ->
                jpa.sessionFactory.inTransaction(
                    s -> s.find(Invoice.class, invoice.id).lines.remove(0)));

    assertThat(refusal.resource()).isEqualTo("billing");
    assertThat(jpa.count("invoice_line")).isEqualTo(2);
  }
}
