package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The target of a write is found wherever comments stand between its keywords and its name, and
 * whatever the name's quoting or schema ({@link TableGuards#writtenTables}: {@link WriteTargets}).
 */
class WriteTargetsTest {
  @ParameterizedTest
  @ValueSource(
      strings = {
        "UPDATE /*x*/ account SET balance = 0",
        "UPDATE/*x*/account SET balance = 0",
        "update --x\n account set balance = 0",
        "UPDATE --x\r\n--y\n account SET balance = 0",
        "UPDATE /* a /* nested */ comment */ account SET balance = 0",
        "UPDATE /**/ ONLY /**/ account SET balance = 0",
        "UPDATE only --x\n account SET balance = 0",
        "UPDATE /*x*/ public.account SET balance = 0",
        "UPDATE public /*x*/ . /*y*/ account SET balance = 0",
        "UPDATE /*x*/ \"public\".\"account\" SET balance = 0",
        "UPDATE /*x*/ \"account\" SET balance = 0",
        "UPDATE /*x*/ ACCOUNT SET balance = 0",
        "DELETE /**/ FROM account",
        "DELETE FROM /**/ account",
        "delete --x\nfrom --y\naccount where id = 1",
        "DELETE /*a*/ FROM /*b*/ ONLY /*c*/ account",
        "INSERT /*x*/ INTO account VALUES (1)",
        "INSERT INTO /*x*/ account VALUES (1)",
        "insert --x\n into --y\n public.account (id) values (1)",
        "MERGE /*x*/ INTO account a USING src s ON a.id = s.id WHEN MATCHED THEN DELETE",
        "TRUNCATE /*x*/ account",
        "TRUNCATE /*x*/ TABLE /*y*/ account",
        "TRUNCATE other, /*x*/ account",
        "TRUNCATE ONLY other *, ONLY public.account",
        "COPY /*x*/ account FROM STDIN",
        "WITH x AS (SELECT 1) UPDATE /*x*/ account SET balance = 0",
        "SELECT 1; UPDATE /*x*/ account SET balance = 0",
        "DO $$ BEGIN UPDATE /*x*/ account SET balance = 0; END $$",
        "DO $body$ BEGIN DELETE --x\n FROM account; END $body$",
        "DO 'BEGIN EXECUTE ''UPDATE /*x*/ account SET balance = 0''; END'",
        "DO E'BEGIN UPDATE /*x*/ account SET balance = 0; END'",
        "/* update other */ UPDATE /*x*/ account SET balance = 0",
      })
  void aCommentBetweenTheKeywordsAndTheTableDoesNotHideIt(String sql) {
    assertThat(TableGuards.writtenTables(sql)).as(sql).contains("account");
  }

