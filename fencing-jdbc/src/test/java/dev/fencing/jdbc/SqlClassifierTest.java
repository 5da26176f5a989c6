package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class SqlClassifierTest {

  @ParameterizedTest(name = "read: {0}")
  @ValueSource(
      strings = {
        // plain queries
        "select 1",
        "SELECT * FROM accounts WHERE id = $1",
        "select * from accounts where id = ?",
        "SeLeCt name FrOm users",
        "values (1, 'a'), (2, 'b')",
        "table accounts",
        "select a.id, b.name from a join b on (a.id = b.a_id) left join c using (id)",
        "select * from t where id in (select id from u where exists (select 1 from v))",
        "select * from (select 1 as x) s where s.x > 0",
        "select x from t where a = any(array[1, 2]) and b between (1) and (2)",
        "select 1e5, 1.5, .5, $1::int, -2",
        "select * from t order by update_time desc",
        "select deleted, inserted_at, merged_by, into_count from t",
        // allowed functions and syntax that looks like calls
        "select count(*) from t",
        "select count(distinct a), sum(b), avg(c), min(d), max(e) from t group by f"
            + " having count(*) > 1",
        "select lower(name), upper(name), length(name), coalesce(nick, name) from users",
        "select now(), current_timestamp, date_trunc('day', created_at) from t",
        "select jsonb_build_object('a', 1) ->> 'a', to_char(now(), 'YYYY')",
        "select string_agg(name, ',' order by name) from t",
        "select pg_catalog.count(*) from t",
        "select current_setting('application_name'), pg_backend_pid(), version()",
        "select txid_current_if_assigned(), pg_current_xact_id_if_assigned()",
        "select cast(x as numeric(10, 2)), y::varchar(20) from t",
        "select extract(epoch from now()), substring(s from 1 for 2), trim(both ' ' from s)",
        "select * from generate_series(1, 10) as g(i)",
        "select x from unnest(array[1, 2]) u(x)",
        "select v.a from (values (1), (2)) v(a)",
        "select a from t group by (a, b)",
        "select a, b from t group by rollup (a, b)",
        // window functions
        "select row_number() over (partition by a order by b), lag(b) over w from t window w as"
            + " (order by b)",
        "select sum(x) filter (where x > 0) from t",
        "select percentile_cont(0.5) within group (order by x) from t",
        // CTEs
        "with x as (select 1 as a) select a from x",
        "WITH a AS MATERIALIZED (SELECT 1) SELECT * FROM a",
        "with recursive t(n) as (values (1) union all select n + 1 from t where n < 10)"
            + " select sum(n) from t",
        "with a as (with b(y) as (select 1) select * from b), c as (select 2) select * from a, c",
        // EXPLAIN without ANALYZE only plans; with ANALYZE of a query runs a read
        "explain select * from t",
        "EXPLAIN (COSTS OFF, FORMAT JSON) SELECT 1",
        "explain update t set a = 1",
        "explain (analyze false) delete from t",
        "explain (analyze off, buffers) delete from t",
        "explain analyze select * from t",
        // comments, literals and quoted identifiers hide write keywords
        "/* insert */ select 1",
        "/* outer /* nested; delete */ still a comment */ select 1",
        "-- delete from t\nselect 1",
        "select 1 -- ; delete from t",
        "select 'delete from t; drop table t'",
        "select 'it''s; delete'",
        "select E'it\\'s; delete' as s",
        "select $$delete from t$$",
        "select $x$ ; insert into t values (1) $x$",
        "select $a$ $b$ update $b$ $a$",
        "select \"update\" from t",
        "select \"delete\"\"; insert\" from t",
        "select u.\"into\" from u",
        "select U&'d\\0061t\\+000061'",
        "select * from t where name like 'a\\_b%'",
        // several statements, whitespace, parentheses
        "select 1; select 2",
        "select 1;",
        "(select 1)",
        "((select 1) union all (select 2))",
        "  \n\t select 1",
        // cursors, COPY TO, session and transaction control
        "declare c cursor with hold for select * from t",
        "fetch 10 from c",
        "move next in c",
        "close c",
        "copy t to stdout",
        "COPY (SELECT * FROM t) TO STDOUT WITH (FORMAT csv)",
        "copy t (a, b) to stdout",
        "show search_path",
        "set search_path = public",
        "SET LOCAL statement_timeout = '5s'",
        "reset all",
        "discard all",
        "listen ch",
        "unlisten *",
        "deallocate all",
      })
  void reads(String sql) {
    assertThat(SqlClassifier.mayWrite(sql)).isFalse();
  }

  @ParameterizedTest(name = "write: {0}")
  @ValueSource(
      strings = {
        // DML
        "insert into t values (1)",
        "inSeRt INTO t values (1)",
        "INSERT INTO t (a) VALUES (1) ON CONFLICT (a) DO UPDATE SET b = excluded.b",
        "update t set a = 1",
        "delete from t",
        "merge into t using s on t.id = s.id when matched then update set a = s.a",
        "truncate t",
        "copy t from stdin",
        "COPY t (a, b) FROM '/tmp/x.csv' WITH (FORMAT csv)",
        "copy (delete from t returning *) to stdout",
        "copy t to program 'gzip > /tmp/t.gz'",
        "call p(1)",
        "{call p(?)}",
        "do $$ begin delete from t; end $$",
        "DO $body$ BEGIN PERFORM 1; END $body$ LANGUAGE plpgsql",
        // DDL, maintenance and everything unknown
        "create table t (a int)",
        "alter table t add column b int",
        "drop table t",
        "create index on t (a)",
        "grant select on t to r",
        "comment on table t is 'x'",
        "lock table t",
        "refresh materialized view v",
        "vacuum t",
        "analyze t",
        "cluster t",
        "reindex table t",
        "notify ch",
        "prepare p as select 1",
        "execute p",
        "checkpoint",
        "frobnicate the database",
        // comments and statements hiding a write
        "/* select */ delete from t",
        "-- select\ndelete from t",
        "select 1 /* ; */; delete from t",
        "select 1; delete from t",
        "delete from t; select 1",
        "select ';'; update t set a = 1",
        // writes inside queries
        "with x as (update t set a = 1 returning *) select * from x",
        "WITH x AS (DELETE FROM t RETURNING id) SELECT count(*) FROM x",
        "with a as (with b as (insert into t values (1) returning *) select * from b)"
            + " select * from a",
        "with a as (select 1), b as (merge into t using a on true when matched then delete)"
            + " select 1",
        "select * from t for update",
        "select * from t where a = 1 FOR NO KEY UPDATE SKIP LOCKED",
        "select * from t for share",
        "select * from t for key share",
        "SELECT * FROM t INNER JOIN u ON t.id = u.id FOR UPDATE OF t",
        "select * into t2 from t",
        "values (nextval('s'))",
        // calls of functions not known to be read-only
        "select my_func(1)",
        "select \"my_func\"(1)",
        "select * from my_srf(1)",
        "select public.f()",
        "select fencing.status('r')",
        "select pg_catalog.nextval('s')",
        "select nextval('s')",
        "select setval('s', 1)",
        "select lower(x), pg_advisory_lock(1) from t",
        "select * from t where x = (select f(y))",
        "select a, f(x) as materialized from t",
        "select * from t, dblink('db', 'delete from t') as (a int)",
        "with x as (select 1), y(a) as (select f(1)) select * from y",
        // EXPLAIN ANALYZE runs the statement
        "explain analyze update t set a = 1",
        "EXPLAIN ANALYZE VERBOSE DELETE FROM t",
        "explain (analyze) delete from t",
        "explain (analyze true, buffers) insert into t values (1)",
        "explain (format json, analyse) merge into t using s on true when matched then delete",
        // DECLARE is its query
        "declare c cursor for select nextval('s')",
        "declare c cursor for select * from t for update",
        "declare c cursor",
        // text that does not lex or parse: a write, never an exception
        "select 'unterminated",
        "select E'unterminated \\' still",
        "select $$unterminated",
        "select $tag$unterminated$other$",
        "select 1 /* unterminated",
        "select 1 /* nested /* only one closed */",
        "select \"unterminated",
        "(select 1",
        "select 1)",
        // a backslash may end a plain literal early (standard_conforming_strings off)
        "select 'x\\', '; delete from t; --'",
      })
  void writes(String sql) {
    assertThat(SqlClassifier.mayWrite(sql)).isTrue();
  }

  @ParameterizedTest(name = "nothing: \"{0}\"")
  @ValueSource(strings = {"", " ", ";", ";;", " ; ;\n", "-- only a comment", "/* c */ ; /* d */"})
  void noStatementIsNoWrite(String sql) {
    assertThat(SqlClassifier.classify(sql))
        .isEqualTo(new SqlClassifier.Classification(false, false, false));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '"',
      textBlock =
          """
          # sql                                     | mayWrite | ends  | rollsBackToSavepoint | endsAfterStatement
          begin                                     | false    | false | false | false
          START TRANSACTION ISOLATION LEVEL SERIALIZABLE | false | false | false | false
          COMMIT                                    | false    | true  | false | false
          commit and chain                          | false    | true  | false | false
          END                                       | false    | true  | false | false
          end transaction                           | false    | true  | false | false
          abort                                     | false    | true  | false | false
          ROLLBACK                                  | false    | true  | false | false
          rollback work                             | false    | true  | false | false
          ROLLBACK TO SAVEPOINT s1                  | false    | false | true | false
          rollback to s1                            | false    | false | true | false
          rollback transaction to savepoint s1      | false    | false | true | false
          ROLLBACK WORK TO s1                       | false    | false | true | false
          savepoint s1                              | false    | false | false | false
          release savepoint s1                      | false    | false | false | false
          rollback prepared 'x'                     | false    | true  | false | false
          commit prepared 'x'                       | false    | true  | false | false
          prepare transaction 'x'                   | true     | true  | false | false
          insert into t values (1); commit          | true     | true  | false | true
          select 1; rollback to s1; select 2        | false    | false | true | false
          rollback to s1; rollback                  | false    | true  | true | true
          /* commit */ select 'rollback'            | false    | false | false | false
          delete from t                             | true     | false | false | false
          """)
  void transactionControl(
      String sql,
      boolean mayWrite,
      boolean endsTransaction,
      boolean rollsBackToSavepoint,
      boolean endsAfterStatement) {
    assertThat(SqlClassifier.classify(sql))
        .isEqualTo(
            new SqlClassifier.Classification(
                mayWrite,
                endsTransaction,
                rollsBackToSavepoint,
                false,
                false,
                false,
                false,
                endsAfterStatement));
  }

  /**
   * One command that PostgreSQL refuses inside a transaction block and that runs no user code (so
   * writes no table rows), by its first words; not the forms that can run in one, not those that
   * can run user code (index expressions, a plain VACUUM's BRIN summaries too, event triggers), not
   * several statements, not a string that is several under either reading of a backslash.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '"',
      textBlock =
          """
          VACUUM                                       | false
          vacuum (verbose) t                           | false
          VACUUM s.t;                                  | false
          "VACUUM (""full"") t"                          | false
          vacuum (analyze, verbose) t                  | false
          VACUUM FULL t;                               | false
          VACUUM (FULL)                                | false
          VACUUM ANALYSE                               | false
          VACUUM (VERBOSE, FREEZE) t                   | false
          CREATE INDEX CONCURRENTLY i ON t (v)         | false
          create unique index concurrently on t (v)    | false
          DROP INDEX CONCURRENTLY IF EXISTS i          | false
          REINDEX INDEX CONCURRENTLY i                 | false
          REINDEX (CONCURRENTLY) TABLE t               | false
          REINDEX (VERBOSE) SCHEMA s                   | false
          reindex database d                           | false
          REINDEX SYSTEM                               | false
          CLUSTER                                      | false
          cluster verbose                              | false
          CLUSTER (VERBOSE)                            | false
          CREATE DATABASE d                            | true
          DROP DATABASE IF EXISTS d                    | true
          ALTER DATABASE d SET TABLESPACE s            | true
          CREATE TABLESPACE s LOCATION '/x'            | true
          DROP TABLESPACE s                            | true
          ALTER SYSTEM SET work_mem = '8MB'            | true
          CREATE SUBSCRIPTION s CONNECTION 'c' PUBLICATION p | false
          DROP SUBSCRIPTION s                          | false
          CREATE INDEX i ON t (v)                      | false
          DROP INDEX i                                 | false
          REINDEX TABLE t                              | false
          REINDEX (VERBOSE) INDEX i                    | false
          CLUSTER t                                    | false
          CLUSTER VERBOSE t USING i                    | false
          CLUSTER (VERBOSE) t                          | false
          ANALYZE t                                    | false
          ALTER DATABASE d RENAME TO e                 | false
          ALTER DATABASE d SET work_mem = 1            | false
          ALTER TABLE t ADD COLUMN database int        | false
          VACUUM a; VACUUM b                           | false
          SELECT 1; VACUUM                             | false
          select 'vacuum'                              | false
          (VACUUM)                                     | false
          "ALTER SYSTEM SET application_name = 'a\\' -- '; DELETE FROM t" | false
          "ALTER SYSTEM SET application_name = 'a\\'; DELETE FROM t; --'" | false
          "ALTER SYSTEM SET application_name = 'a\\\\b'" | true
          "ALTER SYSTEM SET application_name = 'a\\'"   | false
          """)
  void outsideTransaction(String sql, boolean outside) {
    assertThat(SqlClassifier.classify(sql).outsideTransaction()).isEqualTo(outside);
    if (outside) {
      assertThat(SqlClassifier.classify(sql).mayWrite()).isTrue();
    }
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '"',
      textBlock =
          """
          CALL p()                                     | true
          call p(1)                                    | true
          /* first */ CaLl s.p()                       | true
          DO $$ BEGIN COMMIT; END $$                   | true
          do 'BEGIN NULL; END'                         | true
          SELECT 1; CALL p()                           | true
          {call p()}                                   | true
          { ? = call f(?) }                            | true
          SELECT 'x'; {call p()}                       | true
          SELECT 'call p()'                            | false
          SELECT call FROM t                           | false
          INSERT INTO t VALUES ('do')                  | false
          SELECT 1 -- ; CALL p()                       | false
          SELECT 1 /* ; CALL p() */                    | false
          SELECT $$; CALL p() $$                       | false
          SELECT 'unterminated                         | true
          """)
  void nonAtomic(String sql, boolean nonAtomic) {
    assertThat(SqlClassifier.classify(sql).nonAtomic()).isEqualTo(nonAtomic);
    if (nonAtomic) {
      assertThat(SqlClassifier.classify(sql).mayWrite()).isTrue();
    }
  }

  @Test
  void mayWriteIsClassifyMayWrite() {
    for (String sql : List.of("select 1", "delete from t", "commit", "select 'x")) {
      assertThat(SqlClassifier.mayWrite(sql)).isEqualTo(SqlClassifier.classify(sql).mayWrite());
    }
  }

  @Test
  void everyPrefixOfTrickySqlClassifiesWithoutThrowing() {
    String sql =
        "WITH x(a, \"b\") AS NOT MATERIALIZED (SELECT E'\\'' || $t$ ; $t$ /* /* */ */ -- c\n"
            + " FROM t WHERE a = $1 AND b::numeric(3) IN (1.5e-3, 'x''y')) COPY (SELECT f(a)) TO"
            + " STDOUT; EXPLAIN (ANALYZE, FORMAT JSON) DECLARE c CURSOR FOR SELECT 1 FOR"
            + " SHARE; ROLLBACK WORK TO s";
    for (int end = 0; end <= sql.length(); end++) {
      String prefix = sql.substring(0, end);
      assertThatCode(() -> SqlClassifier.classify(prefix)).as(prefix).doesNotThrowAnyException();
    }
  }

  @Test
  void randomTextClassifiesWithoutThrowing() {
    String[] pieces = {
      "select",
      "explain",
      "analyze",
      "copy",
      "declare",
      "for",
      "to",
      "from",
      "with",
      "as",
      "(",
      ")",
      ",",
      ".",
      "::",
      ";",
      "'",
      "''",
      "E'",
      "\\",
      "\"",
      "$",
      "$$",
      "$a$",
      "$1",
      "--",
      "\n",
      "/*",
      "*/",
      "f",
      "rollback",
      "pg_catalog",
      " ",
      "0",
      "é",
    };
    Random random = new Random(42);
    for (int i = 0; i < 20_000; i++) {
      StringBuilder sql = new StringBuilder();
      int n = random.nextInt(30);
      for (int k = 0; k < n; k++) {
        sql.append(pieces[random.nextInt(pieces.length)]);
        if (random.nextBoolean()) {
          sql.append(' ');
        }
      }
      String text = sql.toString();
      assertThatCode(() -> SqlClassifier.classify(text)).as(text).doesNotThrowAnyException();
    }
  }

  @Test
  void aLongMultiRowInsertIsAWrite() {
    StringBuilder sql = new StringBuilder("insert into t (a, b) values ");
    for (int i = 0; i < 10_000; i++) {
      sql.append(i == 0 ? "" : ", ").append("(").append(i).append(", 'v").append(i).append("')");
    }
    assertThat(SqlClassifier.mayWrite(sql.toString())).isTrue();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "commit; insert into t values (1)",
        "ROLLBACK; delete from t",
        "rollback to savepoint s; update t set a = 1",
        "insert into t values (1); commit; insert into t values (2)",
        "end; select my_func()"
      })
  void aWriteAfterATransactionBoundaryInOneStringIsFlagged(String sql) {
    assertThat(SqlClassifier.classify(sql).writesAfterBoundary()).as(sql).isTrue();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "insert into t values (1); commit",
        "commit; select 1",
        "begin; insert into t values (1)",
        "savepoint s; insert into t values (1)",
        "rollback to s; select count(*) from t"
      })
  void noWriteAfterATransactionBoundaryIsNotFlagged(String sql) {
    assertThat(SqlClassifier.classify(sql).writesAfterBoundary()).as(sql).isFalse();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "commit; select 1",
        "end; select * from v",
        "insert into t values (1); commit; select 1",
        "rollback; rollback",
        "prepare transaction 'x'; select 1"
      })
  void anyStatementAfterTheEndOfTheTransactionIsFlagged(String sql) {
    assertThat(SqlClassifier.classify(sql).runsAfterEnd()).as(sql).isTrue();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "insert into t values (1); commit",
        "commit",
        "rollback to s; select 1",
        "select 1; commit;",
        "/* commit */ select 'commit'; select 1"
      })
  void nothingAfterTheEndOfTheTransactionIsNotFlagged(String sql) {
    assertThat(SqlClassifier.classify(sql).runsAfterEnd()).as(sql).isFalse();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "select * from v; commit",
        "select 1; commit;",
        "insert into t values (1); commit",
        "table v; end",
        "move all in c; commit and chain",
        "savepoint a; select * from v; release a; commit",
        "begin; select * from v; commit",
        "select * from v; rollback",
        "select 1;\nprepare transaction 'x'",
        "/* x */ select 1; /* y */ commit /* z */"
      })
  void anEndOfTheTransactionAfterAnotherStatementIsFlagged(String sql) {
    assertThat(SqlClassifier.classify(sql).endsAfterStatement()).as(sql).isTrue();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "commit",
        "commit;",
        "; ; commit ;",
        "end",
        "commit and chain",
        "select 1; select 'commit'",
        "/* commit */ select 1; select 2 -- commit",
        "commit; select 1"
      })
  void noEndOfTheTransactionAfterAnotherStatementIsNotFlagged(String sql) {
    assertThat(SqlClassifier.classify(sql).endsAfterStatement()).as(sql).isFalse();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "rollback",
        "ROLLBACK;",
        "; ; abort ;;",
        "Rollback Work",
        "rollback transaction and chain",
        "abort and no chain",
        "-- ends it\nrollback /* a /* nested */ comment */ work"
      })
  void aRollbackOfTheWholeTransactionIsRecognised(String sql) {
    assertThat(SqlClassifier.rollsBackTransaction(sql)).as(sql).isTrue();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        ";",
        "commit",
        "end",
        "rollback to a",
        "rollback work to savepoint a",
        "rollback prepared 'x'",
        "rollback and",
        "rollback and no",
        "rollback chain",
        "rollback work work",
        "rollback and chain now",
        "rollback; rollback",
        "select 1; rollback",
        "rollback; select 1",
        "\"rollback\"",
        "(rollback)",
        "rollback 'x'",
        "rollback /* unterminated"
      })
  void nothingElseIsARollbackOfTheWholeTransaction(String sql) {
    assertThat(SqlClassifier.rollsBackTransaction(sql)).as(sql).isFalse();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "begin",
        "BEGIN;",
        " Begin Work",
        "begin transaction isolation level repeatable read, read only",
        "; start transaction ;",
        "-- opens it\nSTART TRANSACTION /* comment */ READ WRITE"
      })
  void aStringOpeningATransactionBlockIsRecognised(String sql) {
    assertThat(SqlClassifier.beginsTransaction(sql)).as(sql).isTrue();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        ";",
        "start",
        "start work",
        "select 1",
        "begin; select 1",
        "select 1; begin",
        "begin; begin",
        "\"begin\"",
        "(begin)",
        "begin /* unterminated",
        "DO $$ BEGIN PERFORM 1; END $$"
      })
  void nothingElseOpensATransactionBlock(String sql) {
    assertThat(SqlClassifier.beginsTransaction(sql)).as(sql).isFalse();
  }
}
