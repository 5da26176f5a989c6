package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.STALE;
import static dev.fencing.migrations.Interleaving.PATIENCE;
import static dev.fencing.migrations.Interleaving.async;
import static dev.fencing.migrations.Interleaving.awaitBlockedBy;
import static dev.fencing.migrations.Interleaving.begin;
import static dev.fencing.migrations.Interleaving.join;
import static dev.fencing.migrations.Interleaving.withoutBlocking;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.migrations.Interleaving.Isolation;
import dev.fencing.migrations.Interleaving.Session;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Migration V28: the READ COMMITTED accept path takes the advisory share lock keyed by the
 * resource's name, {@code (key space, hashtext(name))}, before its one read; every exclusive locker
 * takes the same key. Each interleaving is forced (pg_locks, pg_blocking_pids) under the three
 * isolation levels; under REPEATABLE READ and SERIALIZABLE the check takes no advisory lock and the
 * row lock does the waiting, as before.
 */
class NameKeyTest extends InterleavingTestBase {
  private static final int DEFAULT_SPACE = 1178946115;
  private static final int OTHER_SPACE = 4343;

  /**
   * Every entry point of the check, with one resource; the last checks two (fence() for each: the
   * path the protected tables' triggers take too). {@code ?} are the resource and its token.
   */
  private static final List<String> CALLS =
      List.of(
          "SELECT fencing.check_one(?, ?)",
          "SELECT fencing.check_token(?, ?)",
          "SELECT fencing.check_tokens(ARRAY[?]::text[], ARRAY[?]::bigint[])",
          "SELECT fencing.check_tokens_if_written(ARRAY[?]::text[], ARRAY[?]::bigint[])",
          "SELECT fencing.check_tokens(ARRAY[?, 'namekey/other']::text[], ARRAY[?, 1]::bigint[])");

  private static String function(String sql) {
    return sql.substring("SELECT fencing.".length(), sql.indexOf('('))
        + (sql.contains("namekey/other") ? "-2" : "");
  }

  private static void check(Session writer, String sql, String res, long token)
      throws SQLException {
    FenceSql.run(writer.c(), "SELECT pg_current_xact_id()"); // as a transaction that wrote
    FenceSql.run(writer.c(), sql, res, token);
  }

  /** The share locks {@code pid} holds on the key of {@code name} in {@code space}. */
  private static long nameKeyShareLocks(Connection observer, int pid, int space, String name)
      throws SQLException {
    return FenceSql.longValue(
        observer,
        "SELECT count(*) FROM pg_locks WHERE pid = ? AND locktype = 'advisory' AND granted"
            + " AND mode = 'ShareLock' AND classid = (?::bigint & 4294967295)::oid"
            + " AND objid = (hashtext(?)::bigint & 4294967295)::oid AND objsubid = 2",
        pid,
        space,
        name);
  }

  private static long otherToken(Connection observer) throws SQLException {
    if (FenceSql.longValue(
            observer, "SELECT count(*) FROM fencing.resource WHERE name = 'namekey/other'")
        == 0) {
      Fence.acquire(observer, "namekey/other", "holder-o", LEASE);
    }
    return Fence.maxSeen(observer, "namekey/other");
  }

