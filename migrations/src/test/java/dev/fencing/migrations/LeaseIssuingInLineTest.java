package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Migration V29: try_acquire runs issue_token's common path in line (READ COMMITTED, a recorded
 * epoch, the sequence past the floor), and lease's CHECK is gone, its rows kept valid by every
 * function that writes them. Which tokens are issued is unchanged: EpochTest, FailoverTest and
 * CrashTest judge them; an epoch advanced while the in-line path waits for the issuance lock is
 * EpochTest#anIssuanceThatWaitedWhileTheEpochAdvancedRetries (READ COMMITTED).
 */
class LeaseIssuingInLineTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final Duration TTL = Duration.ofMinutes(5);

  @BeforeAll
  static void migrate() throws SQLException {
    assertThat(Fence.migrate(db)).isEqualTo(Fence.MIGRATIONS);
    try (Connection c = db.connect()) {
      FenceSql.run(
          c,
          "ALTER DATABASE " + FenceSql.quoteIdentifier(db.name()) + " SET track_functions = 'all'");
    }
  }

  /** The uncontended acquisition under READ COMMITTED issues without calling issue_token. */
  @Test
  void anUncontendedAcquisitionIssuesInLine() throws SQLException {
    try (Connection c = db.connect()) {
      long first = Fence.acquire(c, "inline/plain", "a", TTL);
      Fence.release(c, "inline/plain", first);
      c.setAutoCommit(false);
      long second = Fence.acquire(c, "inline/plain", "b", TTL);
      assertThat(FenceSql.calls(c, "issue_token")).isZero();
      c.commit();
      assertThat(second).isGreaterThan(first);
    }
  }

  /** REPEATABLE READ and SERIALIZABLE issue through issue_token (its FOR SHARE re-read). */
  @ParameterizedTest
  @ValueSource(strings = {"REPEATABLE READ", "SERIALIZABLE"})
  void otherIsolationLevelsIssueThroughIssueToken(String isolation) throws SQLException {
    String res = FenceSql.unique("inline/iso");
    try (Connection c = db.connect()) {
      long first = Fence.acquire(c, res, "a", TTL);
      Fence.release(c, res, first);
      c.setAutoCommit(false);
      FenceSql.run(c, "SET TRANSACTION ISOLATION LEVEL " + isolation);
      long second = Fence.acquire(c, res, "b", TTL);
      assertThat(FenceSql.calls(c, "issue_token")).isEqualTo(1);
      c.commit();
      assertThat(second).isGreaterThan(first);
    }
  }

  /**
   * A sequence set back to the resource's last token with is_called false (by hand: nextval would
   * hand out that value itself) is not a sequence past the floor: issue_token moves it, and the
   * token is above the floor.
   */
  @Test
  void aSequenceValueNotYetHandedOutAtTheFloorIsNotIssued() throws SQLException {
    try (Connection c = db.connect()) {
      long first = Fence.acquire(c, "inline/floor", "a", TTL);
      Fence.release(c, "inline/floor", first);
      FenceSql.run(c, "SELECT setval('fencing.token_seq', ?, false)", first);
      c.setAutoCommit(false);
      long second = Fence.acquire(c, "inline/floor", "c", TTL);
      assertThat(FenceSql.calls(c, "issue_token")).isEqualTo(1);
      c.commit();
      assertThat(second).isGreaterThan(first);
    }
  }

  /**
   * Without lease's CHECK, every function that writes a lease row leaves a held lease with a
   * positive token, an acquisition time and an expiry: acquisition in line and through issue_token,
   * renewal, release, takeover after expiry, refusals.
   */
  @Test
  void everyWriterLeavesAHeldLeaseWithATokenAndAnExpiry() throws SQLException {
    try (Connection c = db.connect()) {
      long a = Fence.acquire(c, "inline/rows", "a", TTL);
      assertHeldRowsValid(c);
      Fence.renew(c, "inline/rows", a, Duration.ofMinutes(10));
      assertHeldRowsValid(c);
      Fence.release(c, "inline/rows", a);
      assertHeldRowsValid(c);
      c.setAutoCommit(false);
      FenceSql.run(c, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
      long b = Fence.acquire(c, "inline/rows", "b", Duration.ofMillis(1));
      c.commit();
      c.setAutoCommit(true);
      assertHeldRowsValid(c);
      long d = Fence.acquireAfterExpiry(c, "inline/rows", "c", TTL);
      assertThat(d).isGreaterThan(b);
      assertHeldRowsValid(c);
      Fence.assertFails("ZF001", () -> Fence.release(c, "inline/rows", b));
      assertThat(Fence.tryAcquire(c, "inline/rows", "e", TTL).acquired()).isFalse();
      assertHeldRowsValid(c);
      assertThat(
              FenceSql.longValue(
                  c,
                  "SELECT count(*) FROM fencing.lease l JOIN fencing.resource r"
                      + " ON r.id = l.resource_id WHERE r.name = 'inline/rows'"
                      + " AND l.holder = 'c' AND l.token = ?",
                  d))
          .isEqualTo(1);
    }
  }

  /**
   * The sequence set back below the resource's last token after the in-line path read it and while
   * it waits for the issuance lock (a setval by hand; before V32 also advance_sequence, whose
   * setval took no issuance lock and could land below a value issued after its read), onto values
   * never issued (a gap): the token is still above the resource's last one, as issue_token's own
   * check after nextval makes it (setval to the floor, nextval again). Seen red without that check
   * in the in-line path (READ COMMITTED): the token handed out was below the resource's previous
   * one.
   */
  @ParameterizedTest
  @ValueSource(strings = {"READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"})
  void aSequenceSetBackWhileTheAcquisitionWaitsIsNotIssuedBelowTheFloor(String isolation)
      throws Exception {
    String res = FenceSql.unique("inline/setback");
    try (Connection c = db.connect();
        Connection blocker = db.connect();
        Connection acquirer = db.connect()) {
      try {
        long first = Fence.acquire(c, res, "a", TTL);
        Fence.release(c, res, first);
        FenceSql.run(c, "SELECT setval('fencing.token_seq', ?)", first + 10); // a gap
        long floor = Fence.acquire(c, res, "a", TTL);
        Fence.release(c, res, floor);
        blocker.setAutoCommit(false);
        FenceSql.run(blocker, "LOCK TABLE fencing.issuance_gate IN EXCLUSIVE MODE"); // V38
        int pid = (int) FenceSql.longValue(acquirer, "SELECT pg_backend_pid()");
        acquirer.setAutoCommit(false);
        FenceSql.run(acquirer, "SET TRANSACTION ISOLATION LEVEL " + isolation);
        CompletableFuture<Long> second =
            CompletableFuture.supplyAsync(
                () -> {
                  try {
                    return Fence.acquire(acquirer, res, "b", TTL);
                  } catch (SQLException e) {
                    throw new IllegalStateException(e);
                  }
                });
        awaitBlockedBy(c, pid, blocker);
        FenceSql.run(c, "SELECT setval('fencing.token_seq', ?)", first + 2); // into the gap
        blocker.commit();
        long token = second.get(30, TimeUnit.SECONDS);
        acquirer.commit();
        assertThat(token).as("the token after %s", floor).isGreaterThan(floor);
        assertThat(Fence.maxSeen(c, res)).isEqualTo(token);
      } finally {
        FenceSql.run(
            c,
            "SELECT setval('fencing.token_seq', greatest((SELECT last_value FROM"
                + " fencing.token_seq), (SELECT max(token) FROM fencing.issuance)))");
      }
    }
  }

  /** Waits until {@code pid} is blocked by the backend of {@code blocker} (bounded, pg_locks). */
  private static void awaitBlockedBy(Connection observer, int pid, Connection blocker)
      throws SQLException {
    long blockerPid = FenceSql.longValue(blocker, "SELECT pg_backend_pid()");
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (true) {
      List<Long> blocking =
          FenceSql.longs(observer, "SELECT unnest(pg_blocking_pids(?))::bigint", pid);
      if (blocking.contains(blockerPid)) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("backend " + pid + " never waited for the issuance lock");
      }
      Thread.onSpinWait();
    }
  }

  private static void assertHeldRowsValid(Connection c) throws SQLException {
    assertThat(
            FenceSql.strings(
                c,
                "SELECT r.name || ' ' || l.holder FROM fencing.lease l JOIN fencing.resource r"
                    + " ON r.id = l.resource_id WHERE l.holder IS NOT NULL AND NOT coalesce("
                    + "l.token > 0 AND l.acquired_at IS NOT NULL AND l.expires_at IS NOT NULL,"
                    + " false)"))
        .as("held leases without a positive token, an acquisition time or an expiry")
        .isEmpty();
  }
}
