package dev.fencing.jpa;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Inheritance;
import jakarta.persistence.InheritanceType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code TABLE_PER_CLASS} with {@code @Fenced} on a subclass only: a {@link Saw}'s rows are in
 * table {@code saw} alone, so a plain {@link Tool}'s writes (table {@code tool}) need no token,
 * while every write of a saw does.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class TablePerClassTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  /** Not fenced: its rows, in table {@code tool}, are no saw's. */
  @Entity(name = "Tool")
  @Inheritance(strategy = InheritanceType.TABLE_PER_CLASS)
  static class Tool {
    @Id long id;
    String name = "";

    Tool() {}

    Tool(long id) {
      this.id = id;
    }
  }

  /** Fenced with one resource; its rows, every column included, in table {@code saw}. */
  @Entity(name = "Saw")
  @Fenced("saws")
  static class Saw extends Tool {
    long teeth;

    Saw() {}

    Saw(long id) {
      super(id);
    }
  }

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa = JpaFixture.start(db, Tool.class, Saw.class);
  }

  @AfterEach
  void reset() {
    jpa.reset();
  }

  @AfterAll
  static void stop() {
    jpa.close();
  }

  /**
   * Red before: the saw's declared tables were its superclass's table closure, {@code tool}
   * included: "a write to table tool needs a fencing token for resource "saws", and none is bound".
   */
  @Test
  void aPlainToolsWritesNeedNoToken() {
    jpa.sessionFactory.inTransaction(s -> s.persist(new Tool(1)));
    jpa.sessionFactory.inTransaction(s -> s.find(Tool.class, 1L).name = "hammer");
    jpa.sessionFactory.inTransaction(
        s -> s.createNativeMutationQuery("update tool set name = 'mallet'").executeUpdate());
    assertThat(JpaFixture.query(jpa.pool, "select name from tool")).isEqualTo("mallet");
    jpa.sessionFactory.inTransaction(s -> s.remove(s.find(Tool.class, 1L)));
    assertThat(jpa.count("tool")).isZero();
  }

  @Test
  void aSawsWritesStayFenced() {
    jpa.seed("saws", new Saw(1));
    JpaFixture.refusal(
        MissingFencingTokenException.class,
        () -> jpa.sessionFactory.inTransaction(s -> s.persist(new Saw(2))));
    JpaFixture.refusal(
        MissingFencingTokenException.class,
        () ->
            jpa.sessionFactory.inTransaction(
                s -> s.createNativeMutationQuery("delete from saw").executeUpdate()));
    JpaFixture.refusal(
        MissingFencingTokenException.class,
        () ->
            jpa.sessionFactory.inTransaction(
                s -> s.createMutationQuery("delete from Tool").executeUpdate()));
    try (FencingScope scope = Fencing.bind(jpa.stale("saws"))) {
      JpaFixture.refusal(
          StaleFencingTokenException.class,
          () -> jpa.sessionFactory.inTransaction(s -> s.find(Saw.class, 1L).teeth = 9));
    }
    assertThat(jpa.count("saw")).isEqualTo(1);
    assertThat(jpa.queryLong("select teeth from saw")).isZero();
  }
}
