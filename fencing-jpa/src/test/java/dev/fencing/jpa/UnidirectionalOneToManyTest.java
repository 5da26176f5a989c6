package dev.fencing.jpa;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import jakarta.persistence.CascadeType;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.JoinColumn;
import jakarta.persistence.OneToMany;
import jakarta.persistence.OrderColumn;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A unidirectional {@code @OneToMany} with {@code @JoinColumn} (no join table) whose elements are a
 * per-row {@code @Fenced} entity: Hibernate writes each element's foreign key with a collection
 * statement on the elements' table ({@code update hen set coop_id=? where id=?}). Each such row is
 * an element of the collection: its resource's token is required and the statements announced, so
 * the current holder passes, a zombie or a caller with no token for an element's resource is
 * refused. The statement clearing the owner's key from every row ({@code update hen set
 * coop_id=null where coop_id=?}) writes rows the session may not have loaded: it stays refused as a
 * native write of a per-row table unless that table is protected, where the database judges each
 * row.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class UnidirectionalOneToManyTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  /** Coop "a" of owner "a" is resource {@code coop:a}; its hens are unidirectional. */
  @Entity(name = "Coop")
  @Fenced(prefix = "coop:", attribute = "owner")
  static class Coop {
    @Id long id;
    String owner = "";

    @OneToMany(cascade = CascadeType.ALL)
    @JoinColumn(name = "coop_id")
    List<Hen> hens = new ArrayList<>();

    Coop() {}

    Coop(long id, String owner) {
      this.id = id;
      this.owner = owner;
    }
  }

  /** Yard "a" is resource {@code coop:a}; its hens are ordered by a column of their table. */
  @Entity(name = "Yard")
  @Fenced(prefix = "coop:", attribute = "owner")
  static class Yard {
    @Id long id;
    String owner = "";

    @OneToMany
    @JoinColumn(name = "yard_id")
    @OrderColumn(name = "yard_pos")
    List<Hen> hens = new ArrayList<>();

    Yard() {}

    Yard(long id, String owner) {
      this.id = id;
      this.owner = owner;
    }
  }

  /** A hen of owner "a" is resource {@code coop:a}. */
  @Entity(name = "Hen")
  @Fenced(prefix = "coop:", attribute = "owner")
  static class Hen {
    @Id long id;
    String owner = "";

    Hen() {}

    Hen(long id, String owner) {
      this.id = id;
      this.owner = owner;
    }
  }

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa = JpaFixture.start(db, Coop.class, Yard.class, Hen.class);
  }

  @AfterEach
  void reset() {
    JpaFixture.sql(
        jpa.pool,
        "DO $$ BEGIN IF EXISTS (SELECT FROM pg_trigger WHERE tgname = 'fencing_protect'"
            + " AND tgrelid = 'hen'::regclass) THEN PERFORM fencing.unprotect('hen'); END IF; END $$");
    jpa.reset();
  }

  @AfterAll
  static void stop() {
    jpa.close();
  }

  private static Coop coopWithAHen() {
    Coop coop = new Coop(1, "a");
    coop.hens.add(new Hen(1, "a"));
    return coop;
  }

  @Test
  void theCurrentHolderWritesTheElementKeys() {
    try (FencingScope scope = Fencing.bind(jpa.current("coop:a"))) {
      jpa.sessionFactory.inTransaction(s -> s.persist(coopWithAHen()));
    }
    assertThat(jpa.queryLong("SELECT coop_id FROM hen WHERE id = 1")).isEqualTo(1);
  }

  @Test
  void theCurrentHolderMovesElementsInAndOut() {
    jpa.seed("coop:a", coopWithAHen(), new Hen(2, "a"));
    try (FencingScope scope = Fencing.bind(jpa.current("coop:a"))) {
      jpa.sessionFactory.inTransaction(
          s -> {
            Coop coop = s.find(Coop.class, 1L);
            coop.hens.remove(0);
            coop.hens.add(s.find(Hen.class, 2L));
          });
    }
    assertThat(jpa.queryLong("SELECT count(*) FROM hen WHERE id = 1 AND coop_id IS NULL"))
        .isEqualTo(1);
    assertThat(jpa.queryLong("SELECT coop_id FROM hen WHERE id = 2")).isEqualTo(1);
  }

  @Test
  void aZombieWritesNoElementKey() {
    jpa.seed("coop:a", new Coop(1, "a"), new Hen(1, "a"));
    try (FencingScope scope = Fencing.bind(jpa.stale("coop:a"))) {
      JpaFixture.refusal(
          StaleFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s -> s.find(Coop.class, 1L).hens.add(s.find(Hen.class, 1L))));
    }
    assertThat(jpa.queryLong("SELECT count(*) FROM hen WHERE coop_id IS NOT NULL")).isZero();
  }

  @Test
  void anElementOfAResourceWithNoTokenIsRefused() {
    jpa.seed("coop:a", new Coop(1, "a"));
    jpa.seed("coop:b", new Hen(2, "b"));
    try (FencingScope scope = Fencing.bind(jpa.current("coop:a"))) {
      MissingFencingTokenException refusal =
          JpaFixture.refusal(
              MissingFencingTokenException.class,
              () ->
                  jpa.sessionFactory.inTransaction(
                      s -> s.find(Coop.class, 1L).hens.add(s.find(Hen.class, 2L))));
      assertThat(refusal.getMessage()).contains("resource coop:b").contains("Coop.hens");
    }
    assertThat(jpa.queryLong("SELECT count(*) FROM hen WHERE coop_id IS NOT NULL")).isZero();
  }

  @Test
  void orderedElementsAreRepositionedByTheHolderOnlyNotByAZombie() {
    jpa.seed("coop:a", new Yard(1, "a"), new Hen(1, "a"), new Hen(2, "a"));
    try (Lease holder = jpa.current("coop:a"); // released before the zombie's turn
        FencingScope scope = Fencing.bind(holder)) {
      jpa.sessionFactory.inTransaction(
          s -> {
            Yard yard = s.find(Yard.class, 1L);
            yard.hens.add(s.find(Hen.class, 1L));
            yard.hens.add(s.find(Hen.class, 2L));
          });
    }
    assertThat(jpa.queryLong("SELECT yard_pos FROM hen WHERE id = 2 AND yard_id = 1")).isEqualTo(1);

    try (FencingScope scope = Fencing.bind(jpa.stale("coop:a"))) {
      JpaFixture.refusal(
          StaleFencingTokenException.class,
          () -> jpa.sessionFactory.inTransaction(s -> s.find(Yard.class, 1L).hens.remove(0)));
    }
    assertThat(jpa.queryLong("SELECT yard_pos FROM hen WHERE id = 2 AND yard_id = 1")).isEqualTo(1);
    assertThat(jpa.queryLong("SELECT yard_pos FROM hen WHERE id = 1 AND yard_id = 1")).isZero();
  }

  @Test
  void aStatelessInsertJudgesEachElementByItsRowInTheDatabase() {
    jpa.seed("coop:b", new Hen(1, "b"));
    Coop coop = new Coop(1, "a");
    coop.hens.add(new Hen(1, "a")); // says coop:a, but its row is coop:b's
    Lease holder = jpa.current("coop:a");
    try (FencingScope scope = Fencing.bind(holder)) {
      MissingFencingTokenException refusal =
          JpaFixture.refusal(
              MissingFencingTokenException.class,
              () -> jpa.sessionFactory.inStatelessTransaction(s -> s.insert(coop)));
      assertThat(refusal.getMessage()).contains("resource coop:b");
    }
    assertThat(jpa.count("coop")).isZero();
    assertThat(jpa.queryLong("SELECT count(*) FROM hen WHERE coop_id IS NOT NULL")).isZero();

    JpaFixture.sql(jpa.pool, "UPDATE hen SET owner = 'a'"); // as the coop:a holder's hen
    try (FencingScope scope = Fencing.bind(holder)) {
      jpa.sessionFactory.inStatelessTransaction(s -> s.insert(coop));
    }
    assertThat(jpa.queryLong("SELECT coop_id FROM hen WHERE id = 1")).isEqualTo(1);
  }

  @Test
  void clearingTheOwnersKeyFromEveryRowStaysRefusedOnAnUnprotectedTable() {
    jpa.seed("coop:a", coopWithAHen());
    try (FencingScope scope = Fencing.bind(jpa.current("coop:a"))) {
      MissingFencingTokenException emptied =
          JpaFixture.refusal(
              MissingFencingTokenException.class,
              () -> jpa.sessionFactory.inTransaction(s -> s.find(Coop.class, 1L).hens.clear()));
      assertThat(emptied.getMessage()).contains("a bulk or native write to table hen");
      MissingFencingTokenException lastRemoved =
          JpaFixture.refusal(
              MissingFencingTokenException.class,
              () -> jpa.sessionFactory.inTransaction(s -> s.find(Coop.class, 1L).hens.remove(0)));
      assertThat(lastRemoved.getMessage()).contains("a bulk or native write to table hen");
      MissingFencingTokenException removed =
          JpaFixture.refusal(
              MissingFencingTokenException.class,
              () -> jpa.sessionFactory.inTransaction(s -> s.remove(s.find(Coop.class, 1L))));
      assertThat(removed.getMessage()).contains("a bulk or native write to table hen");
    }
    assertThat(jpa.queryLong("SELECT count(*) FROM hen WHERE coop_id = 1")).isEqualTo(1);
    assertThat(jpa.count("coop")).isEqualTo(1);
  }

  @Test
  void onAProtectedTableTheHolderPassesAndAZombieIsRefused() {
    JpaFixture.sql(jpa.pool, "SELECT fencing.protect_rows('hen', 'owner', 'coop:')");
    jpa.seed("coop:a", coopWithAHen()); // the current holder, under a lease released after
    assertThat(jpa.queryLong("SELECT coop_id FROM hen WHERE id = 1")).isEqualTo(1);

    try (FencingScope scope = Fencing.bind(jpa.stale("coop:a"))) {
      JpaFixture.refusal(
          StaleFencingTokenException.class,
          () -> jpa.sessionFactory.inTransaction(s -> s.find(Coop.class, 1L).hens.clear()));
    }
    assertThat(jpa.queryLong("SELECT count(*) FROM hen WHERE coop_id = 1")).isEqualTo(1);
  }
}
