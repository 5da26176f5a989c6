package dev.fencing.jpa;

import static dev.fencing.jpa.JpaFixture.refusal;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A {@code StatelessSession}'s update of a per-row entity is judged by the row its identifier names
 * as the database holds it — but Hibernate's snapshot leaves out a soft-deleted row
 * ({@code @SoftDelete}), while the update ({@code where id = ?}) still writes it. Before, the
 * holder of {@code den:bob} rewrote alice's soft-deleted {@link Den} (owner moved to bob): the
 * hidden row is now read past the soft delete and judged by its resource.
 */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class SoftDeletedRowTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa = JpaFixture.start(db, Den.class);
  }

  @AfterEach
  void reset() {
    jpa.reset();
  }

  @AfterAll
  static void stop() {
    jpa.close();
  }

  /** Alice's den, soft-deleted by its holder, whose lease is returned. */
  private static Lease aliceDeletedHerDen() {
    jpa.seed("den:alice", new Den("d", "alice"));
    Lease alice = jpa.current("den:alice");
    try (FencingScope scope = Fencing.bind(alice)) {
      jpa.sessionFactory.inTransaction(s -> s.remove(s.find(Den.class, "d")));
    }
    assertThat(jpa.queryLong("SELECT count(*) FROM den WHERE deleted")).isEqualTo(1);
    return alice;
  }

  private static Den bobsDen() {
    Den den = new Den("d", "bob");
    den.size = 99;
    return den;
  }

  @Test
  void aStatelessUpdateOfASoftDeletedRowNeedsTheTokenOfItsResource() {
    aliceDeletedHerDen();

    try (FencingScope scope = Fencing.bind(jpa.current("den:bob"))) {
      MissingFencingTokenException refusal =
          refusal(
              MissingFencingTokenException.class,
              () -> jpa.sessionFactory.inStatelessTransaction(s -> s.update(bobsDen())));
      assertThat(refusal.resource()).isEqualTo("den:alice");
    }

    assertThat(jpa.queryLong("SELECT count(*) FROM den WHERE owner = 'alice'")).isEqualTo(1);
    assertThat(jpa.queryLong("SELECT size FROM den")).isZero();
  }

  @Test
  void withBothTokensTheSoftDeletedRowMoves() {
    Lease alice = aliceDeletedHerDen();

    try (FencingScope scope = Fencing.bind(jpa.current("den:bob").token(), alice.token())) {
      jpa.sessionFactory.inStatelessTransaction(s -> s.update(bobsDen()));
    }

    assertThat(jpa.queryLong("SELECT count(*) FROM den WHERE owner = 'bob'")).isEqualTo(1);
  }

  /** A live row is judged by Hibernate's snapshot as before: its own holder writes it. */
  @Test
  void aLiveRowIsWrittenByItsHolder() {
    jpa.seed("den:alice", new Den("d", "alice"));
    Den den = new Den("d", "alice");
    den.size = 7;

    try (FencingScope scope = Fencing.bind(jpa.current("den:alice"))) {
      jpa.sessionFactory.inStatelessTransaction(s -> s.update(den));
    }

    assertThat(jpa.queryLong("SELECT size FROM den")).isEqualTo(7);
  }

  /** No row at all: nothing hidden to judge, the stateless update writes nothing. */
  @Test
  void noRowAtAllNeedsOnlyTheInstancesResource() {
    try (FencingScope scope = Fencing.bind(jpa.current("den:bob"))) {
      Throwable thrown =
          org.assertj.core.api.Assertions.catchThrowable(
              () -> jpa.sessionFactory.inStatelessTransaction(s -> s.update(bobsDen())));
      assertThat(thrown).hasMessageContaining("Unexpected row count");
    }
    assertThat(jpa.count("den")).isZero();
  }
}
