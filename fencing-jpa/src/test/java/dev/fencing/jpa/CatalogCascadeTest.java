package dev.fencing.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.testing.TestDatabaseExtension;
import java.util.Map;
import java.util.function.Consumer;
import org.hibernate.MappingException;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A foreign key whose action writes a fenced table, declared by the application's own SQL (a Flyway
 * or Liquibase migration) rather than by the mapping: PostgreSQL runs it inside the write of the
 * referenced row, which needs no token. Before, such a {@code SessionFactory} started, and deleting
 * an unfenced {@link Barn} (or changing its key) with no token bound at all deleted (or changed)
 * its fenced {@link Foal}s. fencing-jpa now reads the keys of the fenced tables from {@code
 * pg_catalog} once Hibernate's schema management has run, and refuses them as it refuses a mapped
 * {@code @OnDelete}. Each test declares the schema itself, with {@code hibernate.hbm2ddl.auto =
 * none}, as an application whose migrations own it does; if the {@code SessionFactory} starts
 * anyway, the test makes the write with no token and checks what it did to the fenced rows.
 */
class CatalogCascadeTest {
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

  @BeforeEach
  void dropTables() {
    sql(
        "DROP SCHEMA IF EXISTS stable CASCADE",
        "DROP VIEW IF EXISTS foals",
        "DROP TABLE IF EXISTS foal, barn, paddock, cage, hutch, herd CASCADE",
        "CREATE TABLE barn (id varchar(255) PRIMARY KEY)",
        "CREATE TABLE paddock (id varchar(255) PRIMARY KEY)",
        "INSERT INTO barn VALUES ('b')",
        "INSERT INTO paddock VALUES ('p')");
  }

  /**
   * Starts Hibernate over the schema as it is, and, if it starts, runs {@code write} with no token
   * bound; the exception that stopped the start, null if it started.
   */
  private static Throwable startAndWrite(Map<String, ?> settings, Consumer<Session> write) {
    return startAndWrite(settings, write, Barn.class, Foal.class);
  }

  private static Throwable startAndWrite(
      Map<String, ?> settings, Consumer<Session> write, Class<?>... entities) {
    return catchThrowable(
        () -> {
          try (SessionFactory started =
              JpaFixture.sessionFactory(FencedDataSource.wrap(pool), settings, entities)) {
            started.inTransaction(write);
          }
        });
  }

  private static Throwable startAndWrite(Consumer<Session> write) {
    return startAndWrite(Map.of("hibernate.hbm2ddl.auto", "none"), write);
  }

  private static String refusal(Throwable thrown) {
    assertThat(thrown).as("Hibernate must refuse to start").isNotNull();
    for (Throwable t = thrown; t != null; t = t.getCause()) {
      if (t instanceof MappingException) {
        return t.getMessage();
      }
    }
    throw new AssertionError("no MappingException in " + thrown, thrown);
  }

  private static void deleteBarn(Session session) {
    session.remove(session.find(Barn.class, "b"));
  }

  @Test
  void aMigrationsOnDeleteCascadeIntoAFencedTableIsRefusedAtStart() {
    sql(
        "CREATE TABLE foal (id varchar(255) PRIMARY KEY,"
            + " barn_id varchar(255) REFERENCES barn ON DELETE CASCADE)",
        "INSERT INTO foal VALUES ('f', 'b')");

    Throwable thrown = startAndWrite(CatalogCascadeTest::deleteBarn);

    assertThat(query("SELECT count(*) FROM foal"))
        .as("the unfenced barn's delete, with no token, must not delete the fenced foal")
        .isEqualTo("1");
    assertThat(refusal(thrown))
        .contains("@Fenced on entity dev.fencing.jpa.Foal")
        .contains(
            "the foreign key of table foal on [barn_id] to table barn is ON DELETE CASCADE"
                + " (constraint foal_barn_id_fkey of public.foal, in the database)")
        .contains("fence the referenced entity with the same resource");
  }

