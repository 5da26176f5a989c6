package dev.fencing.jpa;

import static dev.fencing.jpa.JpaFixture.refusal;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import java.util.Map;
import org.hibernate.MappingException;
import org.hibernate.SessionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A foreign key whose {@code ON DELETE} action ({@code @OnDelete}) writes a fenced table is run by
 * PostgreSQL inside the delete of the row it references: no statement names the fenced table, so
 * neither fencing-jpa's events nor the {@code FencedDataSource} see fenced rows deleted or changed.
 * Before, deleting an unfenced {@link Kennel} with no token bound at all deleted its fenced {@link
 * Pup}s. Such a key is refused when Hibernate starts unless the referenced rows' deletes need every
 * token the fenced rows do: a row's own parts (an element collection, {@link Crate}) and a table
 * with the referenced table's resource ({@link Leash}) keep their cascades.
 */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class DatabaseCascadeTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static HikariDataSource pool;

  @BeforeAll
  static void start() {
    JpaFixture.migrate(db);
    pool = JpaFixture.pool(db);
  }

  @AfterAll
  static void stop() {
    pool.close();
  }

  private static String refusedAtStart(Class<?>... entities) {
    Throwable thrown =
        catchThrowable(
            () -> {
              try (SessionFactory started =
                  JpaFixture.sessionFactory(FencedDataSource.wrap(pool), Map.of(), entities)) {
                // started: the mapping was accepted
              }
            });
    assertThat(thrown).as("Hibernate must refuse to start").isNotNull();
    for (Throwable t = thrown; t != null; t = t.getCause()) {
      if (t instanceof MappingException) {
        return t.getMessage();
      }
    }
    throw new AssertionError("no MappingException in " + thrown, thrown);
  }

  @Test
  void anUnfencedParentsDatabaseCascadeIntoAFencedTableIsRefusedAtStart() {
    assertThat(refusedAtStart(Kennel.class, Pup.class))
        .contains("@Fenced on entity dev.fencing.jpa.Pup")
        .contains("table pup on [kennel_id] to table kennel is ON DELETE CASCADE");
  }

  /**
   * The same cascade written in the key's SQL definition ({@code @ForeignKey(foreignKeyDefinition =
   * "... on delete cascade")}), with no {@code @OnDelete}: before, it started, and {@code DELETE
   * FROM kennel} with no token bound deleted the fenced {@link Whelp}s.
   */
  @Test
  void aForeignKeyDefinitionsCascadeIntoAFencedTableIsRefusedAtStart() {
    assertThat(refusedAtStart(Kennel.class, Whelp.class))
        .contains("@Fenced on entity dev.fencing.jpa.Whelp")
        .contains("table whelp on [kennel_id] to table kennel is ON DELETE CASCADE");
  }

  /** The same cascade written in a column's SQL definition (a {@code REFERENCES} clause). */
  @Test
  void aColumnDefinitionsCascadeIntoAFencedTableIsRefusedAtStart() {
    assertThat(refusedAtStart(Kennel.class, Cub.class))
        .contains("@Fenced on entity dev.fencing.jpa.Cub")
        .contains(
            "column kennel_id of table cub (columnDefinition) declares a reference ON DELETE"
                + " CASCADE");
  }

  @Test
  void aDatabaseSetNullFromAnotherResourcesRowIsRefusedAtStart() {
    assertThat(refusedAtStart(Crate.class, Collar.class))
        .contains("dev.fencing.jpa.Collar")
        .contains("table collar on [crate_id] to table crate is ON DELETE SET_NULL");
  }

  @Test
  void aDatabaseCascadeIntoAPerRowTableIsRefusedAtStart() {
    assertThat(refusedAtStart(Crate.class, Tab.class))
        .contains("dev.fencing.jpa.Tab")
        .contains("to table crate is ON DELETE CASCADE")
        .as("fencing crate with tab's resource would not help: tab's rows name their own")
        .doesNotContain("with the same resource");
  }

  /**
   * The element collection's rows are the crate's, the leash has the crate's resource: deleting the
   * crate needs that resource's token, which covers them.
   */
  @Test
  void aDatabaseCascadeWithinOneResourceIsKept() {
    try (JpaFixture jpa = JpaFixture.start(db, Crate.class, Leash.class)) {
      assertThat(
              jpa.queryLong(
                  "SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND confdeltype = 'c'"
                      + " AND conrelid IN ('leash'::regclass, 'crate_label'::regclass)"))
          .as("both keys are ON DELETE CASCADE")
          .isEqualTo(2);
      Crate crate = new Crate("c");
      crate.labels.add("fragile");
      jpa.seed("pups", crate, new Leash("l", crate));

      try (FencingScope scope = Fencing.bind(jpa.current("collars"))) {
        refusal(
            MissingFencingTokenException.class,
            () ->
                jpa.sessionFactory.inTransaction(
                    s -> s.createNativeMutationQuery("DELETE FROM crate").executeUpdate()));
      }
      assertThat(jpa.count("leash")).isEqualTo(1);
      assertThat(jpa.count("crate_label")).isEqualTo(1);

      try (FencingScope scope = Fencing.bind(jpa.current("pups"))) {
        jpa.sessionFactory.inTransaction(
            s -> s.createNativeMutationQuery("DELETE FROM crate").executeUpdate());
      }
      assertThat(jpa.count("leash")).isZero();
      assertThat(jpa.count("crate_label")).isZero();
    }
  }

  /** A {@code JOINED} subclass's key: its row is the same row as the superclass table's. */
  @Test
  void aJoinedSubclassTablesCascadeIsKept() {
    try (JpaFixture jpa = JpaFixture.start(db, Hutch.class, Cage.class)) {
      assertThat(
              jpa.queryLong(
                  "SELECT count(*) FROM pg_constraint WHERE conrelid = 'cage'::regclass"
                      + " AND contype = 'f' AND confdeltype = 'c'"))
          .as("cage's key to hutch is ON DELETE CASCADE")
          .isEqualTo(1);
      jpa.seed("hutch:h", new Cage("h"));

      try (FencingScope scope = Fencing.bind(jpa.current("hutch:h"))) {
        jpa.sessionFactory.inTransaction(s -> s.remove(s.find(Hutch.class, "h")));
      }

      assertThat(jpa.count("hutch")).isZero();
      assertThat(jpa.count("cage")).isZero();
    }
  }
}
