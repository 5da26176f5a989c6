package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.INVALID_RESOURCE;
import static dev.fencing.migrations.Fence.MISSING;
import static dev.fencing.migrations.Fence.STALE;
import static dev.fencing.migrations.Fence.assertFails;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
import java.io.StringReader;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.PGConnection;

/**
 * protect_rows_per_row (V18): one keyed row trigger per table, no statement trigger. A resource
 * passes once per transaction by the full decision; later rows pass on a tag keyed with a
 * per-session key the application role cannot read. What the application can write (the tags, the
 * markers, the settings) never lets an unchecked or stale write through.
 */
class ProtectedRowsPerRowTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final Duration TTL = Duration.ofMinutes(5);

  /** The application's login role: a member of the application role, granted the tables. */
  private static AppRole login;

  private static final String OWNER = FenceSql.unique("perrow_owner");
  private static final List<String> ACCOUNTS = List.of("acct/1", "acct/2", "acct/3");
  private static final int LARGE = 300;

  @BeforeAll
  static void setUp() throws SQLException {
    assertThat(Fence.migrate(db)).isEqualTo(Fence.MIGRATIONS);
    login = AppRole.create(db, "perrow_app");
    try (Connection c = db.connect()) {
      FenceSql.run(
          c,
          "ALTER DATABASE " + FenceSql.quoteIdentifier(db.name()) + " SET track_functions = 'all'");
      FenceSql.run(c, "CREATE ROLE " + OWNER + " NOLOGIN");
      FenceSql.run(c, "CREATE TABLE ledger (id int PRIMARY KEY, acct int, amount int NOT NULL)");
      FenceSql.run(
          c,
          "CREATE TABLE pledger (id int NOT NULL, acct int, amount int NOT NULL)"
              + " PARTITION BY RANGE (id)");
      FenceSql.run(c, "CREATE TABLE pledger_1 PARTITION OF pledger FOR VALUES FROM (0) TO (10000)");
      FenceSql.run(c, "CREATE TABLE whole (id int PRIMARY KEY, note text)");
      FenceSql.run(c, "CREATE TABLE sledger (id int PRIMARY KEY, acct int, amount int NOT NULL)");
      for (String t : List.of("ledger", "pledger", "pledger_1", "whole", "sledger")) {
        FenceSql.run(c, "ALTER TABLE " + t + " OWNER TO " + OWNER);
        login.grant("SELECT, INSERT, UPDATE, DELETE, TRUNCATE", t);
      }
      FenceSql.run(c, "SELECT fencing.protect_rows_per_row('ledger', 'acct', 'acct/')");
      FenceSql.run(c, "SELECT fencing.protect_rows_per_row('pledger', 'acct', 'acct/')");
      FenceSql.run(c, "SELECT fencing.protect('whole', 'acct/1')");
      FenceSql.run(c, "SELECT fencing.protect_rows('sledger', 'acct', 'acct/')");
    }
  }

  @AfterAll
  static void dropRoles() throws SQLException {
    if (login != null) { // null when setUp failed before creating it: its error stays the one shown
      login.close();
    }
    try (Connection c = db.connect()) {
      FenceSql.run(c, "DROP OWNED BY " + OWNER);
      FenceSql.run(c, "DROP ROLE " + OWNER);
    }
  }

  private final long[] tokens = new long[3];

  @BeforeEach
  void freshLeasesAndRows() throws SQLException {
    try (Connection c = db.connect()) {
      for (int i = 0; i < 3; i++) {
        tokens[i] = newToken(c, ACCOUNTS.get(i));
      }
      c.setAutoCommit(false);
      for (int i = 0; i < 3; i++) {
        Fence.check(c, ACCOUNTS.get(i), tokens[i]);
      }
      FenceSql.run(c, "DELETE FROM ledger");
      FenceSql.run(c, "DELETE FROM pledger");
      FenceSql.run(c, "INSERT INTO ledger VALUES (1, 1, 10), (2, 2, 20), (3, 3, 30)");
      FenceSql.run(c, "INSERT INTO pledger VALUES (1, 1, 10), (2, 2, 20), (3, 3, 30)");
      c.commit();
    }
  }

  private static long newToken(Connection c, String resource) throws SQLException {
    FenceSql.run(c, "SELECT fencing.create_resource(?)", resource);
    FenceSql.Status s = FenceSql.status(c, resource);
    if (s.holder() != null) {
      Fence.release(c, resource, s.leaseToken());
    }
    return Fence.acquire(c, resource, "test", TTL);
  }

  private String check(int account) {
    return "SELECT fencing.check_token('" + ACCOUNTS.get(account) + "', " + tokens[account] + ")";
  }

  private static String contents(Connection c) throws SQLException {
    return FenceSql.string(
        c,
        "SELECT concat_ws(' | ',"
            + " (SELECT string_agg(id || ':' || acct || ':' || amount, ',' ORDER BY id) FROM ledger),"
            + " (SELECT string_agg(id || ':' || acct || ':' || amount, ',' ORDER BY id)"
            + " FROM pledger))");
  }

  private static SQLException refused(
      Connection app, String sqlState, List<String> prepare, String write) throws SQLException {
    app.setAutoCommit(false);
    try {
      for (String s : prepare) {
        FenceSql.run(app, s);
      }
      return assertFails(sqlState, () -> FenceSql.run(app, write));
    } finally {
      app.rollback();
      app.setAutoCommit(true);
    }
  }

  private static String insertRows(String table, int from, int count, String acct) {
    return "INSERT INTO "
        + table
        + " SELECT g, "
        + acct
        + ", 0 FROM generate_series("
        + from
        + ", "
        + (from + count - 1)
        + ") g";
  }

  private static String tags(Connection c) throws SQLException {
    return String.valueOf(FenceSql.string(c, "SELECT current_setting('fencing.row_tags', true)"));
  }

  @Test
  void theTableHasOneRowTriggerAndTheTruncateTrigger() throws SQLException {
    try (Connection c = db.connect()) {
      assertThat(
              FenceSql.strings(
                  c,
                  "SELECT tgrelid::regclass || ' ' || tgname || ' ' || (tgtype & 1)::text"
                      + " FROM pg_trigger WHERE tgrelid IN ('pledger'::regclass,"
                      + " 'pledger_1'::regclass, 'ledger'::regclass)"
                      + " AND tgname LIKE 'fencing%' ORDER BY 1"))
          .containsExactly(
              "ledger fencing_protect 1",
              "ledger fencing_protect_truncate 0",
              "pledger fencing_protect 1",
              "pledger fencing_protect_truncate 0",
              "pledger_1 fencing_protect 1",
              "pledger_1 fencing_protect_truncate 0");
      assertThat(
              FenceSql.strings(
                  c,
                  "SELECT table_name || ' ' || per_row FROM fencing.protected_table"
                      + " ORDER BY table_name"))
          .containsExactly(
              "public.ledger true",
              "public.pledger true",
              "public.sledger false",
              "public.whole false");
    }
  }

  @ParameterizedTest(name = "isolation {0}")
  @ValueSource(
      ints = {
        Connection.TRANSACTION_READ_COMMITTED,
        Connection.TRANSACTION_REPEATABLE_READ,
        Connection.TRANSACTION_SERIALIZABLE
      })
  void aStaleOrMissingTokenIsRefusedAndTheCurrentOnePasses(int isolation) throws SQLException {
    long stale = tokens[2];
    try (Connection c = db.connect()) {
      tokens[2] = newToken(c, ACCOUNTS.get(2));
    }
    String carryStale = "SELECT fencing.carry('acct/3', " + stale + ")";
    try (Connection app = login.connect()) {
      app.setTransactionIsolation(isolation);
      String before = contents(app);
      List<String> prepare = List.of(check(0), check(1), carryStale);
      for (String write :
          List.of(
              "UPDATE ledger SET amount = amount + 1",
              "UPDATE ledger SET amount = 0 WHERE acct = 3",
              "INSERT INTO ledger VALUES (10, 3, 0)",
              "DELETE FROM ledger",
              "UPDATE ledger SET acct = 3 WHERE acct = 1",
              insertRows("ledger", 100, LARGE, "1 + g % 3"),
              insertRows("pledger", 100, 3, "1 + g % 3"),
              "UPDATE pledger SET amount = amount + 1")) {
        SQLException e = refused(app, STALE, prepare, write);
        assertThat(e.getMessage()).as(write).contains("acct/3");
        refused(app, MISSING, List.of(check(0)), write);
      }
      // a stale check is refused itself; the write after it has no marker
      refused(app, STALE, List.of(), "SELECT fencing.check_token('acct/3', " + stale + ")");
      assertThat(contents(app)).isEqualTo(before);

      app.setAutoCommit(false);
      for (int i = 0; i < 3; i++) {
        Fence.check(app, ACCOUNTS.get(i), tokens[i]);
      }
      FenceSql.run(app, "UPDATE ledger SET amount = amount + 1");
      FenceSql.run(app, "UPDATE ledger SET amount = amount + 1 WHERE acct = 2");
      FenceSql.run(app, insertRows("ledger", 100, LARGE, "1 + g % 3"));
      FenceSql.run(app, "UPDATE pledger SET amount = amount + 1");
      app.commit();
      app.setAutoCommit(true);
      assertThat(FenceSql.longValue(app, "SELECT sum(amount) FROM ledger")).isEqualTo(64);
      assertThat(FenceSql.longValue(app, "SELECT count(*) FROM ledger")).isEqualTo(3 + LARGE);
    }
  }

  @ParameterizedTest(name = "isolation {0}")
  @ValueSource(
      ints = {
        Connection.TRANSACTION_READ_COMMITTED,
        Connection.TRANSACTION_REPEATABLE_READ,
        Connection.TRANSACTION_SERIALIZABLE
      })
  void forgedCopiedOrReplayedTagsAreRefused(int isolation) throws SQLException {
    try (Connection app = login.connect()) {
      app.setTransactionIsolation(isolation);
      String before = contents(app);
      // a genuine tag of acct/3, from a transaction that checked it
      app.setAutoCommit(false);
      FenceSql.run(app, check(2));
      FenceSql.run(app, "UPDATE ledger SET amount = amount WHERE acct = 3");
      String genuine = tags(app);
      assertThat(genuine).matches(",acct/3:[0-9a-f]{32},");
      app.rollback();
      app.setAutoCommit(true);

      String forged = ",acct/3:" + "0123456789abcdef".repeat(2) + ",";
      for (String tagsValue : List.of(genuine, forged, genuine + "acct/1:" + forged.substring(8))) {
        for (String write :
            List.of(
                "UPDATE ledger SET amount = 0 WHERE acct = 3",
                "INSERT INTO ledger VALUES (10, 3, 0)",
                "DELETE FROM ledger WHERE acct = 3",
                insertRows("ledger", 100, LARGE, "3"),
                "INSERT INTO pledger_1 VALUES (10, 3, 0)")) {
          String set = "SELECT set_config('fencing.row_tags', '" + tagsValue + "', true)";
          // replayed in the next transaction, forged, with another resource checked
          refused(app, MISSING, List.of(set), write);
          refused(app, MISSING, List.of(check(0), set), write);
          // forged in the middle of the statement
          refused(
              app,
              MISSING,
              List.of(check(0)),
              "INSERT INTO ledger SELECT g, CASE WHEN g = 100 THEN 1 ELSE 3 END,"
                  + " length(set_config('fencing.row_tags', '"
                  + tagsValue
                  + "', true)) FROM generate_series(100, 102) g");
        }
      }
      // at session level
      FenceSql.run(app, "SELECT set_config('fencing.row_tags', '" + genuine + "', false)");
      try {
        refused(app, MISSING, List.of(check(0)), "UPDATE ledger SET amount = 0 WHERE acct = 3");
      } finally {
        FenceSql.run(app, "RESET fencing.row_tags");
      }
      assertThat(contents(app)).isEqualTo(before);
    }
  }

  @Test
  void theApplicationCannotReadOrSetTheKey() throws SQLException {
    try (Connection app = login.connect()) {
      app.setAutoCommit(false);
      FenceSql.run(app, check(0));
      FenceSql.run(app, "UPDATE ledger SET amount = amount WHERE acct = 1"); // the key is set
      app.commit();
      app.setAutoCommit(true);
      for (String seq : List.of("fencing.row_key_1", "fencing.row_key_2")) {
        for (String call :
            List.of(
                "SELECT currval('" + seq + "')",
                "SELECT setval('" + seq + "', 1)",
                "SELECT nextval('" + seq + "')",
                "SELECT pg_sequence_last_value('" + seq + "')",
                "SELECT last_value FROM " + seq,
                "ALTER SEQUENCE " + seq + " RESTART")) {
          assertFails("42501", () -> FenceSql.run(app, call));
        }
        assertThat(
                FenceSql.string(
                    app,
                    "SELECT coalesce(last_value::text, 'hidden') FROM pg_sequences"
                        + " WHERE schemaname = 'fencing' AND sequencename = ?",
                    seq.substring("fencing.".length())))
            .isEqualTo("hidden");
      }
      // setval did not make a key sequence this session's last used one
      assertFails("55000", () -> FenceSql.run(app, "SELECT lastval()"));
      assertFails(
          "42501",
          () -> FenceSql.run(app, "SELECT fencing.protect_rows_per_row('ledger', 'acct')"));
    }
  }

  @Test
  void aDiscardedKeyIsReplacedAtTheNextFullDecision() throws SQLException {
    try (Connection app = login.connect()) {
      app.setAutoCommit(false);
      FenceSql.run(app, check(0));
      FenceSql.run(app, "UPDATE ledger SET amount = amount + 1 WHERE acct = 1");
      String first = tags(app);
      app.commit();
      app.setAutoCommit(true);
      FenceSql.run(app, "DISCARD SEQUENCES");
      app.setAutoCommit(false);
      FenceSql.run(app, check(0));
      FenceSql.run(app, "UPDATE ledger SET amount = amount + 1 WHERE acct = 1");
      FenceSql.run(app, "UPDATE ledger SET amount = amount + 1 WHERE acct = 1"); // on the tag
      assertThat(tags(app)).isNotEqualTo(first).matches(",acct/1:[0-9a-f]{32},");
      app.commit();
      app.setAutoCommit(true);
      assertThat(FenceSql.longValue(app, "SELECT amount FROM ledger WHERE id = 1")).isEqualTo(13);
    }
  }

  @Test
  void rollbackToSavepointRevertsTheTag() throws SQLException {
    try (Connection app = login.connect()) {
      String before = contents(app);
      app.setAutoCommit(false);
      try {
        FenceSql.run(app, "SAVEPOINT s");
        FenceSql.run(app, check(2));
        FenceSql.run(app, "UPDATE ledger SET amount = 31 WHERE acct = 3");
        String tag = tags(app);
        assertThat(tag).contains(",acct/3:");
        FenceSql.run(app, "ROLLBACK TO SAVEPOINT s");
        assertThat(FenceSql.string(app, "SELECT current_setting('fencing.row_tags', true)"))
            .isNullOrEmpty();
        FenceSql.run(app, "SAVEPOINT t");
        assertFails(
            MISSING, () -> FenceSql.run(app, "UPDATE ledger SET amount = 32 WHERE acct = 3"));
        FenceSql.run(app, "ROLLBACK TO SAVEPOINT t");
        // pgjdbc's autosave: a failed statement rolled back to its savepoint keeps the check
        FenceSql.run(app, check(2));
        FenceSql.run(app, "SAVEPOINT u");
        assertFails(
            "23505", () -> FenceSql.run(app, "INSERT INTO ledger VALUES (1, 3, 0)")); // after
        FenceSql.run(app, "ROLLBACK TO SAVEPOINT u");
        FenceSql.run(app, "UPDATE ledger SET amount = 33 WHERE acct = 3");
      } finally {
        app.rollback();
        app.setAutoCommit(true);
      }
      assertThat(contents(app)).isEqualTo(before);
    }
  }

  @Test
  void copyPartitionsAndNullOrUnknownResources() throws Exception {
    try (Connection app = login.connect()) {
      String before = contents(app);
      StringBuilder rows = new StringBuilder();
      for (int i = 100; i < 100 + LARGE; i++) {
        rows.append(i).append('\t').append(1 + i % 2).append("\t0\n");
      }
      app.setAutoCommit(false);
      FenceSql.run(app, check(0));
      for (String table : List.of("ledger", "pledger", "pledger_1")) {
        SQLException e =
            assertFails(
                MISSING,
                () ->
                    app.unwrap(PGConnection.class)
                        .getCopyAPI()
                        .copyIn(
                            "COPY " + table + " FROM STDIN", new StringReader(rows.toString())));
        assertThat(e.getMessage()).contains("acct/2");
        app.rollback();
        FenceSql.run(app, check(0));
      }
      app.rollback();
      assertThat(contents(app)).isEqualTo(before);
      assertFails(MISSING, () -> FenceSql.run(app, "TRUNCATE ledger"));
      app.rollback();
      assertFails(MISSING, () -> FenceSql.run(app, "TRUNCATE pledger_1"));
      app.rollback();

      FenceSql.run(app, check(0));
      FenceSql.run(app, check(1));
      long copied =
          app.unwrap(PGConnection.class)
              .getCopyAPI()
              .copyIn("COPY pledger FROM STDIN", new StringReader(rows.toString()));
      assertThat(copied).isEqualTo(LARGE);
      app.commit();
      app.setAutoCommit(true);
      assertThat(FenceSql.longValue(app, "SELECT count(*) FROM pledger")).isEqualTo(3 + LARGE);

      List<String> all = List.of(check(0), check(1), check(2));
      refused(app, INVALID_RESOURCE, all, "INSERT INTO ledger VALUES (10, NULL, 0)");
      refused(app, INVALID_RESOURCE, all, "INSERT INTO ledger VALUES (10, 9, 0)");
      refused(app, INVALID_RESOURCE, all, "UPDATE pledger SET acct = 9 WHERE id = 1");
      // refused before the write: not a unique violation
      refused(app, MISSING, List.of(check(0)), "INSERT INTO ledger VALUES (2, 2, 0)");
    }
  }

  @Test
  void theFullDecisionRunsOncePerResourceAndTransaction() throws SQLException {
    try (Connection app = login.connect()) {
      app.setAutoCommit(false);
      for (int i = 0; i < 3; i++) {
        FenceSql.run(app, check(i));
      }
      FenceSql.run(app, insertRows("ledger", 100, LARGE, "1 + g % 3"));
      FenceSql.run(app, "UPDATE ledger SET amount = amount + 1");
      assertThat(tags(app)).matches("(,acct/[123]:[0-9a-f]{32}){3},");
      assertThat(FenceSql.calls(app, "require_fenced")).isZero();
      assertThat(FenceSql.calls(app, "check_token")).isEqualTo(3);
      app.rollback();
      app.setAutoCommit(true);
    }
  }

  @Test
  void protectRowsGivesTheTableTheStatementFormAgain() throws SQLException {
    try (Connection c = db.connect()) {
      FenceSql.run(c, "CREATE TABLE scratch (id int, acct int)");
      FenceSql.run(c, "SELECT fencing.protect_rows_per_row('scratch', 'acct', 'acct/')");
      FenceSql.run(c, "SELECT fencing.protect_rows('scratch', 'acct', 'acct/')");
      assertThat(
              FenceSql.longValue(
                  c, "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'scratch'::regclass"))
          .isEqualTo(7);
      assertThat(
              FenceSql.string(
                  c,
                  "SELECT per_row::text FROM fencing.protected_table WHERE tbl = 'scratch'::regclass"))
          .isEqualTo("false");
      assertFails(
          Fence.INVALID_ARGUMENT,
          () -> FenceSql.run(c, "SELECT fencing.protect_rows_per_row('scratch', 'nope', 'acct/')"));
      assertThat(FenceSql.string(c, "SELECT fencing.unprotect('scratch')::text")).isEqualTo("true");
      assertThat(
              FenceSql.longValue(
                  c, "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'scratch'::regclass"))
          .isZero();
      FenceSql.run(c, "DROP TABLE scratch");
    }
  }

  /** Whole-table protection (V3's statement trigger) passes later statements on the same tag. */
  @ParameterizedTest(name = "isolation {0}")
  @ValueSource(
      ints = {
        Connection.TRANSACTION_READ_COMMITTED,
        Connection.TRANSACTION_REPEATABLE_READ,
        Connection.TRANSACTION_SERIALIZABLE
      })
  void wholeTableProtectionTakesTheTagAndRefusesForgedOnes(int isolation) throws SQLException {
    try (Connection app = login.connect()) {
      app.setTransactionIsolation(isolation);
      // no check: refused, also for zero rows
      assertFails(MISSING, () -> FenceSql.run(app, "DELETE FROM whole WHERE false"));
      app.setAutoCommit(false);
      FenceSql.run(app, check(0));
      FenceSql.run(app, "INSERT INTO whole VALUES (1, 'a')");
      String genuine = tags(app);
      assertThat(genuine).matches(",acct/1:[0-9a-f]{32},");
      FenceSql.run(app, "UPDATE whole SET note = 'b'"); // on the tag
      FenceSql.run(app, "INSERT INTO whole VALUES (2, 'c')");
      assertThat(tags(app)).isEqualTo(genuine);
      FenceSql.run(app, "SAVEPOINT s");
      FenceSql.run(app, "ROLLBACK TO SAVEPOINT s");
      app.commit();
      app.setAutoCommit(true);
      String forged = ",acct/1:" + "0123456789abcdef".repeat(2) + ",";
      for (String value : List.of(genuine, forged)) {
        String set = "SELECT set_config('fencing.row_tags', '" + value + "', true)";
        refused(app, MISSING, List.of(set), "INSERT INTO whole VALUES (3, 'replayed')");
        refused(app, MISSING, List.of(set), "DELETE FROM whole");
        refused(app, MISSING, List.of(check(1), set), "UPDATE whole SET note = 'x'");
      }
      // a check rolled back to its savepoint takes its tag with it
      app.setAutoCommit(false);
      try {
        FenceSql.run(app, "SAVEPOINT s");
        FenceSql.run(app, check(0));
        FenceSql.run(app, "UPDATE whole SET note = 'd'");
        FenceSql.run(app, "ROLLBACK TO SAVEPOINT s");
        assertFails(MISSING, () -> FenceSql.run(app, "UPDATE whole SET note = 'e'"));
      } finally {
        app.rollback();
        app.setAutoCommit(true);
      }
      assertThat(FenceSql.strings(app, "SELECT id || note FROM whole ORDER BY id"))
          .containsExactly("1b", "2c");
      app.setAutoCommit(false);
      FenceSql.run(app, check(0));
      FenceSql.run(app, "DELETE FROM whole");
      app.commit();
      app.setAutoCommit(true);
    }
  }

  /** V13's statement trigger (protect_rows) passes a resource on its tag too; forged ones fail. */
  @ParameterizedTest(name = "isolation {0}")
  @ValueSource(
      ints = {
        Connection.TRANSACTION_READ_COMMITTED,
        Connection.TRANSACTION_REPEATABLE_READ,
        Connection.TRANSACTION_SERIALIZABLE
      })
  void theStatementFormTakesTheTagAndRefusesForgedOnes(int isolation) throws SQLException {
    try (Connection app = login.connect()) {
      app.setTransactionIsolation(isolation);
      app.setAutoCommit(false);
      FenceSql.run(app, check(0));
      FenceSql.run(app, check(2));
      FenceSql.run(app, "INSERT INTO sledger VALUES (1, 1, 0), (3, 3, 0)");
      String genuine = tags(app);
      assertThat(genuine).matches("(,acct/[13]:[0-9a-f]{32}){2},");
      FenceSql.run(app, "UPDATE sledger SET amount = amount + 1"); // on the tags
      assertThat(tags(app)).isEqualTo(genuine);
      app.commit();
      app.setAutoCommit(true);
      String forged = ",acct/3:" + "0123456789abcdef".repeat(2) + ",";
      for (String value : List.of(genuine, forged)) {
        String set = "SELECT set_config('fencing.row_tags', '" + value + "', true)";
        String passed = "SELECT set_config('fencing.passed', ',acct/1,acct/3,', true)";
        for (String write :
            List.of(
                "UPDATE sledger SET amount = 0 WHERE acct = 3",
                "INSERT INTO sledger SELECT g, 3, 0 FROM generate_series(10, "
                    + (10 + LARGE)
                    + ") g",
                "DELETE FROM sledger")) {
          refused(app, MISSING, List.of(set), write);
          refused(app, MISSING, List.of(check(0), set, passed), write);
        }
      }
      assertThat(FenceSql.strings(app, "SELECT id || ':' || amount FROM sledger ORDER BY id"))
          .containsExactly("1:1", "3:1");
      app.setAutoCommit(false);
      FenceSql.run(app, check(0));
      FenceSql.run(app, check(2));
      FenceSql.run(app, "DELETE FROM sledger");
      app.commit();
      app.setAutoCommit(true);
    }
  }

  /** The tag list stops growing (8,000 characters); resources past it take the full decision. */
  @Test
  void manyResourcesInOneTransactionPassWithABoundedTagList() throws SQLException {
    int n = 250;
    try (Connection c = db.connect()) {
      FenceSql.run(
          c,
          "SELECT count(*) FROM generate_series(100, 99 + ?) g,"
              + " LATERAL fencing.try_acquire('acct/' || g, 'test', interval '5 minutes') a",
          n);
    }
    try (Connection app = login.connect()) {
      app.setAutoCommit(false);
      FenceSql.run(
          app,
          "SELECT fencing.check_tokens(array_agg(r.name), array_agg(s.max_seen))"
              + " FROM generate_series(100, 99 + ?) g,"
              + " LATERAL (SELECT 'acct/' || g AS name) r,"
              + " LATERAL fencing.status(r.name) s",
          n);
      FenceSql.run(app, check(0)); // for the whole-table protected one
      for (int round = 0; round < 2; round++) {
        FenceSql.run(
            app,
            "INSERT INTO ledger SELECT 1000 * ? + g, g, 0 FROM generate_series(100, 99 + ?) g",
            round + 1,
            n);
        FenceSql.run(
            app,
            "INSERT INTO whole SELECT 1000 * ? + g, 'x' FROM generate_series(100, 99 + ?) g",
            round + 1,
            n);
        FenceSql.run(
            app,
            "INSERT INTO sledger SELECT 1000 * ? + g, g, 0 FROM generate_series(100, 99 + ?) g",
            round + 1,
            n);
      }
      assertThat(FenceSql.longValue(app, "SELECT count(*) FROM sledger WHERE id >= 1000"))
          .isEqualTo(2L * n);
      assertThat(tags(app).length()).isBetween(8000, 8100);
      assertThat(FenceSql.longValue(app, "SELECT count(*) FROM ledger WHERE id >= 1000"))
          .isEqualTo(2L * n);
      // past the bound, still no write without a check
      assertFails(MISSING, () -> FenceSql.run(app, "INSERT INTO ledger VALUES (9999, 3, 0)"));
      app.rollback();
      app.setAutoCommit(true);
    }
  }
}
