package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Migration V14: the functions an issuance calls keep their plans for the session. A SQL-language
 * function with a SET clause is never inlined and is parsed and planned again in every transaction
 * that calls it; V12's own_epoch(), epoch_of() and current_timeline() were such functions, and
 * tripled the server's cost of try_acquire. V14 gives them the same SQL in PL/pgSQL. What they
 * answer is unchanged (EpochTest and FailoverTest judge the epochs themselves).
 */
class IssuanceCostTest {
  @RegisterExtension final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final String ISSUANCE_PATH =
      "'fencing.try_acquire(text,text,interval,interval)'::regprocedure,"
          + " 'fencing.issue_token(bigint)'::regprocedure,"
          + " 'fencing.own_epoch()'::regprocedure,"
          + " 'fencing.epoch_of(fencing.cluster_epoch)'::regprocedure,"
          + " 'fencing.current_timeline()'::regprocedure,"
          + " 'fencing.lock_issuance(boolean)'::regprocedure,"
          + " 'fencing.release(text,bigint)'::regprocedure";

  @BeforeEach
  void migrate() throws SQLException {
    assertThat(Fence.migrate(db)).isEqualTo(Fence.MIGRATIONS);
  }

  @Test
  void noFunctionOnTheIssuancePathIsASqlFunctionReplannedPerTransaction() throws SQLException {
    try (Connection operator = db.connect()) {
      assertThat(
              FenceSql.strings(
                  operator,
                  "SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_language l"
                      + " ON l.oid = p.prolang WHERE p.oid IN ("
                      + ISSUANCE_PATH
                      + ") AND l.lanname = 'sql' AND p.proconfig IS NOT NULL ORDER BY 1"))
          .as("SQL functions with a SET clause (never inlined: planned in every transaction)")
          .isEmpty();
      assertThat(
              FenceSql.longValue(
                  operator,
                  "SELECT count(*) FROM pg_proc p WHERE p.oid IN (" + ISSUANCE_PATH + ")"))
          .isEqualTo(7);
      assertThat(
              FenceSql.strings(
                  operator,
                  "SELECT p.oid::regprocedure::text FROM pg_proc p WHERE p.oid IN ("
                      + ISSUANCE_PATH
                      + ") AND NOT coalesce('search_path=pg_catalog, pg_temp' = ANY (p.proconfig),"
                      + " false) ORDER BY 1"))
          .as("each pins search_path")
          .isEmpty();
    }
  }

  @Test
  void theEpochFunctionsAnswerAsTheirSqlDoes() throws SQLException {
    try (Connection operator = db.connect()) {
      long timeline =
          FenceSql.longValue(operator, "SELECT timeline_id FROM pg_control_checkpoint()");
      assertThat(FenceSql.longValue(operator, "SELECT fencing.current_timeline()"))
          .isEqualTo(timeline);
      String own =
          "SELECT c.epoch_offset FROM fencing.cluster_epoch c"
              + " WHERE c.system_identifier = (SELECT system_identifier FROM pg_control_system())"
              + " AND c.database_oid = (SELECT oid FROM pg_database WHERE datname ="
              + " current_database()) AND c.resource_table = 'fencing.resource'::regclass";
      assertThat(FenceSql.longValue(operator, "SELECT epoch_offset FROM fencing.own_epoch()"))
          .isEqualTo(FenceSql.longValue(operator, own));
      long epoch = FenceSql.longValue(operator, "SELECT fencing.epoch_of(fencing.own_epoch())");
      assertThat(FenceSql.longValue(operator, "SELECT epoch FROM fencing.epoch_status()"))
          .isEqualTo(epoch);

      // advanced: the recorded floor and offset move, and both functions follow
      assertThat(FenceSql.longValue(operator, "SELECT fencing.advance_epoch()"))
          .isEqualTo(epoch + EpochTest.ADVANCE);
      assertThat(FenceSql.longValue(operator, "SELECT fencing.epoch_of(fencing.own_epoch())"))
          .isEqualTo(epoch + EpochTest.ADVANCE);
      assertThat(FenceSql.string(operator, "SELECT reason FROM fencing.own_epoch()"))
          .isEqualTo("advanced");

      // no row for this key: own_epoch() is the all-NULL row, epoch_of() of it NULL
      operator.setAutoCommit(false);
      FenceSql.run(operator, "DELETE FROM fencing.cluster_epoch");
      assertThat(FenceSql.longValue(operator, "SELECT count(*) FROM fencing.own_epoch()"))
          .isEqualTo(1);
      assertThat(
              FenceSql.string(
                  operator,
                  "SELECT coalesce(e.system_identifier::text, 'null') FROM fencing.own_epoch() e"))
          .isEqualTo("null");
      assertThat(
              FenceSql.string(
                  operator, "SELECT coalesce(fencing.epoch_of(fencing.own_epoch())::text, 'null')"))
          .isEqualTo("null");
      operator.rollback();
    }
    try (AppRole app = AppRole.create(db, "issuance_cost_app");
        Connection c = app.connect()) {
      long first = Fence.acquire(c, "issuance-cost/a", "app", Duration.ofMinutes(5));
      try (Connection operator = db.connect()) {
        assertThat(first >> 43)
            .isEqualTo(
                FenceSql.longValue(operator, "SELECT fencing.epoch_of(fencing.own_epoch())"));
      }
    }
  }

