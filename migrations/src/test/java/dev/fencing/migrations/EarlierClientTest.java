package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.MISSING;
import static dev.fencing.migrations.Fence.STALE;
import static dev.fencing.migrations.Fence.assertFails;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.migrations.Interleaving.Isolation;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The SQL texts earlier releases of fencing-jdbc sent (from its git history), against the head's
 * schema: the API functions kept their signatures, so each check still refuses a stale token; the
 * one function a later migration dropped (V8's three-argument record_rejection) is a clear error
 * that records nothing. What the schema cannot reach is a fix made in the client's own SQL: an
 * earlier client's commit check tests only for a transaction id (the test before V37), so a WITH
 * HOLD cursor's writing query, run inside COMMIT, is not checked on a table the fence does not
 * protect; a protected table refuses it whatever the client sent (README, "Upgrading a live
 * fence").
 */
class EarlierClientTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final Duration LEASE = Duration.ofMinutes(5);

  /** The commit check of fencing-jdbc before the held-cursor fix (V37). */
  private static final String EARLIER_COMMIT_CHECK =
      "SELECT CASE WHEN pg_catalog.pg_current_xact_id_if_assigned() IS NULL THEN NULL ELSE"
          + " fencing.check_one(?, ?) END";

  @BeforeAll
  static void migrate() throws SQLException {
    Fence.migrate(db);
    try (Connection c = db.connect()) {
      Fence.execute(c, "CREATE TABLE ec_log (id serial PRIMARY KEY)");
      Fence.execute(c, "CREATE TABLE ec_ledger (id serial PRIMARY KEY)");
      Fence.execute(
          c,
          "CREATE FUNCTION ec_write() RETURNS int LANGUAGE sql"
              + " AS 'INSERT INTO ec_log DEFAULT VALUES RETURNING 7'");
      Fence.execute(
          c,
          "CREATE FUNCTION ec_write_ledger() RETURNS int LANGUAGE sql"
              + " AS 'INSERT INTO ec_ledger DEFAULT VALUES RETURNING 7'");
      Fence.execute(c, "CREATE VIEW ec_view AS SELECT ec_write() AS x");
      Fence.execute(c, "CREATE VIEW ec_ledger_view AS SELECT ec_write_ledger() AS x");
      Fence.execute(c, "SELECT fencing.create_resource('ec/ledger')");
      Fence.execute(c, "SELECT fencing.protect('ec_ledger', 'ec/ledger')");
    }
  }

  /** A resource whose first token was superseded: returns that stale token. */
  private static long stale(Connection c, String resource) throws SQLException {
    long first = Fence.acquire(c, resource, "holder-a", LEASE);
    assertThat(Fence.release(c, resource, first)).isTrue();
    Fence.acquire(c, resource, "holder-b", LEASE);
    return first;
  }

  @Test
  void theChecksEarlierClientsSentStillRefuseAStaleToken() throws SQLException {
    try (Connection observer = db.connect();
        Interleaving.Session writer = Interleaving.writer(db, Isolation.READ_COMMITTED)) {
      String res = FenceSql.unique("ec/checks");
      long stale = stale(observer, res);
      long before = Fence.count(observer, "SELECT count(*) FROM ec_log");
      for (String sql :
          List.of(
              "SELECT fencing.check_token(?, ?)",
              "SELECT fencing.check_one(?, ?)",
              "SELECT fencing.check_tokens(ARRAY[?]::text[], ARRAY[?]::bigint[])",
              "SELECT fencing.check_tokens_if_written(ARRAY[?]::text[], ARRAY[?]::bigint[])",
              EARLIER_COMMIT_CHECK)) {
        Fence.execute(writer.c(), "INSERT INTO ec_log DEFAULT VALUES"); // a write: a transaction id
        assertFails(STALE, () -> FenceSql.run(writer.c(), sql, res, stale));
        writer.c().rollback();
      }
      assertThat(Fence.count(observer, "SELECT count(*) FROM ec_log")).isEqualTo(before);
    }
  }

  @Test
  void theThreeArgumentRecordRejectionOfEarlierClientsIsAClearErrorThatRecordsNothing()
      throws SQLException {
    try (Connection c = db.connect()) {
      long before = Fence.count(c, "SELECT count(*) FROM fencing.rejections(NULL, 10000)");
      SQLException e =
          assertFails(
              "42883",
              () ->
                  FenceSql.run(
                      c, "SELECT fencing.record_rejection(?, ?, ?)", "ec/r", 1L, "stale_token"));
      assertThat(e.getMessage()).contains("fencing.record_rejection");
      assertThat(Fence.count(c, "SELECT count(*) FROM fencing.rejections(NULL, 10000)"))
          .isEqualTo(before);
    }
  }

  /**
   * The documented limit: the earlier client's own test skips the check, and the schema cannot add
   * one to a table it does not protect; a protected table refuses the hidden write at commit.
   */
  @Test
  void anEarlierClientsCommitCheckMissesAHeldCursorsWriteUnlessTheTableIsProtected()
      throws SQLException {
    try (Connection observer = db.connect();
        Interleaving.Session writer = Interleaving.writer(db, Isolation.READ_COMMITTED)) {
      String res = FenceSql.unique("ec/held");
      long stale = stale(observer, res);
      long before = Fence.count(observer, "SELECT count(*) FROM ec_log");
      Fence.execute(writer.c(), "DECLARE held CURSOR WITH HOLD FOR SELECT x FROM ec_view");
      assertThat(FenceSql.string(writer.c(), EARLIER_COMMIT_CHECK, res, stale))
          .as("no transaction id yet: the earlier client's test skips the check")
          .isNull();
      writer.c().commit(); // the cursor's query writes inside COMMIT, with a stale token
      assertThat(Fence.count(observer, "SELECT count(*) FROM ec_log")).isEqualTo(before + 1);
      Fence.execute(writer.c(), "CLOSE held");
      writer.c().commit();

      long ledgerStale = stale(observer, "ec/ledger");
      Fence.execute(writer.c(), "DECLARE held CURSOR WITH HOLD FOR SELECT x FROM ec_ledger_view");
      assertThat(FenceSql.string(writer.c(), EARLIER_COMMIT_CHECK, "ec/ledger", ledgerStale))
          .isNull();
      assertFails(MISSING, () -> writer.c().commit());
      Interleaving.tryCommit(writer);
      assertThat(Fence.count(observer, "SELECT count(*) FROM ec_ledger")).isZero();
    }
  }
}
