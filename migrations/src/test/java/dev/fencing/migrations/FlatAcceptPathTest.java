package dev.fencing.migrations;

import static dev.fencing.migrations.Interleaving.PATIENCE;
import static dev.fencing.migrations.Interleaving.async;
import static dev.fencing.migrations.Interleaving.awaitBlockedBy;
import static dev.fencing.migrations.Interleaving.begin;
import static dev.fencing.migrations.Interleaving.join;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.migrations.Interleaving.Isolation;
import dev.fencing.migrations.Interleaving.Session;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Migration V15: the common check (READ COMMITTED, a local non-strict resource, the current token)
 * runs V10's fast path inside the function the application calls, with no nested function call, and
 * still holds the resource's advisory share lock until the transaction ends; every other isolation
 * level keeps the full path and its row lock.
 */
class FlatAcceptPathTest extends InterleavingTestBase {
  /**
   * The API functions with a one-resource fast path, as the application calls them (check_one: V21,
   * what fencing-jdbc carries for one token).
   */
  private static final List<String> CALLS =
      List.of(
          "SELECT fencing.check_token(?, ?)",
          "SELECT fencing.check_one(?, ?)",
          "SELECT fencing.check_tokens(ARRAY[?]::text[], ARRAY[?]::bigint[])",
          "SELECT fencing.check_tokens_if_written(ARRAY[?]::text[], ARRAY[?]::bigint[])");

