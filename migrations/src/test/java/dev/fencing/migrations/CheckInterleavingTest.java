package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.HANDOVER_TIMEOUT;
import static dev.fencing.migrations.Fence.STALE;
import static dev.fencing.migrations.Fence.assertFails;
import static dev.fencing.migrations.Interleaving.PATIENCE;
import static dev.fencing.migrations.Interleaving.SERIALIZATION_FAILURE;
import static dev.fencing.migrations.Interleaving.async;
import static dev.fencing.migrations.Interleaving.awaitBlockedBy;
import static dev.fencing.migrations.Interleaving.begin;
import static dev.fencing.migrations.Interleaving.join;
import static dev.fencing.migrations.Interleaving.sqlState;
import static dev.fencing.migrations.Interleaving.write;
import static dev.fencing.migrations.Interleaving.writes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import dev.fencing.migrations.Interleaving.Isolation;
import dev.fencing.migrations.Interleaving.Session;
import dev.fencing.migrations.Interleaving.Status;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Forced interleavings of check_token (in the writers' transactions, at each isolation level) with
 * try_acquire (eager fencing: it advances max_seen and waits for the FOR SHARE holders of older
 * tokens) and with other checks.
 */
class CheckInterleavingTest extends InterleavingTestBase {

  /** (a) An open, checked transaction holds off the next acquisition; then it is fenced off. */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void openCheckedTransactionBlocksAcquireUntilItEndsThenItsTokenIsStale(Isolation iso)
      throws SQLException {
    String res = "interleave-a-" + iso.tag();
    try (Connection observer = db.connect();
        Session admin = Interleaving.session(db);
        Session writer = Interleaving.writer(db, iso);
        Session acquirer = Interleaving.session(db)) {
      long t1 = Fence.acquire(admin.c(), res, "holder-a", LEASE);
      // free the lease so that the next acquisition goes straight to the handover; t1 stays the
      // current token until then
      assertThat(Fence.release(admin.c(), res, t1)).isTrue();

      begin(writer, iso);
      assertThat(Fence.check(writer.c(), res, t1)).isEqualTo(t1);
      write(writer, res, t1, "fenced");

      CompletableFuture<Fence.Acquired> acquire =
          async(pool(), () -> Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, PATIENCE));
      awaitBlockedBy(observer, acquirer.pid(), writer.pid());
      assertThat(acquire).isNotDone();
      assertThat(Fence.maxSeen(observer, res)).as("not advanced while waiting").isEqualTo(t1);

      writer.c().commit();
      Fence.Acquired acquired = join(acquire);
      assertThat(acquired.acquired()).isTrue();
      assertThat(acquired.token()).isNotNull().isGreaterThan(t1);
      assertThat(Fence.maxSeen(observer, res)).isEqualTo(acquired.token());
      assertThat(writes(observer, res, "fenced")).as("write committed before handover").isOne();

      // the old holder's next transaction: its write goes with the refused check
      begin(writer, iso);
      write(writer, res, t1, "stale");
      assertFails(STALE, () -> Fence.check(writer.c(), res, t1));
      Interleaving.tryCommit(writer);
      assertThat(writes(observer, res, "stale")).as("write under the stale token").isZero();
      assertThat(Fence.maxSeen(observer, res)).isEqualTo(acquired.token());
    }
  }

  /**
   * (b) Same-token writers share the fence: both checks return while both transactions are open,
   * both commit; an acquisition in between waits for each of them.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void sameTokenWritersPassConcurrently(Isolation iso) throws SQLException {
    String res = "interleave-b-" + iso.tag();
    try (Connection observer = db.connect();
        Session admin = Interleaving.session(db);
        Session w1 = Interleaving.writer(db, iso);
        Session w2 = Interleaving.writer(db, iso);
        Session acquirer = Interleaving.session(db)) {
      long t1 = Fence.acquire(admin.c(), res, "holder-a", LEASE);
      assertThat(Fence.release(admin.c(), res, t1)).isTrue();

      begin(w1, iso);
      assertThat(Fence.check(w1.c(), res, t1)).isEqualTo(t1);
      write(w1, res, t1, "w1");
      begin(w2, iso);
      // must return while w1 is open: fails after PATIENCE if it blocks
      long second = Interleaving.withoutBlocking(pool(), () -> Fence.check(w2.c(), res, t1));
      assertThat(second).isEqualTo(t1);
      write(w2, res, t1, "w2");
      Interleaving.assertIdleInTransaction(observer, w1.pid());
      Interleaving.assertIdleInTransaction(observer, w2.pid());

      // both hold the fence: an acquisition waits for w1 and then still for w2
      CompletableFuture<Fence.Acquired> acquire =
          async(pool(), () -> Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, PATIENCE));
      await("acquirer waits on a lock")
          .atMost(PATIENCE)
          .pollInterval(Duration.ofMillis(5))
          .pollInSameThread()
          .untilAsserted(
              () ->
                  assertThat(lockWait(observer, acquirer.pid())).containsAnyOf(w1.pid(), w2.pid()));
      w1.c().commit();
      awaitBlockedBy(observer, acquirer.pid(), w2.pid());
      assertThat(acquire).isNotDone();
      w2.c().commit();

      Fence.Acquired acquired = join(acquire);
      assertThat(acquired.acquired()).isTrue();
      assertThat(acquired.token()).isNotNull().isGreaterThan(t1);
      assertThat(writes(observer, res, "w1")).isOne();
      assertThat(writes(observer, res, "w2")).isOne();
    }
  }

  /**
   * (c) Two advancers of an external resource in token order: the second waits for the first and
   * then advances (READ COMMITTED re-reads; REPEATABLE READ / SERIALIZABLE may answer 40001, and
   * the retry advances). Never a deadlock.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void concurrentAdvancersInTokenOrderBothPass(Isolation iso) throws SQLException {
    String res = "interleave-c-up-" + iso.tag();
    try (Connection observer = db.connect();
        Session t1 = Interleaving.writer(db, iso);
        Session t2 = Interleaving.writer(db, iso)) {
      Interleaving.createResource(observer, res, true, false);

      begin(t1, iso);
      assertThat(Fence.check(t1.c(), res, 10L)).isEqualTo(10L);
      write(t1, res, 10, "t1");

      begin(t2, iso);
      CompletableFuture<Long> check11 =
          async(
              pool(),
              () -> {
                long accepted = Fence.check(t2.c(), res, 11L);
                write(t2, res, 11, "t2");
                return accepted;
              });
      awaitBlockedBy(observer, t2.pid(), t1.pid());
      assertThat(check11).isNotDone();
      t1.c().commit();

      SQLException first = catchThrowableOfType(SQLException.class, () -> join(check11));
      if (first == null) {
        assertThat(check11.join()).isEqualTo(11L);
        t2.c().commit();
      } else {
        assertThat(iso.snapshotPerTransaction())
            .as("only REPEATABLE READ / SERIALIZABLE may answer 40001, got: %s", first)
            .isTrue();
        assertThat(sqlState(first)).as(first.getMessage()).isEqualTo(SERIALIZATION_FAILURE);
        t2.c().rollback();
        begin(t2, iso);
        assertThat(Fence.check(t2.c(), res, 11L)).as("retry").isEqualTo(11L);
        write(t2, res, 11, "t2");
        t2.c().commit();
      }
      assertThat(Fence.maxSeen(observer, res)).isEqualTo(11L);
      assertThat(writes(observer, res, "t1")).isOne();
      assertThat(writes(observer, res, "t2")).isOne();
    }
  }

  /**
   * (c, reversed) 11 advances first and stays open; 10 waits and then is stale (possibly after a
   * 40001 and a retry under REPEATABLE READ / SERIALIZABLE). Never a deadlock.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void concurrentAdvancersOutOfOrderOlderIsStale(Isolation iso) throws SQLException {
    String res = "interleave-c-down-" + iso.tag();
    try (Connection observer = db.connect();
        Session t1 = Interleaving.writer(db, iso);
        Session t2 = Interleaving.writer(db, iso)) {
      Interleaving.createResource(observer, res, true, false);

      begin(t1, iso);
      assertThat(Fence.check(t1.c(), res, 11L)).isEqualTo(11L);
      write(t1, res, 11, "t1");

      begin(t2, iso);
      CompletableFuture<Long> check10 =
          async(
              pool(),
              () -> {
                write(t2, res, 10, "t2");
                return Fence.check(t2.c(), res, 10L);
              });
      awaitBlockedBy(observer, t2.pid(), t1.pid());
      assertThat(check10).isNotDone();
      t1.c().commit();

      SQLException first = catchThrowableOfType(SQLException.class, () -> join(check10));
      assertThat((Throwable) first).as("token 10 after 11 was accepted").isNotNull();
      if (sqlState(first).equals(SERIALIZATION_FAILURE)) {
        assertThat(iso.snapshotPerTransaction())
            .as("only REPEATABLE READ / SERIALIZABLE may answer 40001: %s", first.getMessage())
            .isTrue();
        t2.c().rollback();
        begin(t2, iso);
        write(t2, res, 10, "t2");
        assertFails(STALE, () -> Fence.check(t2.c(), res, 10L));
      } else {
        assertThat(sqlState(first)).as(first.getMessage()).isEqualTo(STALE);
      }
      Interleaving.tryCommit(t2);

      assertThat(Fence.maxSeen(observer, res)).isEqualTo(11L);
      assertThat(writes(observer, res, "t1")).isOne();
      assertThat(writes(observer, res, "t2")).isZero();
    }
  }

  /**
   * (d) A handover that times out (ZF007) changes nothing; once the fenced writer ended, the next
   * acquisition succeeds.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void handoverTimeoutChangesNothing(Isolation iso) throws SQLException {
    String res = "interleave-d-" + iso.tag();
    try (Connection observer = db.connect();
        Session admin = Interleaving.session(db);
        Session writer = Interleaving.writer(db, iso);
        Session acquirer = Interleaving.session(db)) {
      // a lease that expires (holder-a stays recorded as the holder) rather than being released
      long t1 = Fence.acquire(admin.c(), res, "holder-a", Duration.ofMillis(50));
      await("lease expired")
          .atMost(PATIENCE)
          .pollInterval(Duration.ofMillis(10))
          .pollInSameThread()
          .until(() -> !Interleaving.leaseValid(observer, res));

      begin(writer, iso);
      assertThat(Fence.check(writer.c(), res, t1)).isEqualTo(t1);
      write(writer, res, t1, "fenced");

      Status before = Interleaving.status(observer, res);
      assertThat(before).isEqualTo(new Status(t1, t1, "holder-a", t1));
      long issuedBefore = Fence.count(observer, "SELECT count(*) FROM fencing.issuance");
      String lockTimeoutBefore = showLockTimeout(acquirer.c());

      long started = System.nanoTime();
      assertFails(
          HANDOVER_TIMEOUT,
          () -> Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, Duration.ofMillis(200)));
      Duration waited = Duration.ofNanos(System.nanoTime() - started);
      assertThat(waited)
          .as("waited for the handover")
          .isGreaterThanOrEqualTo(Duration.ofMillis(190));

      assertThat(Interleaving.status(observer, res)).isEqualTo(before);
      assertThat(Fence.count(observer, "SELECT count(*) FROM fencing.issuance"))
          .isEqualTo(issuedBefore);
      assertThat(showLockTimeout(acquirer.c()))
          .as("the handover's lock_timeout does not leak into the session")
          .isEqualTo(lockTimeoutBefore);

      // the writer's fence was never broken: its check is still good and it commits
      assertThat(Fence.check(writer.c(), res, t1)).isEqualTo(t1);
      writer.c().commit();
      assertThat(writes(observer, res, "fenced")).isOne();

      Fence.Acquired acquired = Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, PATIENCE);
      assertThat(acquired.acquired()).isTrue();
      assertThat(acquired.token()).isNotNull().isGreaterThan(t1);
      assertThat(Interleaving.status(observer, res))
          .isEqualTo(new Status(acquired.token(), acquired.token(), "holder-b", acquired.token()));
      assertThat(showLockTimeout(acquirer.c()))
          .as("nor does it after a successful handover")
          .isEqualTo(lockTimeoutBefore);
    }
  }

  /** The pids the backend is waiting for, empty unless it waits on a heavyweight lock. */
  private static Integer[] lockWait(Connection observer, int pid) throws SQLException {
    try (var ps =
        observer.prepareStatement(
            "SELECT CASE WHEN wait_event_type = 'Lock' THEN pg_blocking_pids(pid)"
                + " ELSE '{}'::int[] END FROM pg_stat_activity WHERE pid = ?")) {
      ps.setInt(1, pid);
      try (var rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return (Integer[]) rs.getArray(1).getArray();
      }
    }
  }

  private static String showLockTimeout(Connection c) throws SQLException {
    try (var s = c.createStatement();
        var rs = s.executeQuery("SHOW lock_timeout")) {
      rs.next();
      return rs.getString(1);
    }
  }
}
