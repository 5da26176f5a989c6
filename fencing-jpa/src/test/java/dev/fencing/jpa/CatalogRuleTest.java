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
 * Rules ({@code CREATE RULE}) of the application's own SQL, read by {@code CascadeCatalog} at
 * start: a rule whose actions write a fenced table is refused (PostgreSQL runs them inside the
 * write of the rule's table, which needs no token for the fenced rows), one that only reads a
 * fenced table is not. Which relations an action writes is read from the rule's query trees ({@code
 * pg_rewrite.ev_action}: each query's result relation), not from its SQL text. Each test declares
 * the schema itself ({@code hibernate.hbm2ddl.auto = none}); if the {@code SessionFactory} starts,
 * it deletes the unfenced {@link Barn} with no token bound and checks what that did to the fenced
 * {@link Foal}.
 */
class CatalogRuleTest {
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
  void tables() {
    sql(
        "DROP VIEW IF EXISTS foals, pens CASCADE",
        "DROP TABLE IF EXISTS foal, barn, herd, barn_log CASCADE",
        "CREATE TABLE barn (id varchar(255) PRIMARY KEY)",
        "CREATE TABLE barn_log (foal varchar(255))",
        "INSERT INTO barn VALUES ('b')");
  }

  /** Starts Hibernate; if it starts, deletes the barn with no token bound. */
  private static Throwable startAndDeleteBarn() {
    Consumer<Session> write = s -> s.createNativeMutationQuery("DELETE FROM barn").executeUpdate();
    return catchThrowable(
        () -> {
          try (SessionFactory started =
              JpaFixture.sessionFactory(
                  FencedDataSource.wrap(pool),
                  Map.of("hibernate.hbm2ddl.auto", "none"),
                  Barn.class,
                  Foal.class)) {
            started.inTransaction(write);
          }
        });
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

  private static void foal() {
    sql(
        "CREATE TABLE foal (id varchar(255) PRIMARY KEY, barn_id varchar(255))",
        "INSERT INTO foal VALUES ('f', 'b')");
  }

  /**
   * A rule that logs the fenced foals of a deleted barn reads {@code foal} and writes the unfenced
   * log: no fenced row is written. Before, every table a rule's actions name was taken as written,
   * and Hibernate refused to start.
   */
  @Test
  void aRuleThatOnlyReadsAFencedTableIsKept() {
    foal();
    sql(
        "CREATE RULE barn_gone AS ON DELETE TO barn DO ALSO INSERT INTO barn_log"
            + " SELECT id FROM foal WHERE barn_id = OLD.id");

    assertThat(startAndDeleteBarn()).as("started, and the barn deleted").isNull();
    assertThat(query("SELECT count(*) FROM barn")).isEqualTo("0");
    assertThat(query("SELECT foal FROM barn_log")).isEqualTo("f");
    assertThat(query("SELECT count(*) FROM foal")).isEqualTo("1");
  }

  /** A write hidden in a {@code WITH} query of the action is still a write of the fenced table. */
  @Test
  void aRuleThatWritesAFencedTableInAWithQueryIsRefused() {
    foal();
    sql(
        "CREATE RULE barn_gone AS ON DELETE TO barn DO ALSO"
            + " WITH gone AS (DELETE FROM foal RETURNING id)"
            + " INSERT INTO barn_log SELECT id FROM gone");

    Throwable thrown = startAndDeleteBarn();

    assertThat(query("SELECT count(*) FROM foal")).isEqualTo("1");
    assertThat(refusal(thrown))
        .contains("a rule barn_gone ON DELETE TO barn, in the database, whose actions name")
        .contains("public.foal");
  }

  /**
   * Names that read as the query tree's field names (the tree's strings are not escaped for a
   * leading colon) hide no write: the rule is still refused.
   */
  @Test
  void namesThatLookLikeFieldsOfTheQueryTreeHideNoWrite() {
    foal();
    sql(
        "CREATE RULE barn_gone AS ON DELETE TO barn DO ALSO"
            + " DELETE FROM foal AS \":resultRelation\" USING (SELECT 1 AS \":commandType\","
            + " 2 AS \":rtable\", 3 AS \":relid\", 4 AS \":rtekind\") AS \":utilityStmt\""
            + " WHERE \":resultRelation\".barn_id = OLD.id");

    Throwable thrown = startAndDeleteBarn();

    assertThat(query("SELECT count(*) FROM foal")).isEqualTo("1");
    assertThat(refusal(thrown)).contains("a rule barn_gone ON DELETE TO barn");
  }

  /**
   * An automatically updatable view of the fenced table: the rule's {@code DELETE} of the view
   * deletes fenced foals, though the rule names only the view. Before, the view's name matched no
   * fenced table, Hibernate started, and the barn's delete, with no token, deleted the foal.
   */
  @Test
  void aRuleThatWritesAFencedTableThroughAViewIsRefused() {
    foal();
    sql(
        "CREATE VIEW foals AS SELECT * FROM foal",
        "CREATE VIEW pens AS SELECT * FROM foals",
        "CREATE RULE barn_gone AS ON DELETE TO barn DO ALSO DELETE FROM pens"
            + " WHERE barn_id = OLD.id");

    Throwable thrown = startAndDeleteBarn();

    assertThat(query("SELECT count(*) FROM foal"))
        .as("the unfenced barn's delete, with no token, must not delete the fenced foal")
        .isEqualTo("1");
    assertThat(refusal(thrown))
        .contains("@Fenced on entity dev.fencing.jpa.Foal")
        .contains(
            "a rule barn_gone ON DELETE TO barn, in the database, whose actions write public.pens,"
                + " a view of public.foal");
  }

  /** A view the rule only reads is not written: the rule is kept. */
  @Test
  void aRuleThatOnlyReadsAViewOfAFencedTableIsKept() {
    foal();
    sql(
        "CREATE VIEW foals AS SELECT * FROM foal",
        "CREATE RULE barn_gone AS ON DELETE TO barn DO ALSO INSERT INTO barn_log"
            + " SELECT id FROM foals WHERE barn_id = OLD.id");

    assertThat(startAndDeleteBarn()).isNull();
    assertThat(query("SELECT count(*) FROM foal")).isEqualTo("1");
  }

  /**
   * A write of an inheritance parent writes its children's rows: a rule that deletes from {@code
   * herd} deletes the fenced foals of its child {@code foal}. Before, only a partitioned table's
   * partitions were looked at, Hibernate started, and the barn's delete deleted the foal.
   */
  @Test
  void aRuleThatWritesTheInheritanceParentOfAFencedTableIsRefused() {
    sql(
        "CREATE TABLE herd (id varchar(255) PRIMARY KEY, barn_id varchar(255))",
        "CREATE TABLE foal () INHERITS (herd)",
        "INSERT INTO foal VALUES ('f', 'b')",
        "CREATE RULE barn_gone AS ON DELETE TO barn DO ALSO DELETE FROM herd"
            + " WHERE barn_id = OLD.id");

    Throwable thrown = startAndDeleteBarn();

    assertThat(query("SELECT count(*) FROM foal")).isEqualTo("1");
    assertThat(refusal(thrown))
        .contains(
            "a rule barn_gone ON DELETE TO barn, in the database, whose actions name public.herd,"
                + " and foal is a partition or inheritance child of public.herd");
  }

  /**
   * The trees are read, not given up on (which would refuse every rule naming a fenced table): the
   * written relations of a {@code WITH} write, of names that look like the tree's fields, of a
   * {@code NOTIFY} and of {@code NOTHING}.
   */
  @Test
  void theWrittenRelationsAreReadFromTheQueryTrees() {
    foal();
    sql(
        "CREATE RULE with_write AS ON DELETE TO barn DO ALSO"
            + " WITH gone AS (DELETE FROM foal RETURNING id) INSERT INTO barn_log SELECT id FROM gone",
        "CREATE RULE odd_names AS ON UPDATE TO barn DO ALSO"
            + " DELETE FROM foal AS \":resultRelation\" USING (SELECT 1 AS \":commandType\","
            + " 2 AS \":rtable\") AS \":utilityStmt\" WHERE \":resultRelation\".barn_id = OLD.id",
        "CREATE RULE notify AS ON INSERT TO barn DO ALSO NOTIFY barns",
        "CREATE RULE nothing AS ON INSERT TO barn_log DO INSTEAD NOTHING");
    long foal = Long.parseLong(query("SELECT 'foal'::regclass::oid"));
    long log = Long.parseLong(query("SELECT 'barn_log'::regclass::oid"));

    assertThat(RuleActions.written(action("with_write"))).containsExactlyInAnyOrder(foal, log);
    assertThat(RuleActions.written(action("odd_names"))).containsExactly(foal);
    assertThat(RuleActions.written(action("notify"))).isEmpty();
    assertThat(RuleActions.written(action("nothing"))).isEmpty();
    assertThat(RuleActions.written("({QUERY :commandType 2 :resultRelation 1 :utilityStmt <>"))
        .isNull();
  }

  private static String action(String rule) {
    return query("SELECT ev_action FROM pg_rewrite WHERE rulename = '" + rule + "'");
  }

  private static void sql(String... statements) {
    JpaFixture.sql(pool, statements);
  }

  private static String query(String sql) {
    return JpaFixture.query(pool, sql);
  }
}
