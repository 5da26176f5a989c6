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
import static dev.fencing.migrations.Interleaving.write;
import static dev.fencing.migrations.Interleaving.writes;
import static org.assertj.core.api.Assertions.assertThat;
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
 * Migration V20 attacked: try_acquire tries the exclusive advisory lock and the resource row {@code
 * FOR NO KEY UPDATE SKIP LOCKED} without waiting, and release() of the holder's own lease is one
 * UPDATE. Each case forces a row lock or a snapshot that is not a fast-path checker's advisory
 * share lock, and pins that the acquisition still waits (or times out with ZF007), never issues
 * twice and never makes a second holder.
 */
class LeaseAtTheFloorAttackTest extends InterleavingTestBase {

  /**
   * A strict resource's check takes no advisory lock: it holds the resource row by its UPDATE. The
   * acquisition's try-lock of the advisory key succeeds and its SKIP LOCKED skips the row: that is
   * not "nothing to wait for". The acquisition times out (ZF007, nothing changed) while the check
   * is open, and with a longer timeout waits for it, then fences its token off.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void aStrictCheckHoldingTheRowIsWaitedForNotSkipped(Isolation iso) throws SQLException {
    String res = "floor-attack/strict/" + iso.tag();
    try (Connection observer = db.connect();
        Session writer = Interleaving.writer(db, iso);
        Session acquirer = Interleaving.session(db)) {
      Interleaving.createResource(observer, res, false, true);
      long t1 = Fence.acquire(observer, res, "holder-a", LEASE);
      assertThat(Fence.release(observer, res, t1)).isTrue();

      begin(writer, iso);
      assertThat(Fence.check(writer.c(), res, t1)).isEqualTo(t1);
      write(writer, res, t1, "strict-old");
      assertThat(
              FenceSql.longValue(
                  observer,
                  "SELECT count(*) FROM pg_locks WHERE pid = ? AND locktype = 'advisory'",
                  writer.pid()))
          .as("the strict check holds no advisory lock: the try-lock succeeds")
          .isZero();

      Status before = Interleaving.status(observer, res);
      long issued = Fence.count(observer, "SELECT count(*) FROM fencing.issuance");
      assertFails(
          HANDOVER_TIMEOUT,
          () -> Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, Duration.ofMillis(200)));
      assertThat(Interleaving.status(observer, res)).isEqualTo(before);
      assertThat(Fence.count(observer, "SELECT count(*) FROM fencing.issuance")).isEqualTo(issued);

      CompletableFuture<Fence.Acquired> acquire =
          async(pool(), () -> Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, PATIENCE));
      awaitBlockedBy(observer, acquirer.pid(), writer.pid());
      assertThat(Fence.maxSeen(observer, res)).isEqualTo(t1);
      writer.c().commit();

      Fence.Acquired acquired = join(acquire);
      assertThat(acquired.acquired()).isTrue();
      assertThat(acquired.token()).isNotNull().isGreaterThan(t1);
      assertThat(Interleaving.status(observer, res))
          .isEqualTo(new Status(acquired.token(), acquired.token(), "holder-b", acquired.token()));
      assertThat(writes(observer, res, "strict-old")).isOne();

      begin(writer, iso);
      assertFails(STALE, () -> Fence.check(writer.c(), res, t1));
      writer.c().rollback();
    }
  }

  /**
   * try_acquire called in a REPEATABLE READ or SERIALIZABLE transaction (the SQL API does not force
   * READ COMMITTED; LeaseClient does): its snapshot predates the checker's lock release. It still
   * waits for an open check of the old token, whichever lock that check holds (the advisory share
   * lock of READ COMMITTED, the row's FOR SHARE otherwise), and then issues a greater token.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void anAcquisitionAtAnyIsolationWaitsForTheOpenCheckOfEveryIsolation(Isolation acquirerIso)
      throws SQLException {
    for (Isolation checkerIso : Isolation.values()) {
      String res = "floor-attack/iso/" + acquirerIso.tag() + "/" + checkerIso.tag();
      try (Connection observer = db.connect();
          Session writer = Interleaving.writer(db, checkerIso);
          Session acquirer = Interleaving.writer(db, acquirerIso)) {
        long t1 = Fence.acquire(observer, res, "holder-a", LEASE);
        assertThat(Fence.release(observer, res, t1)).isTrue();

        begin(writer, checkerIso);
        assertThat(Fence.check(writer.c(), res, t1)).isEqualTo(t1);
        write(writer, res, t1, "open-check");

        begin(acquirer, acquirerIso);
        FenceSql.run(acquirer.c(), "SELECT 1"); // the acquirer's snapshot, if it keeps one
        CompletableFuture<Fence.Acquired> acquire =
            async(pool(), () -> Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, PATIENCE));
        awaitBlockedBy(observer, acquirer.pid(), writer.pid());
        assertThat(Fence.maxSeen(observer, res))
            .as("acquirer %s, checker %s: not advanced while waiting", acquirerIso, checkerIso)
            .isEqualTo(t1);
        writer.c().commit();

        Fence.Acquired acquired = join(acquire);
        acquirer.c().commit();
        assertThat(acquired.acquired())
            .as("acquirer %s, checker %s", acquirerIso, checkerIso)
            .isTrue();
        assertThat(acquired.token()).isNotNull().isGreaterThan(t1);
        assertThat(Fence.maxSeen(observer, res)).isEqualTo(acquired.token());
        assertThat(writes(observer, res, "open-check")).isOne();
      }
    }
  }

  /**
   * An acquisition whose transaction snapshot predates another holder's acquisition: under READ
   * COMMITTED the lease row is re-read (contention, the other holder named); under REPEATABLE READ
   * and SERIALIZABLE the lease row changed after the snapshot cannot be locked (40001). Never a
   * second holder, never a second token.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void anAcquisitionOnAnOldSnapshotNeverMakesASecondHolder(Isolation iso) throws SQLException {
    String res = "floor-attack/old-snapshot/" + iso.tag();
    try (Connection observer = db.connect();
        Session late = Interleaving.writer(db, iso)) {
      long t1 = Fence.acquire(observer, res, "holder-a", LEASE);
      assertThat(Fence.release(observer, res, t1)).isTrue();

      begin(late, iso);
      FenceSql.run(late.c(), "SELECT 1"); // its snapshot: the lease is free
      long t2 = Fence.acquire(observer, res, "holder-b", LEASE);
      long issued = Fence.count(observer, "SELECT count(*) FROM fencing.issuance");

      if (iso.snapshotPerTransaction()) {
        assertFails(
            SERIALIZATION_FAILURE,
            () -> Fence.tryAcquire(late.c(), res, "holder-c", LEASE, PATIENCE));
      } else {
        Fence.Acquired refused = Fence.tryAcquire(late.c(), res, "holder-c", LEASE, PATIENCE);
        assertThat(refused.acquired()).isFalse();
        assertThat(refused.token()).isNull();
        assertThat(refused.holder()).isEqualTo("holder-b");
      }
      Interleaving.tryCommit(late);
      assertThat(Interleaving.status(observer, res)).isEqualTo(new Status(t2, t2, "holder-b", t2));
      assertThat(Fence.count(observer, "SELECT count(*) FROM fencing.issuance")).isEqualTo(issued);
    }
  }

  /**
   * release() of an expired lease while the next acquisition is in progress: the one-UPDATE release
   * waits for the lease row, and when the acquisition commits it does not release the new holder's
   * lease (READ COMMITTED re-checks the token and goes to V2's path, which refuses the old token as
   * stale; a snapshot per transaction raises 40001). When the acquisition rolls back, the release
   * of the old lease goes through.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void theOldHoldersReleaseNeverReleasesTheNextHoldersLease(Isolation iso) throws SQLException {
    for (boolean commit : new boolean[] {true, false}) {
      String res = "floor-attack/release/" + iso.tag() + "/" + (commit ? "commit" : "rollback");
      try (Connection observer = db.connect();
          Session releaser = Interleaving.writer(db, iso);
          Session acquirer = Interleaving.writer(db, Isolation.READ_COMMITTED)) {
        long t1 = Fence.acquire(observer, res, "holder-a", Duration.ofMillis(50));
        await("lease expired")
            .atMost(PATIENCE)
            .pollInterval(Duration.ofMillis(10))
            .pollInSameThread()
            .until(() -> !Interleaving.leaseValid(observer, res));

        begin(acquirer, Isolation.READ_COMMITTED);
        Fence.Acquired next = Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, PATIENCE);
        assertThat(next.acquired()).isTrue();
        long t2 = next.token();

        begin(releaser, iso);
        FenceSql.run(releaser.c(), "SELECT 1");
        CompletableFuture<Boolean> release =
            async(pool(), () -> Fence.release(releaser.c(), res, t1));
        awaitBlockedBy(observer, releaser.pid(), acquirer.pid());
        if (commit) {
          acquirer.c().commit();
          assertFails(
              iso.snapshotPerTransaction() ? SERIALIZATION_FAILURE : STALE, () -> join(release));
          Interleaving.tryCommit(releaser);
          assertThat(Interleaving.status(observer, res))
              .as("the new holder keeps its lease")
              .isEqualTo(new Status(t2, t2, "holder-b", t2));
          assertThat(Interleaving.leaseValid(observer, res)).isTrue();
        } else {
          acquirer.c().rollback();
          assertThat(join(release)).as("the old lease released").isTrue();
          releaser.c().commit();
          Status after = Interleaving.status(observer, res);
          assertThat(after.holder()).isNull();
          assertThat(after.maxSeen()).isEqualTo(t1);
          assertThat(Interleaving.leaseValid(observer, res)).isFalse();
        }
      }
    }
  }

  /**
   * The key space changed after an acquiring transaction took its snapshot: under REPEATABLE READ
   * and SERIALIZABLE its try-lock is on the old key (nobody's), so it is the resource row, changed
   * after the snapshot, that stops it: 40001, nothing issued, while a check in the new key space is
   * open. Under READ COMMITTED the acquisition reads the new key space, waits for the check, then
   * issues.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void anAcquisitionWhoseSnapshotPredatesAKeySpaceChangeDoesNotSkipTheCheck(Isolation iso)
      throws SQLException {
    String res = "floor-attack/key-space/" + iso.tag();
    try (Connection observer = db.connect();
        Session writer = Interleaving.writer(db, Isolation.READ_COMMITTED);
        Session acquirer = Interleaving.writer(db, iso)) {
      long t1 = Fence.acquire(observer, res, "holder-a", LEASE);
      assertThat(Fence.release(observer, res, t1)).isTrue();
      long before =
          FenceSql.longValue(
              observer, "SELECT lock_space FROM fencing.resource WHERE name = ?", res);

      begin(acquirer, iso);
      FenceSql.run(acquirer.c(), "SELECT 1"); // its snapshot: the old key space
      long previous =
          FenceSql.longValue(
              observer, "SELECT fencing.set_advisory_key_space(?)", (int) (before + 1));
      try {
        assertThat(previous).isEqualTo(before);
        begin(writer, Isolation.READ_COMMITTED);
        assertThat(Fence.check(writer.c(), res, t1)).isEqualTo(t1);
        write(writer, res, t1, "new-space");
        assertThat(
                FenceSql.longValue(
                    observer,
                    "SELECT count(*) FROM pg_locks WHERE pid = ? AND locktype = 'advisory'"
                        + " AND classid::bigint = ? AND mode = 'ShareLock'",
                    writer.pid(),
                    before + 1))
            .as("the check's share lock is in the new key space")
            .isOne();
        long issued = Fence.count(observer, "SELECT count(*) FROM fencing.issuance");

        if (iso.snapshotPerTransaction()) {
          assertFails(
              SERIALIZATION_FAILURE,
              () -> Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, PATIENCE));
          Interleaving.tryCommit(acquirer);
          assertThat(Fence.maxSeen(observer, res)).isEqualTo(t1);
          assertThat(Fence.count(observer, "SELECT count(*) FROM fencing.issuance"))
              .isEqualTo(issued);
          writer.c().commit();
        } else {
          CompletableFuture<Fence.Acquired> acquire =
              async(pool(), () -> Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, PATIENCE));
          awaitBlockedBy(observer, acquirer.pid(), writer.pid());
          writer.c().commit();
          Fence.Acquired acquired = join(acquire);
          acquirer.c().commit();
          assertThat(acquired.acquired()).isTrue();
          assertThat(acquired.token()).isNotNull().isGreaterThan(t1);
        }
        assertThat(writes(observer, res, "new-space")).isOne();
      } finally {
        FenceSql.longValue(observer, "SELECT fencing.set_advisory_key_space(?)", (int) before);
      }
    }
  }
}
