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
 * Per-row protected tables checked once per statement (V13): a table that is not partitioned gets
 * BEFORE row triggers that run only for a resource not yet in {@code fencing.passed} (the refusal
 * before the write) and AFTER statement triggers over the transition tables (the decision). The
 * application's login role owns nothing and may write {@code fencing.passed} as it likes: it
 * decides nothing.
 */
class ProtectedRowsTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final Duration TTL = Duration.ofMinutes(5);

  /** The application's login role: a member of the application role, granted the tables. */
  private static AppRole login;

  private static final String OWNER = FenceSql.unique("rows_owner");
  private static final List<String> ACCOUNTS = List.of("acct/1", "acct/2", "acct/3");

  /** Rows above this many take the statement trigger's query planned per statement. */
  private static final int LARGE = 300;

  @BeforeAll
  static void setUp() throws SQLException {
    assertThat(Fence.migrate(db)).isEqualTo(Fence.MIGRATIONS);
    login = AppRole.create(db, "rows_app");
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
      for (String t : List.of("ledger", "pledger", "pledger_1")) {
        FenceSql.run(c, "ALTER TABLE " + t + " OWNER TO " + OWNER);
        login.grant("SELECT, INSERT, UPDATE, DELETE", t);
      }
      FenceSql.run(c, "SELECT fencing.protect_rows('ledger', 'acct', 'acct/')");
      FenceSql.run(c, "SELECT fencing.protect_rows('pledger', 'acct', 'acct/')");
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

  /** Fresh leases; ledger and pledger hold one row per account (ids 1, 2, 3). */
  @BeforeEach
  void freshLeasesAndRows() throws SQLException {
    try (Connection c = db.connect()) {
      for (int i = 0; i < 3; i++) {
        tokens[i] = newToken(c, ACCOUNTS.get(i));
      }
      c.setAutoCommit(false);
      checkAll(c, 3);
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

  /** check_token for the first {@code n} accounts. */
  private void checkAll(Connection c, int n) throws SQLException {
    for (int i = 0; i < n; i++) {
      Fence.check(c, ACCOUNTS.get(i), tokens[i]);
    }
  }

  private static String contents(Connection c) throws SQLException {
    return FenceSql.string(
        c,
        "SELECT concat_ws(' | ',"
            + " (SELECT string_agg(id || ':' || acct || ':' || amount, ',' ORDER BY id) FROM ledger),"
            + " (SELECT string_agg(id || ':' || acct || ':' || amount, ',' ORDER BY id)"
            + " FROM pledger))");
  }

  /** In one transaction of the application role: {@code prepare}, then {@code write} refused. */
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

  private String check(int account) {
    return "SELECT fencing.check_token('" + ACCOUNTS.get(account) + "', " + tokens[account] + ")";
  }

  private static String insertRows(int from, int count, String acctExpression) {
    return "INSERT INTO ledger SELECT g, "
        + acctExpression
        + ", 0 FROM generate_series("
        + from
        + ", "
        + (from + count - 1)
        + ") g";
  }

  @ParameterizedTest(name = "isolation {0}")
  @ValueSource(
      ints = {
        Connection.TRANSACTION_READ_COMMITTED,
        Connection.TRANSACTION_REPEATABLE_READ,
        Connection.TRANSACTION_SERIALIZABLE
      })
  void aStatementOverSeveralResourcesWithOneStaleTokenIsRefusedAsAWhole(int isolation)
      throws SQLException {
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
              "DELETE FROM ledger",
              "UPDATE ledger SET acct = 4 - acct",
              insertRows(100, 3, "1 + g % 3"),
              insertRows(100, LARGE, "1 + g % 3"),
              "INSERT INTO pledger SELECT g, 1 + g % 3, 0 FROM generate_series(100, 102) g",
              "UPDATE pledger SET amount = amount + 1")) {
        SQLException e = refused(app, STALE, prepare, write);
        assertThat(e.getMessage()).as(write).contains("acct/3");
      }
      assertThat(contents(app)).isEqualTo(before);

      // the same statements with the current token are accepted
      app.setAutoCommit(false);
      checkAll(app, 3);
      FenceSql.run(app, "UPDATE ledger SET amount = amount + 1");
      FenceSql.run(app, insertRows(100, LARGE, "1 + g % 3"));
      FenceSql.run(app, "UPDATE pledger SET amount = amount + 1");
      app.commit();
      app.setAutoCommit(true);
      assertThat(FenceSql.longValue(app, "SELECT sum(amount) FROM ledger")).isEqualTo(63);
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
  void theApplicationCannotForgeWhatPassed(int isolation) throws SQLException {
    String forge = "SELECT set_config('fencing.passed', ',acct/1,acct/2,acct/3,', true)";
    String forgeSession = "SELECT set_config('fencing.passed', ',acct/1,acct/2,acct/3,', false)";
    try (Connection app = login.connect()) {
      app.setTransactionIsolation(isolation);
      String before = contents(app);
      List<String> writes =
          List.of(
              "INSERT INTO ledger VALUES (10, 3, 0)",
              insertRows(100, 3, "3"),
              insertRows(100, LARGE, "1 + g % 3"),
              "UPDATE ledger SET amount = 0 WHERE acct = 3",
              "UPDATE ledger SET acct = 3 WHERE acct = 1",
              "DELETE FROM ledger WHERE acct = 3",
              "WITH d AS (DELETE FROM ledger WHERE acct = 3 RETURNING *) SELECT count(*) FROM d",
              "INSERT INTO ledger VALUES (3, 3, 0) ON CONFLICT (id) DO UPDATE SET amount = 0",
              "MERGE INTO ledger l USING (VALUES (3, 3), (11, 3)) v(id, acct) ON l.id = v.id"
                  + " WHEN MATCHED THEN UPDATE SET amount = 0"
                  + " WHEN NOT MATCHED THEN INSERT VALUES (v.id, v.acct, 0)",
              // forged while the statement runs, after the setting was read for the first row
              "INSERT INTO ledger SELECT g, 3, length(set_config('fencing.passed', ',acct/3,', true))"
                  + " FROM generate_series(100, 102) g");
      for (String write : writes) {
        // with acct/1 checked, the forged setting naming acct/3 too
        refused(app, MISSING, List.of(check(0), forge), write);
        refused(app, MISSING, List.of(forge), write);
      }
      try {
        FenceSql.run(app, forgeSession);
        for (String write : writes) {
          refused(app, MISSING, List.of(check(0)), write);
        }
      } finally {
        FenceSql.run(app, "RESET fencing.passed");
      }
      assertThat(contents(app)).isEqualTo(before);
    }
  }

  @Test
  void rollbackToSavepointRevertsWhatPassed() throws SQLException {
    try (Connection app = login.connect()) {
      String before = contents(app);
      app.setAutoCommit(false);
      try {
        FenceSql.run(app, "SAVEPOINT s");
        FenceSql.run(app, check(2));
        FenceSql.run(app, "UPDATE ledger SET amount = 31 WHERE acct = 3");
        assertThat(FenceSql.string(app, "SELECT current_setting('fencing.passed', true)"))
            .contains(",acct/3,");
        FenceSql.run(app, "ROLLBACK TO SAVEPOINT s");
        assertThat(FenceSql.string(app, "SELECT current_setting('fencing.passed', true)"))
            .isNullOrEmpty();
        FenceSql.run(app, "SAVEPOINT t");
        assertFails(
            MISSING, () -> FenceSql.run(app, "UPDATE ledger SET amount = 32 WHERE acct = 3"));
        FenceSql.run(app, "ROLLBACK TO SAVEPOINT t");
        // the setting as it was before the rollback decides nothing either
        FenceSql.run(app, "SELECT set_config('fencing.passed', ',acct/3,', true)");
        assertFails(MISSING, () -> FenceSql.run(app, insertRows(100, LARGE, "3")));
      } finally {
        app.rollback();
        app.setAutoCommit(true);
      }
      assertThat(contents(app)).isEqualTo(before);
    }
  }

  @Test
  void copyIsCheckedOncePerStatement() throws Exception {
    try (Connection app = login.connect()) {
      String before = contents(app);
      StringBuilder rows = new StringBuilder();
      for (int i = 100; i < 100 + LARGE; i++) {
        rows.append(i).append('\t').append(1 + i % 2).append("\t0\n");
      }
      app.setAutoCommit(false);
      FenceSql.run(app, check(0));
      SQLException e =
          assertFails(
              MISSING,
              () ->
                  app.unwrap(PGConnection.class)
                      .getCopyAPI()
                      .copyIn("COPY ledger FROM STDIN", new StringReader(rows.toString())));
      assertThat(e.getMessage()).contains("acct/2", "ledger");
      app.rollback();
      assertThat(contents(app)).isEqualTo(before);

      long calls = FenceSql.calls(app, "enforce_rows");
      long rowCalls = FenceSql.calls(app, "enforce_row");
      checkAll(app, 2);
      long copied =
          app.unwrap(PGConnection.class)
              .getCopyAPI()
              .copyIn("COPY ledger FROM STDIN", new StringReader(rows.toString()));
      assertThat(copied).isEqualTo(LARGE);
      // one statement trigger call for the statement; the row trigger once per resource
      assertThat(FenceSql.calls(app, "enforce_rows") - calls).isEqualTo(1);
      assertThat(FenceSql.calls(app, "enforce_row") - rowCalls).isEqualTo(2);
      app.commit();
      app.setAutoCommit(true);
      assertThat(FenceSql.longValue(app, "SELECT count(*) FROM ledger")).isEqualTo(3 + LARGE);
    }
  }

  @Test
  void theRowTriggerRunsOncePerResourceAndTransaction() throws SQLException {
    try (Connection app = login.connect()) {
      app.setAutoCommit(false);
      checkAll(app, 3);
      FenceSql.run(app, insertRows(100, LARGE, "1 + g % 3"));
      FenceSql.run(app, "UPDATE ledger SET amount = amount + 1");
      FenceSql.run(app, "DELETE FROM ledger WHERE id >= 200");
      FenceSql.run(app, insertRows(1000, 5, "1 + g % 3"));
      assertThat(FenceSql.calls(app, "enforce_row")).isEqualTo(3);
      assertThat(FenceSql.calls(app, "enforce_rows")).isEqualTo(4);
      // the three checks only (V15: check_token decides its common case without fence(), and
      // the triggers call it for no resource)
      assertThat(FenceSql.calls(app, "check_token")).isEqualTo(3);
      assertThat(FenceSql.calls(app, "fence")).isZero();
      app.rollback();
      app.setAutoCommit(true);
    }
  }

  @Test
  void nullAndUnknownResourcesFailClosed() throws SQLException {
    try (Connection app = login.connect()) {
      List<String> prepare = List.of(check(0), check(1), check(2));
      refused(app, INVALID_RESOURCE, prepare, "INSERT INTO ledger VALUES (10, NULL, 0)");
      refused(
          app,
          INVALID_RESOURCE,
          prepare,
          insertRows(100, LARGE, "CASE WHEN g = 250 THEN NULL ELSE 1 END"));
      refused(
          app,
          INVALID_RESOURCE,
          prepare,
          insertRows(100, LARGE, "CASE WHEN g = 250 THEN 9 ELSE 1 END"));
      refused(app, INVALID_RESOURCE, prepare, "UPDATE ledger SET acct = 9 WHERE id = 1");
      // the row trigger refuses before the write: not a unique violation
      refused(app, MISSING, List.of(check(0)), "INSERT INTO ledger VALUES (2, 2, 0)");
    }
  }

  @Test
  void partitionedTablesKeepTheRowTrigger() throws SQLException {
    try (Connection c = db.connect()) {
      assertThat(
              FenceSql.strings(
                  c,
                  "SELECT tgrelid::regclass || ' ' || tgname || ' ' || (tgtype & 1)::text"
                      + " FROM pg_trigger WHERE tgrelid IN ('pledger'::regclass, 'pledger_1'::regclass,"
                      + " 'ledger'::regclass) AND tgname LIKE 'fencing%' ORDER BY 1"))
          .containsExactly(
              "ledger fencing_protect 1",
              "ledger fencing_protect_delete 1",
              "ledger fencing_protect_deleted 0",
              "ledger fencing_protect_inserted 0",
              "ledger fencing_protect_truncate 0",
              "ledger fencing_protect_update 1",
              "ledger fencing_protect_updated 0",
              "pledger fencing_protect 1",
              "pledger fencing_protect_truncate 0",
              "pledger_1 fencing_protect 1",
              "pledger_1 fencing_protect_truncate 0");
    }
    try (Connection app = login.connect()) {
      String before = contents(app);
      // forging what passed does not help: the row trigger of a partition always checks
      List<String> forge =
          List.of(check(0), "SELECT set_config('fencing.passed', ',acct/1,acct/2,acct/3,', true)");
      refused(app, MISSING, forge, "INSERT INTO pledger_1 VALUES (10, 2, 0)");
      refused(app, MISSING, forge, "UPDATE pledger SET amount = 0 WHERE acct = 3");
      refused(app, MISSING, forge, "DELETE FROM pledger_1 WHERE acct = 2");
      assertThat(contents(app)).isEqualTo(before);
    }
  }

  @Test
  void unprotectRemovesEveryTriggerAndProtectRowsRestoresThem() throws SQLException {
    try (Connection c = db.connect()) {
      FenceSql.run(c, "SELECT fencing.unprotect('ledger')");
      assertThat(
              FenceSql.longValue(
                  c, "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'ledger'::regclass"))
          .isZero();
      FenceSql.run(c, "SELECT fencing.protect_rows('ledger', 'acct', 'acct/')");
      FenceSql.run(
          c, "SELECT fencing.protect_rows('ledger', 'acct', 'acct/')"); // again: no duplicates
      assertThat(
              FenceSql.longValue(
                  c, "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'ledger'::regclass"))
          .isEqualTo(7);
    }
    try (Connection app = login.connect()) {
      refused(app, MISSING, List.of(), "UPDATE ledger SET amount = 0");
    }
  }
}