  @BeforeAll
  static void countFunctionCalls() throws SQLException {
    try (Connection c = db.connect()) {
      FenceSql.run(
          c,
          "ALTER DATABASE " + FenceSql.quoteIdentifier(db.name()) + " SET track_functions = 'all'");
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 2, 3})
  void theCommonCheckIsOneFlatCallHoldingTheAdvisoryShareLock(int call) throws SQLException {
    String sql = CALLS.get(call);
    String function = sql.substring("SELECT fencing.".length(), sql.indexOf('('));
    String res = "flat/" + function;
    try (Connection observer = db.connect();
        Session writer = Interleaving.writer(db, Isolation.READ_COMMITTED);
        Session acquirer = Interleaving.session(db)) {
      long t1 = Fence.acquire(acquirer.c(), res, "holder-a", LEASE);
      assertThat(Fence.release(acquirer.c(), res, t1)).isTrue();
      begin(writer, Isolation.READ_COMMITTED);
      assertThat(FenceSql.string(writer.c(), "SHOW track_functions")).isEqualTo("all");
      if (function.equals("check_tokens_if_written")) {
        FenceSql.run(writer.c(), "SELECT pg_current_xact_id()"); // as a transaction that wrote
      }
      FenceSql.run(writer.c(), sql, res, t1);

      assertThat(
              FenceSql.strings(
                  writer.c(),
                  "SELECT funcname || ' ' || calls FROM pg_stat_xact_user_functions"
                      + " WHERE schemaname = 'fencing' ORDER BY 1"))
          .as("the functions of the fence this transaction called")
          .containsExactly(function + " 1");
      if (!function.equals("check_tokens_if_written")) {
        assertThat(FenceSql.string(writer.c(), "SELECT pg_current_xact_id_if_assigned()::text"))
            .as("no tuple lock, no transaction id")
            .isNull();
      }
      assertThat(
              FenceSql.longValue(
                  observer,
                  "SELECT count(*) FROM pg_locks l, fencing.resource r"
                      + " WHERE l.pid = ? AND l.locktype = 'advisory' AND l.mode = 'ShareLock'"
                      + " AND l.granted AND l.classid = r.lock_space::oid"
                      + " AND l.objid = (fencing.advisory_key(r.id)::bigint & 4294967295)::oid"
                      + " AND l.objsubid = 2 AND r.name = ?",
                  writer.pid(),
                  res))
          .as("the resource's advisory share lock, held after the check")
          .isOne();

      // an acquisition waits for it (on the advisory lock), and the check's token stays current
      CompletableFuture<Fence.Acquired> acquire =
          async(pool(), () -> Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, PATIENCE));
      awaitBlockedBy(observer, acquirer.pid(), writer.pid());
      assertThat(waitEvent(observer, acquirer.pid())).isEqualTo("advisory");
      assertThat(Fence.maxSeen(observer, res)).isEqualTo(t1);
      writer.c().commit();
      Fence.Acquired acquired = join(acquire);
      assertThat(acquired.acquired()).isTrue();
      assertThat(acquired.token()).isNotNull().isGreaterThan(t1);
    }
  }

  @ParameterizedTest
  @EnumSource(
      value = Isolation.class,
      names = {"REPEATABLE_READ", "SERIALIZABLE"})
  void aSnapshotPerTransactionKeepsTheRowLock(Isolation isolation) throws SQLException {
    for (String sql : CALLS) {
      String function = sql.substring("SELECT fencing.".length(), sql.indexOf('('));
      String res = "flat/" + isolation.tag() + "/" + function;
      try (Connection observer = db.connect();
          Session writer = Interleaving.writer(db, isolation);
          Session acquirer = Interleaving.session(db)) {
        long t1 = Fence.acquire(acquirer.c(), res, "holder-a", LEASE);
        assertThat(Fence.release(acquirer.c(), res, t1)).isTrue();
        begin(writer, isolation);
        if (function.equals("check_tokens_if_written")) {
          FenceSql.run(writer.c(), "SELECT pg_current_xact_id()");
        }
        FenceSql.run(writer.c(), sql, res, t1);
        assertThat(FenceSql.calls(writer.c(), "fence_full"))
            .as("%s under %s: the full path", function, isolation)
            .isOne();
        assertThat(FenceSql.string(writer.c(), "SELECT pg_current_xact_id_if_assigned()::text"))
            .as("FOR SHARE: a transaction id")
            .isNotNull();
        assertThat(
                FenceSql.longValue(
                    observer,
                    "SELECT count(*) FROM pg_locks WHERE pid = ? AND locktype = 'advisory'",
                    writer.pid()))
            .isZero();

        // the acquisition gets the advisory lock and waits for the row locker's transaction
        CompletableFuture<Fence.Acquired> acquire =
            async(pool(), () -> Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, PATIENCE));
        awaitBlockedBy(observer, acquirer.pid(), writer.pid());
        assertThat(waitEvent(observer, acquirer.pid())).isEqualTo("transactionid");
        writer.c().commit();
        Fence.Acquired acquired = join(acquire);
        assertThat(acquired.acquired()).isTrue();
        assertThat(acquired.token()).isNotNull().isGreaterThan(t1);
      }
    }
  }

  @Test
  void whatTheFastPathDoesNotAcceptGoesToTheFullPath() throws SQLException {
    String res = "flat/stale";
    try (Session writer = Interleaving.writer(db, Isolation.READ_COMMITTED);
        Session acquirer = Interleaving.session(db)) {
      long t1 = Fence.acquire(acquirer.c(), res, "holder-a", LEASE);
      assertThat(Fence.release(acquirer.c(), res, t1)).isTrue();
      long t2 = Fence.acquire(acquirer.c(), res, "holder-b", LEASE);
      for (String sql : CALLS) {
        begin(writer, Isolation.READ_COMMITTED);
        FenceSql.run(writer.c(), "SELECT pg_current_xact_id()");
        Fence.assertFails(Fence.STALE, () -> FenceSql.run(writer.c(), sql, res, t1));
        writer.c().rollback();
      }
      assertThat(Fence.maxSeen(writer.c(), res)).isEqualTo(t2);
      writer.c().rollback();
    }
  }

  /**
   * V21: check_one returns what check_tokens returns for the same one resource (how many it
   * advanced), and refuses what it refuses, at every isolation level.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void checkOneAnswersAsCheckTokensForOneResource(Isolation isolation) throws SQLException {
    String one = "SELECT fencing.check_one(?, ?)";
    String tokens = "SELECT fencing.check_tokens(ARRAY[?]::text[], ARRAY[?]::bigint[])";
    String ext = "flat/one/" + isolation.tag();
    try (Session writer = Interleaving.writer(db, isolation);
        Session admin = Interleaving.session(db)) {
      FenceSql.run(admin.c(), "SELECT fencing.create_resource(?, true)", ext + "/a");
      FenceSql.run(admin.c(), "SELECT fencing.create_resource(?, true)", ext + "/b");
      long local = Fence.acquire(admin.c(), ext + "/local", "holder", LEASE);
      for (String[] r : new String[][] {{one, ext + "/a"}, {tokens, ext + "/b"}}) {
        begin(writer, isolation);
        assertThat(FenceSql.longValue(writer.c(), r[0], r[1], 5L)).as("advances").isOne();
        writer.c().commit();
        begin(writer, isolation);
        assertThat(FenceSql.longValue(writer.c(), r[0], r[1], 5L)).as("current").isZero();
        assertThat(FenceSql.longValue(writer.c(), r[0], ext + "/local", local))
            .as("a lease's token")
            .isZero();
        writer.c().commit();
        begin(writer, isolation);
        Fence.assertFails(Fence.STALE, () -> FenceSql.run(writer.c(), r[0], r[1], 4L));
        writer.c().rollback();
        assertThat(Fence.maxSeen(admin.c(), r[1])).isEqualTo(5L);
      }
    }
  }

  private static String waitEvent(Connection observer, int pid) throws SQLException {
    return String.valueOf(
        FenceSql.string(observer, "SELECT wait_event FROM pg_stat_activity WHERE pid = ?", pid));
  }
}