  @Test
  void aMigrationsOnDeleteSetNullIntoAFencedTableIsRefusedAtStart() {
    sql(
        "CREATE TABLE foal (id varchar(255) PRIMARY KEY,"
            + " barn_id varchar(255) REFERENCES barn ON DELETE SET NULL)",
        "INSERT INTO foal VALUES ('f', 'b')");

    Throwable thrown =
        startAndWrite(s -> s.createNativeMutationQuery("DELETE FROM barn").executeUpdate());

    assertThat(query("SELECT barn_id FROM foal"))
        .as("the fenced foal's reference must not be cleared with no token")
        .isEqualTo("b");
    assertThat(refusal(thrown))
        .contains("table foal on [barn_id] to table barn is ON DELETE SET NULL (constraint");
  }

  /** The referenced key changed: {@code ON UPDATE CASCADE} rewrites the fenced rows' reference. */
  @Test
  void aMigrationsOnUpdateCascadeIntoAFencedTableIsRefusedAtStart() {
    sql(
        "CREATE TABLE foal (id varchar(255) PRIMARY KEY,"
            + " barn_id varchar(255) REFERENCES barn ON UPDATE CASCADE)",
        "INSERT INTO foal VALUES ('f', 'b')");

    Throwable thrown =
        startAndWrite(
            s -> s.createNativeMutationQuery("UPDATE barn SET id = 'moved'").executeUpdate());

    assertThat(query("SELECT barn_id FROM foal"))
        .as("the fenced foal must not be rewritten with no token")
        .isEqualTo("b");
    assertThat(refusal(thrown))
        .contains("table foal on [barn_id] to table barn is ON UPDATE CASCADE (constraint");
  }

  /**
   * A table no entity maps is written through the {@code FencedDataSource} with no token at all
   * (and by anything else without it): its rows' deletes must not delete fenced ones.
   */
  @Test
  void aCascadeFromATableNoEntityMapsIsRefusedAtStart() {
    sql(
        "CREATE TABLE foal (id varchar(255) PRIMARY KEY, barn_id varchar(255) REFERENCES barn,"
            + " paddock_id varchar(255) REFERENCES paddock ON DELETE CASCADE)",
        "INSERT INTO foal VALUES ('f', 'b', 'p')");

    Throwable thrown =
        startAndWrite(s -> s.createNativeMutationQuery("DELETE FROM paddock").executeUpdate());

    assertThat(query("SELECT count(*) FROM foal")).isEqualTo("1");
    assertThat(refusal(thrown))
        .contains("table foal on [paddock_id] to table paddock is ON DELETE CASCADE (constraint");
  }

  /**
   * Fenced tables are known by name in every schema, as the {@code FencedDataSource} guards their
   * writes: a table of the fenced table's name in another schema needs its tokens too, and a
   * cascade into it is refused the same way, the schema named.
   */
  @Test
  void aCascadeIntoATableOfTheFencedNameInAnotherSchemaIsRefusedAtStart() {
    sql(
        "CREATE TABLE foal (id varchar(255) PRIMARY KEY, barn_id varchar(255) REFERENCES barn)",
        "CREATE SCHEMA stable",
        "CREATE TABLE stable.foal (id varchar(255) PRIMARY KEY,"
            + " barn_id varchar(255) REFERENCES public.barn ON DELETE CASCADE)",
        "INSERT INTO stable.foal VALUES ('f', 'b')");

    Throwable thrown =
        startAndWrite(s -> s.createNativeMutationQuery("DELETE FROM barn").executeUpdate());

    assertThat(query("SELECT count(*) FROM stable.foal")).isEqualTo("1");
    assertThat(refusal(thrown))
        .contains("table foal on [barn_id] to table barn is ON DELETE CASCADE")
        .contains("of stable.foal, in the database");
  }

