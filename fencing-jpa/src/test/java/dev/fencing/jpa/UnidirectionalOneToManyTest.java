package dev.fencing.jpa;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import jakarta.persistence.CascadeType;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.JoinColumn;
import jakarta.persistence.OneToMany;
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
 * statement on the elements' table ({@code update hen set coop_id=? where id=?}), which names no
 * resource fencing-jpa could announce. Known false refusal, fail closed: refused as a native write
 * of a per-row table unless that table is protected, where the database judges each row.
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
    jpa = JpaFixture.start(db, Coop.class, Hen.class);
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
  void theCurrentHoldersElementKeysAreRefusedOnAnUnprotectedTable() {
    try (FencingScope scope = Fencing.bind(jpa.current("coop:a"))) {
      MissingFencingTokenException refusal =
          JpaFixture.refusal(
              MissingFencingTokenException.class,
              () -> jpa.sessionFactory.inTransaction(s -> s.persist(coopWithAHen())));
      assertThat(refusal.getMessage()).contains("a bulk or native write to table hen");
    }
    assertThat(jpa.count("coop")).isZero();
    assertThat(jpa.count("hen")).isZero();
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
