package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.STALE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.awaitility.Awaitility.await;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The lease life cycle through the SQL API: renew, release, contention, expiry, the floor. */
class ForgeryAndLeaseTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final Duration TTL = Duration.ofSeconds(30);

  @BeforeAll
  static void migrate() {
    assertThat(Fence.migrate(db)).isEqualTo(Fence.MIGRATIONS);
  }

  @Test
  void renewExtendsTheExpiryOfTheCurrentHolderOnly() throws SQLException {
    String r = "lease/renew";
    try (Connection c = db.connect()) {
      long old = Fence.acquire(c, r, "old", TTL);
      assertThat(Fence.release(c, r, old)).isTrue();
      long current = Fence.acquire(c, r, "current", TTL); // still valid at the renewal below
      FenceSql.Status before = FenceSql.status(c, r);

      // the previous holder cannot prolong anything
      Fence.assertFails(STALE, () -> Fence.renew(c, r, old, Duration.ofHours(1)));
      assertThat(FenceSql.status(c, r)).isEqualTo(before);

      Instant renewed = renew(c, r, current, Duration.ofMinutes(10));
      FenceSql.Status after = FenceSql.status(c, r);
      assertThat(after.expiresAt()).isEqualTo(renewed);
      assertThat(renewed).isAfter(before.expiresAt().plus(Duration.ofMinutes(9)));
      assertThat(after.holder()).isEqualTo("current");
      assertThat(after.leaseToken()).isEqualTo(current);
      assertThat(after.maxSeen()).isEqualTo(current);
      assertThat(after.leaseValid()).isTrue();
    }
  }

  @Test
  void releaseIsIdempotentAndKeepsMaxSeen() throws SQLException {
    String r = "lease/release";
    try (Connection c = db.connect()) {
      long token = Fence.acquire(c, r, "holder", TTL);
      assertThat(Fence.release(c, r, token)).isTrue();
      assertThat(Fence.release(c, r, token)).isFalse();

      FenceSql.Status status = FenceSql.status(c, r);
      assertThat(status.leaseValid()).isFalse();
      assertThat(status.holder()).isNull();
      assertThat(status.maxSeen()).isEqualTo(token);
      assertThat(status.lastIssued()).isEqualTo(token);
      // the released token is still the newest: writes under it are accepted until a new lease
      assertThat(Fence.check(c, r, token)).isEqualTo(token);

      long next = Fence.acquire(c, r, "next", TTL);
      assertThat(next).isGreaterThan(token);
      Fence.assertFails(STALE, () -> Fence.check(c, r, token));
    }
  }

  @Test
  void secondAcquireWhileTheLeaseIsValidIsRefusedWithTheCurrentHolder() throws SQLException {
    String r = "lease/contended";
    try (Connection a = db.connect();
        Connection b = db.connect()) {
      long token = Fence.acquire(a, r, "first", TTL);
      FenceSql.Status held = FenceSql.status(b, r);
      long issuances = FenceSql.longValue(b, "SELECT count(*) FROM fencing.issuance");
      FenceSql.Attempt second = FenceSql.tryAcquire(b, r, "second", TTL);
      assertThat(second.acquired()).isFalse();
      assertThat(second.token()).as("no token for a refused acquisition").isNull();
      assertThat(second.holder()).isEqualTo("first");
      assertThat(second.expiresAt()).isEqualTo(held.expiresAt());
      assertThat(Fence.tryAcquire(b, r, "third", TTL).acquired()).isFalse();
      assertThat(FenceSql.status(b, r)).isEqualTo(held);
      assertThat(held.maxSeen()).isEqualTo(token);
      assertThat(FenceSql.longValue(b, "SELECT count(*) FROM fencing.issuance"))
          .isEqualTo(issuances);
      assertThat(FenceSql.status(b, r).holder()).isEqualTo("first");
    }
  }

  /**
   * try_acquire "never waits for the lease itself": while another client's acquisition of the same
   * resource is still uncommitted, a second try_acquire reports contention at once.
   */
  @Test
  void acquireDuringAnotherUncommittedAcquisitionDoesNotWait() throws SQLException {
    String r = "lease/in-progress";
    try (Connection a = db.connect();
        Connection b = db.connect()) {
      long first = Fence.acquire(a, r, "first", TTL);
      assertThat(Fence.release(a, r, first)).isTrue();

      a.setAutoCommit(false);
      long pending = Fence.acquire(a, r, "pending", TTL);
      try {
        // bounded, so that a wait fails the test instead of hanging it: statement_timeout, which
        // try_acquire cannot catch (a lock_timeout it could turn into "contention" after waiting),
        // as long as a loaded machine never runs out of it for a call that does not wait
        FenceSql.run(b, "SET statement_timeout = '" + Interleaving.PATIENCE.toMillis() + "ms'");
        FenceSql.Attempt[] attempt = new FenceSql.Attempt[1];
        assertThatCode(() -> attempt[0] = FenceSql.tryAcquire(b, r, "second", TTL))
            .as("try_acquire while another acquisition of %s is uncommitted", r)
            .doesNotThrowAnyException();
        assertThat(attempt[0].acquired()).isFalse();
        assertThat(attempt[0].token()).isNull();
      } finally {
        a.rollback();
        a.setAutoCommit(true);
      }
      // the rolled-back acquisition issued nothing; the next one gets a larger token
      assertThat(FenceSql.status(b, r).maxSeen()).isEqualTo(first);
      long next = Fence.acquire(b, r, "second", TTL);
      assertThat(next).isGreaterThan(pending);
    }
  }

  @Test
  void afterExpiryAnotherHolderAcquiresALargerToken() throws SQLException {
    String r = "lease/expiry";
    try (Connection c = db.connect()) {
      long first = Fence.acquire(c, r, "slow", Duration.ofMillis(200));
      await()
          .atMost(Interleaving.PATIENCE) // a hang guard: the lease expires after 200 ms
          .pollInterval(Duration.ofMillis(25))
          .until(() -> !FenceSql.status(c, r).leaseValid());
      Fence.Acquired next = Fence.tryAcquire(c, r, "fast", TTL);
      assertThat(next.acquired()).isTrue();
      assertThat(next.holder()).isEqualTo("fast");
      assertThat(next.token()).isGreaterThan(first);
      Fence.assertFails(STALE, () -> Fence.check(c, r, first));
    }
  }

  @Test
  void advanceSequenceMovesTheNextTokenByAtLeastTheGap() throws SQLException {
    String r = "lease/advance";
    try (Connection c = db.connect()) {
      long before = Fence.acquire(c, r, "before", TTL);
      assertThat(Fence.release(c, r, before)).isTrue();
      long advancedTo = FenceSql.longValue(c, "SELECT fencing.advance_sequence(1000)");
      assertThat(advancedTo).isGreaterThanOrEqualTo(before + 1000);
      long after = Fence.acquire(c, r, "after", TTL);
      assertThat(after).isGreaterThanOrEqualTo(before + 1000).isGreaterThan(advancedTo);
    }
  }

  @Test
  void aSequenceSetBackNeverYieldsATokenAtOrBelowMaxSeen() throws SQLException {
    String r = "lease/floor";
    try (Connection c = db.connect()) {
      // push the resource well above the sequence's natural position
      FenceSql.run(c, "SELECT fencing.advance_sequence(5000)");
      long high = Fence.acquire(c, r, "before-restore", TTL);
      assertThat(Fence.release(c, r, high)).isTrue();

      // e.g. a restore of an older backup, or a failover to a lagging replica
      FenceSql.run(c, "SELECT setval('fencing.token_seq', 1)");
      long after = Fence.acquire(c, r, "after-restore", TTL);
      assertThat(after).isGreaterThan(high);
      assertThat(FenceSql.status(c, r).maxSeen()).isEqualTo(after);
      Fence.assertFails(STALE, () -> Fence.check(c, r, high));

      // and the sequence was moved up with it: the next resource does not reuse small values
      assertThat(FenceSql.longValue(c, "SELECT last_value FROM fencing.token_seq"))
          .isGreaterThanOrEqualTo(after);
    }
  }

  private static Instant renew(Connection c, String resource, long token, Duration ttl)
      throws SQLException {
    try (var ps =
            FenceSql.prepare(
                c,
                "SELECT fencing.renew(?, ?, make_interval(secs => ?))",
                resource,
                token,
                ttl.toNanos() / 1e9);
        var rs = ps.executeQuery()) {
      rs.next();
      Timestamp t = rs.getTimestamp(1);
      return t.toInstant();
    }
  }
}