  /**
   * A key declared on a partition of a fenced table (not on the partitioned table) deletes rows of
   * the fenced table: they are its rows. Before, the partition's name matched no fenced table and
   * the barn's delete, with no token, deleted the fenced foal.
   */
  @Test
  void aCascadeDeclaredOnAPartitionOfAFencedTableIsRefusedAtStart() {
    sql(
        "CREATE TABLE foal (id varchar(255) PRIMARY KEY, barn_id varchar(255))"
            + " PARTITION BY LIST (id)",
        "CREATE TABLE foal_f PARTITION OF foal FOR VALUES IN ('f')",
        "ALTER TABLE foal_f ADD CONSTRAINT foal_f_barn FOREIGN KEY (barn_id) REFERENCES barn"
            + " ON DELETE CASCADE",
        "INSERT INTO foal VALUES ('f', 'b')");

    Throwable thrown =
        startAndWrite(s -> s.createNativeMutationQuery("DELETE FROM barn").executeUpdate());

    assertThat(query("SELECT count(*) FROM foal"))
        .as("the unfenced barn's delete, with no token, must not delete the fenced foal")
        .isEqualTo("1");
    assertThat(refusal(thrown))
        .contains("@Fenced on entity dev.fencing.jpa.Foal")
        .contains(
            "the foreign key of table foal on [barn_id] to table barn is ON DELETE CASCADE"
                + " (constraint foal_f_barn of public.foal_f, in the database; public.foal_f is a"
                + " partition or inheritance child of foal)");
  }

  /**
   * An inheritance child's rows are read, updated and deleted through its parent: a cascading key
   * of a child of a fenced table deletes rows Hibernate loads as the fenced entity's.
   */
  @Test
  void aCascadeDeclaredOnAnInheritanceChildOfAFencedTableIsRefusedAtStart() {
    sql(
        "CREATE TABLE foal (id varchar(255) PRIMARY KEY, barn_id varchar(255) REFERENCES barn)",
        "CREATE TABLE herd (CONSTRAINT herd_barn FOREIGN KEY (barn_id) REFERENCES barn"
            + " ON DELETE CASCADE) INHERITS (foal)",
        "INSERT INTO herd VALUES ('f', 'b')");

    Throwable thrown =
        startAndWrite(s -> s.createNativeMutationQuery("DELETE FROM barn").executeUpdate());

    assertThat(query("SELECT count(*) FROM foal")).isEqualTo("1");
    assertThat(refusal(thrown))
        .contains(
            "table foal on [barn_id] to table barn is ON DELETE CASCADE (constraint herd_barn of"
                + " public.herd, in the database; public.herd is a partition or inheritance child"
                + " of foal)");
  }

  /**
   * A fenced table that is a partition takes the partitioned table's key (PostgreSQL copies it to
   * every partition): before, neither the partitioned table's name nor the copy was read.
   */
  @Test
  void aCascadeOfThePartitionedTableOfAFencedPartitionIsRefusedAtStart() {
    sql(
        "CREATE TABLE herd (id varchar(255) PRIMARY KEY,"
            + " barn_id varchar(255) REFERENCES barn ON DELETE CASCADE) PARTITION BY LIST (id)",
        "CREATE TABLE foal PARTITION OF herd FOR VALUES IN ('f')",
        "INSERT INTO foal VALUES ('f', 'b')");

    Throwable thrown =
        startAndWrite(s -> s.createNativeMutationQuery("DELETE FROM barn").executeUpdate());

    assertThat(query("SELECT count(*) FROM foal")).isEqualTo("1");
    assertThat(refusal(thrown))
        .contains(
            "table foal on [barn_id] to table barn is ON DELETE CASCADE (constraint"
                + " herd_barn_id_fkey of public.herd, in the database; foal is a partition of"
                + " public.herd)");
  }

  /**
   * A rule is a cascade declared by other means: PostgreSQL rewrites the unfenced barn's {@code
   * DELETE} into one of the fenced foals too, a write no statement of the application names.
   * Before, Hibernate started and the barn's delete, with no token, deleted the foal.
   */
  @Test
  void aRuleOfAnotherTableThatWritesAFencedTableIsRefusedAtStart() {
    sql(
        "CREATE TABLE foal (id varchar(255) PRIMARY KEY, barn_id varchar(255))",
        "CREATE RULE barn_gone AS ON DELETE TO barn"
            + " DO ALSO DELETE FROM foal WHERE barn_id = OLD.id",
        "INSERT INTO foal VALUES ('f', 'b')");

    Throwable thrown =
        startAndWrite(s -> s.createNativeMutationQuery("DELETE FROM barn").executeUpdate());

    assertThat(query("SELECT count(*) FROM foal")).isEqualTo("1");
    assertThat(refusal(thrown))
        .contains("@Fenced on entity dev.fencing.jpa.Foal")
        .contains(
            "a rule barn_gone ON DELETE TO barn, in the database, whose actions name public.foal:"
                + " PostgreSQL runs it inside a write of barn");
  }