  /**
   * V15: under READ COMMITTED the issuance re-reads the epoch after its lock without locking the
   * epoch row (no WAL record, no multixact per acquisition); under a snapshot per transaction it
   * keeps V12's FOR SHARE, which is what raises 40001 there (EpochTest races both).
   */
  @ParameterizedTest
  @ValueSource(strings = {"READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"})
  void theEpochRowIsLockedOnlyUnderASnapshotPerTransaction(String isolation) throws SQLException {
    try (AppRole app = AppRole.create(db, "issuance_lock_app");
        Connection c = app.connect();
        Connection operator = db.connect()) {
      Fence.acquire(c, "issuance-cost/warm", "app", Duration.ofMinutes(5));
      String xmax = "SELECT xmax::text FROM fencing.cluster_epoch";
      String before = FenceSql.string(operator, xmax);
      c.setAutoCommit(false);
      FenceSql.run(c, "SET TRANSACTION ISOLATION LEVEL " + isolation);
      Fence.acquire(
          c, "issuance-cost/" + isolation.replace(' ', '-'), "app", Duration.ofMinutes(5));
      String xid = FenceSql.string(c, "SELECT pg_current_xact_id()::xid::text");
      c.commit();
      if (isolation.equals("READ COMMITTED")) {
        assertThat(FenceSql.string(operator, xmax)).as("the epoch row's xmax").isEqualTo(before);
      } else {
        assertThat(FenceSql.string(operator, xmax)).as("the epoch row's xmax").isEqualTo(xid);
      }
    }
  }

  /**
   * V20: an acquisition with nothing to hand over takes the resource row lock in its own
   * transaction, not in the handover's subtransaction (V10-V16 locked it inside an EXCEPTION block,
   * so the subtransaction took an xid of its own and the update after it left a multixact on the
   * row). The row then carries the acquiring transaction's xid; a lock taken in a subtransaction
   * leaves the subtransaction's.
   */
  @ParameterizedTest
  @ValueSource(strings = {"READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"})
  void anAcquisitionWithNothingToHandOverTakesNoSubtransaction(String isolation)
      throws SQLException {
    try (AppRole app = AppRole.create(db, "issuance_subxact_app");
        Connection c = app.connect();
        Connection operator = db.connect()) {
      String resource = "issuance-cost/subxact-" + isolation.replace(' ', '-');
      long first = Fence.acquire(c, resource, "app", Duration.ofMinutes(5));
      assertThat(Fence.release(c, resource, first)).isTrue();
      c.setAutoCommit(false);
      FenceSql.run(c, "SET TRANSACTION ISOLATION LEVEL " + isolation);
      long second = Fence.acquire(c, resource, "app", Duration.ofMinutes(5));
      String xid = FenceSql.string(c, "SELECT pg_current_xact_id()::xid::text");
      c.commit();
      assertThat(second).isGreaterThan(first);
      assertThat(
              FenceSql.string(
                  operator,
                  "SELECT xmax::text FROM fencing.resource WHERE name = '" + resource + "'"))
          .as("the resource row's xmax: the acquiring transaction, no subtransaction")
          .isEqualTo(xid);
    }
  }
}