  /**
   * (a) A check holding the name key (READ COMMITTED; the row lock otherwise) delays the handover
   * until it commits; the zombie's later check is refused.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void aCheckDelaysTheHandoverAndTheZombiesNextCheckIsRefused(Isolation isolation)
      throws SQLException {
    for (String sql : CALLS) {
      String res = "namekey/a/" + isolation.tag() + "/" + function(sql);
      try (Connection observer = db.connect();
          Session writer = Interleaving.writer(db, isolation);
          Session acquirer = Interleaving.session(db)) {
        long t1 = Fence.acquire(observer, res, "holder-a", LEASE);
        assertThat(Fence.release(observer, res, t1)).isTrue();
        String call = sql.replace("ARRAY[?, 1]", "ARRAY[?, " + otherToken(observer) + "]");

        begin(writer, isolation);
        check(writer, call, res, t1);
        assertThat(nameKeyShareLocks(observer, writer.pid(), DEFAULT_SPACE, res))
            .as("%s under %s: the name key, shared", function(sql), isolation)
            .isEqualTo(isolation == Isolation.READ_COMMITTED ? 1 : 0);

        CompletableFuture<Fence.Acquired> acquire =
            async(pool(), () -> Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, PATIENCE));
        awaitBlockedBy(observer, acquirer.pid(), writer.pid());
        Interleaving.write(writer, res, t1, "before-handover");
        writer.c().commit();
        Fence.Acquired acquired = join(acquire);
        assertThat(acquired.acquired()).isTrue();
        assertThat(acquired.token()).isNotNull().isGreaterThan(t1);

        begin(writer, isolation);
        Fence.assertFails(STALE, () -> check(writer, call, res, t1));
        writer.c().rollback();
        assertThat(Interleaving.writes(observer, res, "before-handover")).isOne();
      }
    }
  }

  /**
   * (b) Hazard 7: a check that comes while an acquisition holds the key exclusively (its new token
   * not committed) waits, and decides on the new max_seen: refused.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void aCheckWaitingBehindAnAcquisitionDecidesOnTheNewToken(Isolation isolation)
      throws SQLException {
    for (String sql : CALLS) {
      String res = "namekey/b/" + isolation.tag() + "/" + function(sql);
      try (Connection observer = db.connect();
          Session writer = Interleaving.writer(db, isolation);
          Session acquirer = Interleaving.writer(db, Isolation.READ_COMMITTED)) {
        long t1 = Fence.acquire(observer, res, "holder-a", LEASE);
        assertThat(Fence.release(observer, res, t1)).isTrue();
        String call = sql.replace("ARRAY[?, 1]", "ARRAY[?, " + otherToken(observer) + "]");

        begin(acquirer, Isolation.READ_COMMITTED);
        Fence.Acquired acquired = Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, PATIENCE);
        assertThat(acquired.acquired()).isTrue();
        long t2 = acquired.token();

        begin(writer, isolation);
        CompletableFuture<Void> check =
            async(
                pool(),
                () -> {
                  check(writer, call, res, t1);
                  return null;
                });
        awaitBlockedBy(observer, writer.pid(), acquirer.pid());
        if (isolation == Isolation.READ_COMMITTED) {
          assertThat(
                  FenceSql.string(
                      observer,
                      "SELECT wait_event FROM pg_stat_activity WHERE pid = ?",
                      writer.pid()))
              .as("%s waits on the name key", function(sql))
              .isEqualTo("advisory");
        }
        acquirer.c().commit();
        Fence.assertFails(STALE, () -> join(check));
        writer.c().rollback();
        assertThat(Fence.maxSeen(observer, res)).isEqualTo(t2);
      }
    }
  }

  /**
   * (c) set_advisory_key_space waits for the open checks; checks after it lock the new space and
   * are accepted, and an acquisition waits for them there.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void aKeySpaceChangeWaitsForOpenChecksAndTheNextChecksLockTheNewSpace(Isolation isolation)
      throws SQLException {
    String res = "namekey/c/" + isolation.tag();
    try (Connection observer = db.connect();
        Session admin = Interleaving.session(db);
        Session writer = Interleaving.writer(db, isolation);
        Session acquirer = Interleaving.session(db)) {
      long t1 = Fence.acquire(observer, res, "holder-a", LEASE);
      assertThat(Fence.release(observer, res, t1)).isTrue();
      try {
        begin(writer, isolation);
        check(writer, CALLS.get(0), res, t1);
        CompletableFuture<Long> change =
            async(
                pool(),
                () ->
                    FenceSql.longValue(
                        admin.c(), "SELECT fencing.set_advisory_key_space(?)", OTHER_SPACE));
        awaitBlockedBy(observer, admin.pid(), writer.pid());
        writer.c().commit();
        assertThat(join(change)).isEqualTo(DEFAULT_SPACE);

        for (String sql : CALLS) {
          begin(writer, isolation);
          check(
              writer,
              sql.replace("ARRAY[?, 1]", "ARRAY[?, " + otherToken(observer) + "]"),
              res,
              t1);
          assertThat(nameKeyShareLocks(observer, writer.pid(), OTHER_SPACE, res))
              .as("%s under %s: the name key in the new space", function(sql), isolation)
              .isEqualTo(isolation == Isolation.READ_COMMITTED ? 1 : 0);
          assertThat(nameKeyShareLocks(observer, writer.pid(), DEFAULT_SPACE, res)).isZero();
          writer.c().commit();
        }

        begin(writer, isolation);
        check(writer, CALLS.get(0), res, t1);
        CompletableFuture<Fence.Acquired> acquire =
            async(pool(), () -> Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, PATIENCE));
        awaitBlockedBy(observer, acquirer.pid(), writer.pid());
        writer.c().commit();
        Fence.Acquired acquired = join(acquire);
        assertThat(acquired.acquired()).isTrue();
        assertThat(acquired.token()).isNotNull().isGreaterThan(t1);
        begin(writer, isolation);
        Fence.assertFails(STALE, () -> check(writer, CALLS.get(0), res, t1));
        writer.c().rollback();
      } finally {
        writer.c().rollback(); // a failed case must not leave the change waiting for its check
        FenceSql.longValue(admin.c(), "SELECT fencing.set_advisory_key_space(?)", DEFAULT_SPACE);
      }
    }
  }

  /**
   * (d) Two names with one hashtext share a key: an acquisition of one waits for a check of the
   * other (READ COMMITTED), a check of one waits for an acquisition of the other, and every
   * decision is the one its own row gives.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void namesWithOneHashOnlyWaitForEachOther(Isolation isolation) throws SQLException {
    try (Connection observer = db.connect();
        Session writer = Interleaving.writer(db, isolation);
        Session acquirer = Interleaving.writer(db, Isolation.READ_COMMITTED)) {
      List<String> pair =
          FenceSql.strings(
              observer,
              "SELECT n FROM (SELECT n, hashtext(n) AS h, count(*) OVER (PARTITION BY hashtext(n)) AS k"
                  + " FROM (SELECT 'namekey/d/' || ? || '/' || g AS n"
                  + "        FROM generate_series(1, 400000) g) s) t"
                  + " WHERE k > 1 ORDER BY h, n LIMIT 2",
              isolation.tag());
      assertThat(pair).hasSize(2);
      String a = pair.get(0);
      String b = pair.get(1);
      assertThat(FenceSql.longValue(observer, "SELECT hashtext(?) - hashtext(?)", a, b)).isZero();
      long ta = Fence.acquire(observer, a, "holder-a", LEASE);
      assertThat(Fence.release(observer, a, ta)).isTrue();
      long tb = Fence.acquire(observer, b, "holder-b", LEASE);

      // a check of b; the acquisition of a waits for it under READ COMMITTED (one key)
      begin(writer, isolation);
      check(writer, CALLS.get(0), b, tb);
      CompletableFuture<Fence.Acquired> acquire =
          async(pool(), () -> Fence.tryAcquire(acquirer.c(), a, "holder-c", LEASE, PATIENCE));
      if (isolation == Isolation.READ_COMMITTED) {
        awaitBlockedBy(observer, acquirer.pid(), writer.pid());
      }
      Interleaving.write(writer, b, tb, "b-while-a-moved");
      writer.c().commit();
      Fence.Acquired acquired = join(acquire);
      acquirer.c().commit();
      assertThat(acquired.acquired()).isTrue();
      long ta2 = acquired.token();

      // an acquisition of a in progress: a check of b waits for it, then is accepted
      begin(acquirer, Isolation.READ_COMMITTED);
      assertThat(Fence.release(acquirer.c(), a, ta2)).isTrue();
      Fence.Acquired again = Fence.tryAcquire(acquirer.c(), a, "holder-d", LEASE, PATIENCE);
      assertThat(again.acquired()).isTrue();
      begin(writer, isolation);
      CompletableFuture<Void> check =
          async(
              pool(),
              () -> {
                check(writer, CALLS.get(0), b, tb);
                return null;
              });
      if (isolation == Isolation.READ_COMMITTED) {
        awaitBlockedBy(observer, writer.pid(), acquirer.pid());
      }
      acquirer.c().commit();
      join(check);
      writer.c().commit();

      // and a's old tokens are refused, b's is not
      begin(writer, isolation);
      Fence.assertFails(STALE, () -> check(writer, CALLS.get(0), a, ta2));
      writer.c().rollback();
      assertThat(Fence.maxSeen(observer, b)).isEqualTo(tb);
      assertThat(Interleaving.writes(observer, b, "b-while-a-moved")).isOne();
    }
  }

  /**
   * (e) Hazard 8: ROLLBACK TO SAVEPOINT releases the share lock taken after the savepoint (the row
   * lock under REPEATABLE READ / SERIALIZABLE): the handover no longer waits, and the token checked
   * again afterwards is refused.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void rollbackToSavepointReleasesTheNameKey(Isolation isolation) throws SQLException {
    String res = "namekey/e/" + isolation.tag();
    try (Connection observer = db.connect();
        Session writer = Interleaving.writer(db, isolation);
        Session acquirer = Interleaving.session(db)) {
      long t1 = Fence.acquire(observer, res, "holder-a", LEASE);
      assertThat(Fence.release(observer, res, t1)).isTrue();

      begin(writer, isolation);
      FenceSql.run(writer.c(), "SELECT pg_current_xact_id()");
      FenceSql.run(writer.c(), "SAVEPOINT s");
      FenceSql.run(writer.c(), CALLS.get(0), res, t1);
      assertThat(nameKeyShareLocks(observer, writer.pid(), DEFAULT_SPACE, res))
          .isEqualTo(isolation == Isolation.READ_COMMITTED ? 1 : 0);
      FenceSql.run(writer.c(), "ROLLBACK TO SAVEPOINT s");
      assertThat(nameKeyShareLocks(observer, writer.pid(), DEFAULT_SPACE, res)).isZero();

      Fence.Acquired acquired =
          withoutBlocking(
              pool(), () -> Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, PATIENCE));
      assertThat(acquired.acquired()).isTrue();
      // (REPEATABLE READ / SERIALIZABLE: the row changed after the snapshot, fence_full's ZF001)
      Fence.assertFails(STALE, () -> FenceSql.run(writer.c(), CALLS.get(0), res, t1));
      writer.c().rollback();
    }
  }

  /**
   * (g) A check that took the name key in the old key space and whose read waits for a key space
   * change's table lock (its READ COMMITTED snapshot taken before the change committed) must not be
   * accepted unless an acquisition after the change waits for its transaction.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void aCheckWaitingForAKeySpaceChangeIsNotAcceptedOnTheOldKeyAlone(Isolation isolation)
      throws SQLException {
    String res = "namekey/g/" + isolation.tag();
    try (Connection observer = db.connect();
        Session admin = Interleaving.writer(db, Isolation.READ_COMMITTED);
        Session writer = Interleaving.writer(db, isolation);
        Session acquirer = Interleaving.session(db)) {
      long t1 = Fence.acquire(observer, res, "holder-a", LEASE);
      assertThat(Fence.release(observer, res, t1)).isTrue();
      try {
        begin(admin, Isolation.READ_COMMITTED);
        FenceSql.longValue(admin.c(), "SELECT fencing.set_advisory_key_space(?)", OTHER_SPACE);
        begin(writer, isolation);
        CompletableFuture<Void> check =
            async(
                pool(),
                () -> {
                  check(writer, CALLS.get(0), res, t1);
                  return null;
                });
        awaitBlockedBy(observer, writer.pid(), admin.pid());
        assertThat(nameKeyShareLocks(observer, writer.pid(), DEFAULT_SPACE, res))
            .as("under %s the check waits holding the old space's name key", isolation)
            .isEqualTo(isolation == Isolation.READ_COMMITTED ? 1 : 0);
        admin.c().commit();
        boolean accepted;
        try {
          join(check);
          accepted = true;
        } catch (SQLException e) {
          accepted = false; // refused or 40001: nothing to hand over behind
        }
        if (accepted) {
          CompletableFuture<Fence.Acquired> acquire =
              async(pool(), () -> Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, PATIENCE));
          await()
              .atMost(PATIENCE)
              .pollInterval(java.time.Duration.ofMillis(5))
              .until(() -> acquire.isDone() || blocked(observer, acquirer.pid(), writer.pid()));
          assertThat(acquire)
              .as("under %s an acquisition while the accepted check of %s is open", isolation, t1)
              .isNotDone();
          writer.c().commit();
          assertThat(join(acquire).token()).isNotNull().isGreaterThan(t1);
        }
      } finally {
        writer.c().rollback();
        admin.c().rollback();
        FenceSql.longValue(admin.c(), "SELECT fencing.set_advisory_key_space(?)", DEFAULT_SPACE);
        admin.c().commit();
      }
    }
  }

  private static boolean blocked(Connection observer, int waiter, int blocker) throws SQLException {
    try {
      Interleaving.assertBlockedBy(observer, waiter, blocker);
      return true;
    } catch (AssertionError e) {
      return false;
    }
  }
}