  /**
   * Forms the server reads as the table that neither the regular expression nor the first lexical
   * search saw: {@code ONLY (t)}, a Unicode-escaped identifier {@code U&"..."}, and the escapes of
   * an {@code E'...'} or {@code U&'...'} body the server executes.
   */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "UPDATE ONLY (account) SET balance = 0",
        "UPDATE ONLY ( public . account ) SET balance = 0",
        "DELETE FROM ONLY (account) WHERE id = 2",
        "TRUNCATE ONLY (account)",
        "TRUNCATE other, ONLY (account)",
        "UPDATE U&\"account\" SET balance = 0",
        "UPDATE u&\"\\0061ccount\" SET balance = 0",
        "UPDATE public.U&\"\\+000061ccount\" SET balance = 0",
        "UPDATE U&\"!0061ccount\" UESCAPE '!' SET balance = 0",
        "DELETE FROM U&\"\\0061ccount\"",
        "INSERT INTO U&\"\\0061ccount\" VALUES (1)",
        "DO E'BEGIN UPDATE \\x61ccount SET balance = 0; END'",
        "DO E'BEGIN UPDATE\\taccount SET balance = 0; END'",
        "DO E'BEGIN UPDATE \\141ccount SET balance = 0; END'",
        "DO E'BEGIN UPDATE \\u0061ccount SET balance = 0; END'",
        "DO E'BEGIN UPDATE \\U00000061ccount SET balance = 0; END'",
        "DO U&'BEGIN UPDATE \\0061ccount SET balance = 0; END'",
        "DO U&'BEGIN UPDATE !0061ccount SET balance = 0; END' UESCAPE '!'",
      })
  void whatTheServerReadsAsTheTableIsFound(String sql) {
    assertThat(TableGuards.writtenTables(sql)).as(sql).contains("account");
  }

  @Test
  void quotedNamesKeepTheirCase() {
    assertThat(TableGuards.writtenTables("UPDATE /*x*/ s.\"Account\" SET x = 1"))
        .contains("Account")
        .doesNotContain("account");
    assertThat(TableGuards.writtenTables("DELETE /*x*/ FROM \"we\"\"ird\"")).contains("we\"ird");
  }

  /**
   * A body the server executes is read as the server reads it under either setting of {@code
   * standard_conforming_strings}, at every depth: with it off, the {@code DO} body's {@code 'a\\'}
   * ends at the second quote, so the {@code --} that hides the {@code UPDATE} from the standard
   * reading is inside a literal (psql: the row is updated).
   */
  @Test
  void aBackslashInABodyIsReadBothWays() {
    assertThat(
            TableGuards.writtenTables(
                "DO $$ BEGIN PERFORM 'a\\' -- '; UPDATE account SET b = 0; END $$"))
        .containsExactly("account");
    assertThat(
            TableGuards.writtenTables(
                "DO $$ BEGIN EXECUTE $q$SELECT 'a\\' -- '; DELETE FROM account$q$; END $$"))
        .containsExactly("account");
  }

  /**
   * Literals nested deeper than the search reads are not left unread: the text counts as writing
   * every declared table.
   */
  @Test
  void aBodyNestedBeyondTheSearchWritesEveryDeclaredTable() {
    String deep =
        "DO $a$ BEGIN EXECUTE $b$ DO $c$ BEGIN EXECUTE $d$ DO $e$ BEGIN"
            + " UPDATE account SET b = 0; END $e$ $d$; END $c$ $b$; END $a$";
    TableGuards guards = new TableGuards();
    guards.declare("account", "account-resource");
    guards.declare("other", null);
    assertThat(guards.targets(deep))
        .containsExactlyInAnyOrder(
            new TableGuards.Guard("account", "account-resource"),
            new TableGuards.Guard("other", null));
    // one level less is read, and only its table counts
    String read =
        "DO $a$ BEGIN EXECUTE $b$ DO $c$ BEGIN EXECUTE $d$"
            + " UPDATE account SET b = 0 $d$; END $c$ $b$; END $a$";
    assertThat(guards.targets(read))
        .containsExactly(new TableGuards.Guard("account", "account-resource"));
    // no declared table can take the name that stands for every one
    assertThatThrownBy(() -> guards.declare("\"a\u0000b\"", "r"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("table must be a table name");
    assertThat(guards.targets("UPDATE \"a\u0000b\" SET x = 1")).isEmpty();
  }

  /**
   * What the lexical search found before is kept as it was (order, and a table once per naming); a
   * naming that both searches find counts once.
   */
  @Test
  void eachNamingCountsOnce() {
    assertThat(TableGuards.writtenTables("update account set balance = 0"))
        .containsExactly("account");
    assertThat(
            TableGuards.writtenTables(
                "update s.ledger set x = 1; insert into \"Entries\" values (1)"))
        .containsExactly("ledger", "Entries");
    assertThat(TableGuards.writtenTables("UPDATE /*x*/ account SET b = 0; DELETE FROM account"))
        .containsExactly("account", "account");
    assertThat(TableGuards.writtenTables("TRUNCATE a, /*x*/ b, c"))
        .containsExactlyInAnyOrder("a", "b", "c");
    assertThat(TableGuards.writtenTables("SELECT * FROM account")).isEmpty();
    // what a comment or a quoted name holds is not a target
    assertThat(TableGuards.writtenTables("SELECT 1 /* UPDATE account */")).isEmpty();
    assertThat(TableGuards.writtenTables("SELECT 1 AS \"update account\"")).isEmpty();
    assertThat(TableGuards.writtenTables("COPY (SELECT 1) TO STDOUT")).isEmpty();
    assertThat(WriteTargets.find("SELECT '--' ; UPDATE /*x*/ account SET b = 0"))
        .containsExactly("account");
    assertThat(WriteTargets.find("UPDATE /* unterminated account")).isEmpty();
  }

  private static final String UNREAD = WriteTargets.UNREAD;

  private static String prepared(String name) {
    return PreparedExecutions.MARKER + name;
  }

  /**
   * A top-level {@code EXECUTE name}: the prepared statement is what it writes, asked of the
   * connection ({@link PreparedExecutions}); where something of the user's may run first, or the
   * name is not read, every declared table.
   */
  @Test
  void anExecuteOfAPreparedStatementIsMarkedForItsStatement() {
    assertThat(WriteTargets.find("EXECUTE p")).containsExactly(prepared("p"));
    assertThat(WriteTargets.find("execute /*x*/ P (1, 'a', $2, -3, NULL, ?) ;"))
        .containsExactly(prepared("p"));
    assertThat(WriteTargets.find("EXECUTE \"P\"(E'x')")).containsExactly(prepared("P"));
    assertThat(WriteTargets.find("EXPLAIN ANALYZE EXECUTE p(1)")).containsExactly(prepared("p"));
    assertThat(WriteTargets.find("EXPLAIN (ANALYZE, BUFFERS) EXECUTE p"))
        .containsExactly(prepared("p"));
    assertThat(WriteTargets.find("CREATE TEMP TABLE x AS EXECUTE p"))
        .containsExactly(prepared("p"));
    // EXPLAIN ANALYZE runs the CREATE TABLE ... AS EXECUTE, and so the prepared statement
    assertThat(WriteTargets.find("EXPLAIN ANALYZE CREATE TABLE x AS EXECUTE p"))
        .containsExactly(prepared("p"));
    assertThat(WriteTargets.find("EXPLAIN (ANALYZE) CREATE TEMP TABLE x (a) AS EXECUTE p(1)"))
        .containsExactly(prepared("p"));
    assertThat(WriteTargets.find("EXECUTE p(1); UPDATE account SET b = 0"))
        .containsExactly(prepared("p"), "account");
    assertThat(WriteTargets.find("EXECUTE " + "p".repeat(70)))
        .containsExactly(prepared("p".repeat(63)));
    // user code may run before the prepared statement, or the name is not read
    assertThat(WriteTargets.find("SELECT 1; EXECUTE p")).containsExactly(UNREAD);
    assertThat(WriteTargets.find("DEALLOCATE p; PREPARE p AS SELECT 1; EXECUTE p"))
        .containsExactly(UNREAD);
    assertThat(WriteTargets.find("EXECUTE p(f(1))")).containsExactly(UNREAD);
    assertThat(WriteTargets.find("EXECUTE p('1'::int)")).containsExactly(UNREAD);
    assertThat(WriteTargets.find("EXECUTE p(1 || 2)")).containsExactly(UNREAD);
    assertThat(WriteTargets.find("EXECUTE U&\"p\"")).containsExactly(UNREAD);
    assertThat(WriteTargets.find("EXECUTE p(1")).containsExactly(UNREAD);
    assertThat(WriteTargets.find("EXECUTE")).containsExactly(UNREAD);
  }

  /** A column, an alias or a trigger's {@code EXECUTE FUNCTION} is no {@code EXECUTE} statement. */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "SELECT execute FROM account",
        "SELECT 1 AS execute",
        "EXPLAIN SELECT 1 AS execute",
        "SELECT a.execute, execute FROM account a WHERE execute > 0",
        "INSERT INTO ledger (execute) VALUES (1)",
        "UPDATE ledger SET execute = 1",
        "CREATE TRIGGER t AFTER UPDATE ON ledger FOR EACH ROW EXECUTE FUNCTION f()",
        "DO $$ BEGIN UPDATE ledger SET execute = 1; PERFORM execute FROM ledger; END $$",
        "DO $$ DECLARE x int; BEGIN SELECT execute INTO x FROM ledger; END $$",
      })
  void aWordExecuteThatStartsNoStatementIsNoExecute(String sql) {
    assertThat(WriteTargets.find(sql))
        .as(sql)
        .doesNotContain(UNREAD)
        .noneMatch(t -> t.startsWith(PreparedExecutions.MARKER));
  }

  /**
   * In a body, {@code EXECUTE} of a string computed when it runs, or a {@code format} placeholder
   * where the written table's name stands: every declared table.
   */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "DO $$ BEGIN EXECUTE format('UPDATE %I SET v = 1', 'account'); END $$",
        "DO $$ BEGIN EXECUTE 'UPDATE ' || 'account' || ' SET v = 1'; END $$",
        "DO $$ DECLARE q text := 'x'; BEGIN EXECUTE q; END $$",
        "DO $$ BEGIN IF true THEN EXECUTE q USING 1; END IF; END $$",
        "DO $$ DECLARE r record; BEGIN FOR r IN EXECUTE q LOOP END LOOP; END $$",
        "CREATE FUNCTION f() RETURNS SETOF int LANGUAGE plpgsql AS $$"
            + " BEGIN RETURN QUERY EXECUTE q; END $$",
        "DO $$ BEGIN EXECUTE ('UPDATE account SET v = 1'); END $$",
        "DO $$ BEGIN EXECUTE 'EXECUTE p'; END $$",
        "DO $$ BEGIN PERFORM format('DELETE FROM public.%I', 'account'); END $$",
        "DO $$ BEGIN PERFORM format('INSERT INTO acc%s VALUES (1)', 'ount'); END $$",
        "DO $$ BEGIN PERFORM format('TRUNCATE \"%s\"', 'account'); END $$",
        "DO $$ BEGIN PERFORM format('MERGE INTO %1$I USING s ON true', 'account'); END $$",
      })
  void aBodyExecutingAComputedStringWritesEveryDeclaredTable(String sql) {
    assertThat(WriteTargets.find(sql)).as(sql).contains(UNREAD);
  }

  /** A body's {@code EXECUTE} of one literal is read as before: its table, nothing more. */
  @Test
  void aBodyExecutingOneLiteralWritesItsTable() {
    assertThat(
            WriteTargets.find(
                "DO $$ DECLARE n int; BEGIN EXECUTE 'UPDATE account SET b = $1' USING 1;"
                    + " EXECUTE $q$SELECT count(*) FROM ledger$q$ INTO n;"
                    + " EXECUTE E'DELETE FROM ledger'; END $$"))
        .containsExactly("account", "ledger");
    assertThat(WriteTargets.find("DO $$ BEGIN EXECUTE 'UPDATE account SET b = ''%I'''; END $$"))
        .containsExactly("account");
  }

  /**
   * Without the connection, an {@code EXECUTE name} writes every declared table; with a connection,
   * what the server says the name stands for ({@link DynamicTargetTest}).
   */
  @Test
  void anExecuteWithoutTheConnectionWritesEveryDeclaredTable() {
    TableGuards guards = new TableGuards();
    guards.declare("account", "account-resource");
    guards.declare("other", null);
    assertThat(guards.targets("EXECUTE nosuch(1)"))
        .containsExactlyInAnyOrder(
            new TableGuards.Guard("account", "account-resource"),
            new TableGuards.Guard("other", null));
    assertThat(guards.lookUp("EXECUTE nosuch(1)")).isEqualTo(guards.targets("EXECUTE nosuch(1)"));
    assertThat(guards.targets("SELECT execute FROM account")).isEmpty();
    assertThat(guards.targets("DO $$ BEGIN EXECUTE format('UPDATE %I', 'x'); END $$")).hasSize(2);
  }
}