  /** A rule that names no fenced table (nor a view's) is none of fencing's business. */
  @Test
  void aRuleThatNamesNoFencedTableIsKept() {
    sql(
        "CREATE TABLE foal (id varchar(255) PRIMARY KEY, barn_id varchar(255))",
        "CREATE RULE barn_gone AS ON DELETE TO barn DO ALSO DELETE FROM paddock",
        "CREATE VIEW foals AS SELECT * FROM foal");

    assertThat(startAndWrite(s -> {})).isNull();
  }

  /**
   * A {@code JOINED} subclass's table keeps its key to the superclass table (the same row),
   * declared in SQL as well as by {@code @OnDelete}; a key on the same columns to another table is
   * not a row's own part: deleting that table's row deleted the fenced {@link Cage}'s part with no
   * token.
   */
  @Test
  void onlyARowsOwnKeyToItsOwnersTableIsKept() {
    sql(
        "CREATE TABLE hutch (id varchar(255) PRIMARY KEY)",
        "CREATE TABLE cage (bars bigint NOT NULL,"
            + " id varchar(255) PRIMARY KEY REFERENCES hutch ON DELETE CASCADE)",
        "INSERT INTO hutch VALUES ('b')",
        "INSERT INTO cage VALUES (3, 'b')");
    Map<String, String> none = Map.of("hibernate.hbm2ddl.auto", "none");
    assertThat(startAndWrite(none, s -> {}, Hutch.class, Cage.class))
        .as("the subclass table's key to its superclass table starts")
        .isNull();

    sql(
        "ALTER TABLE cage ADD CONSTRAINT cage_barn FOREIGN KEY (id) REFERENCES barn ON DELETE CASCADE");
    Throwable thrown =
        startAndWrite(
            none,
            s -> s.createNativeMutationQuery("DELETE FROM barn").executeUpdate(),
            Barn.class,
            Hutch.class,
            Cage.class);

    assertThat(query("SELECT count(*) FROM cage")).isEqualTo("1");
    assertThat(refusal(thrown))
        .contains("@Fenced on entity dev.fencing.jpa.Cage")
        .contains(
            "table cage on [id] to table barn is ON DELETE CASCADE (constraint cage_barn of"
                + " public.cage, in the database)")
        .contains("a table whose rows name their own resources takes no database action");
  }

  /**
   * With {@code hbm2ddl.auto = create} the check reads the schema Hibernate created, not the one it
   * replaced: a stale table with a cascading key does not refuse the start, and the new key has no
   * action.
   */
  @Test
  void theCheckReadsTheSchemaHibernateCreated() {
    sql(
        "CREATE TABLE foal (id varchar(255) PRIMARY KEY,"
            + " barn_id varchar(255) REFERENCES barn ON DELETE CASCADE)");

    Throwable thrown = startAndWrite(Map.of("hibernate.hbm2ddl.auto", "create"), s -> {});

    assertThat(thrown).as("the created schema has no cascade").isNull();
    assertThat(
            query(
                "SELECT count(*) FROM pg_constraint WHERE conrelid = 'foal'::regclass"
                    + " AND contype = 'f' AND confdeltype = 'a'"))
        .isEqualTo("1");
  }

  /**
   * A key without a writing action starts (nothing refused for being declared outside the mapping),
   * and the unfenced parent's delete is refused by it.
   */
  @Test
  void aMigrationsKeyWithNoActionIsKept() {
    sql(
        "CREATE TABLE foal (id varchar(255) PRIMARY KEY,"
            + " barn_id varchar(255) REFERENCES barn ON DELETE RESTRICT)",
        "INSERT INTO foal VALUES ('f', 'b')");

    Throwable thrown = startAndWrite(CatalogCascadeTest::deleteBarn);

    assertThat(thrown)
        .as("started, and the delete failed on the key")
        .hasStackTraceContaining("foal_barn_id_fkey")
        .hasStackTraceContaining("violates foreign key constraint");
    assertThat(query("SELECT count(*) FROM foal")).isEqualTo("1");
  }

  private static void sql(String... statements) {
    JpaFixture.sql(pool, statements);
  }

  private static String query(String sql) {
    return JpaFixture.query(pool, sql);
  }
}
