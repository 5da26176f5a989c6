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
}
