package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.STALE;
import static dev.fencing.migrations.Fence.assertFails;
import static dev.fencing.migrations.Interleaving.PATIENCE;
import static dev.fencing.migrations.Interleaving.async;
import static dev.fencing.migrations.Interleaving.awaitBlockedBy;
import static dev.fencing.migrations.Interleaving.begin;
import static dev.fencing.migrations.Interleaving.join;
import static dev.fencing.migrations.Interleaving.sqlState;
import static dev.fencing.migrations.Interleaving.write;
import static dev.fencing.migrations.Interleaving.writes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.fencing.migrations.Interleaving.Isolation;
import dev.fencing.migrations.Interleaving.Session;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Hazard 8: savepoints and row-lock fences. A check undone by ROLLBACK TO SAVEPOINT no longer
 * fences (the contract: check again); a check made before the savepoint keeps fencing, also when
 * pgjdbc's {@code autosave=always} rolls a failed statement back to its automatic savepoint.
 */
class SavepointTest extends InterleavingTestBase {

  private static final String DIVISION_BY_ZERO = "22012";
  private static final String IN_FAILED_TRANSACTION = "25P02";

  /** Acquires a token and frees the lease again: the token stays current until the next acquire. */
  private static long currentTokenWithFreeLease(Session admin, String res) throws SQLException {
    long token = Fence.acquire(admin.c(), res, "holder-a", LEASE);
    assertThat(Fence.release(admin.c(), res, token)).isTrue();
    return token;
  }

  /**
   * (a) A check inside a savepoint that is rolled back no longer fences: a concurrent acquire is
   * not held off, and the transaction's re-check (the contract after ROLLBACK TO SAVEPOINT) refuses
   * the old token, so nothing of the transaction commits.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void checkUndoneByRollbackToSavepointNoLongerFencesAndTheRecheckFails(Isolation iso)
      throws SQLException {
    String res = "savepoint-a-" + iso.tag();
    try (Connection observer = db.connect();
        Session admin = Interleaving.session(db);
        Session writer = Interleaving.writer(db, iso);
        Session acquirer = Interleaving.session(db)) {
      long t1 = currentTokenWithFreeLease(admin, res);

      begin(writer, iso);
      Fence.execute(writer.c(), "SAVEPOINT before_check");
      assertThat(Fence.check(writer.c(), res, t1)).isEqualTo(t1);
      write(writer, res, t1, "in-savepoint");
      Fence.execute(writer.c(), "ROLLBACK TO SAVEPOINT before_check");

      // the lock went with the savepoint: the acquire does not wait (it would fail with ZF007)
      Fence.Acquired acquired =
          Interleaving.withoutBlocking(
              pool(),
              () -> Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, Duration.ofSeconds(2)));
      assertThat(acquired.acquired()).isTrue();
      assertThat(acquired.token()).isNotNull().isGreaterThan(t1);
      Interleaving.assertIdleInTransaction(observer, writer.pid()); // still open meanwhile

      // the same transaction checks again, as the contract requires after ROLLBACK TO SAVEPOINT:
      // refused, so it cannot write under the old token any more
      SQLException recheck =
          catchThrowableOfType(SQLException.class, () -> Fence.check(writer.c(), res, t1));
      assertThat((Throwable) recheck).as("re-check of the superseded token passed").isNotNull();
      assertFails(IN_FAILED_TRANSACTION, () -> write(writer, res, t1, "after-recheck"));
      Interleaving.tryCommit(writer);
      assertThat(writes(observer, res, "in-savepoint")).isZero();
      assertThat(writes(observer, res, "after-recheck")).isZero();
      assertThat(Fence.maxSeen(observer, res)).isEqualTo(acquired.token());
      // a new transaction of the old holder is refused as stale
      begin(writer, iso);
      assertFails(STALE, () -> Fence.check(writer.c(), res, t1));
      writer.c().rollback();

      // and the re-check's refusal is the stale-token error (never retried), not a retryable
      // serialization failure
      assertThat(sqlState(recheck)).as(recheck.getMessage()).isEqualTo(STALE);
    }
  }

  /**
   * (b) A check made before a savepoint keeps its lock when a later savepoint (even one with a
   * re-check inside) is rolled back: a concurrent acquire waits until the transaction ends.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void checkBeforeSavepointSurvivesRollbackToSavepoint(Isolation iso) throws SQLException {
    String res = "savepoint-b-" + iso.tag();
    try (Connection observer = db.connect();
        Session admin = Interleaving.session(db);
        Session writer = Interleaving.writer(db, iso);
        Session acquirer = Interleaving.session(db)) {
      long t1 = currentTokenWithFreeLease(admin, res);

      begin(writer, iso);
      assertThat(Fence.check(writer.c(), res, t1)).isEqualTo(t1);
      write(writer, res, t1, "before-savepoint");
      Fence.execute(writer.c(), "SAVEPOINT later");
      assertThat(Fence.check(writer.c(), res, t1)).isEqualTo(t1);
      write(writer, res, t1, "in-savepoint");
      Fence.execute(writer.c(), "ROLLBACK TO SAVEPOINT later");

      CompletableFuture<Fence.Acquired> acquire =
          async(pool(), () -> Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, PATIENCE));
      awaitBlockedBy(observer, acquirer.pid(), writer.pid());
      assertThat(acquire).isNotDone();

      write(writer, res, t1, "after-rollback");
      Interleaving.assertBlockedBy(observer, acquirer.pid(), writer.pid());
      assertThat(acquire).isNotDone();
      writer.c().commit();

      Fence.Acquired acquired = join(acquire);
      assertThat(acquired.acquired()).isTrue();
      assertThat(acquired.token()).isNotNull().isGreaterThan(t1);
      assertThat(writes(observer, res, "before-savepoint")).isOne();
      assertThat(writes(observer, res, "in-savepoint")).isZero();
      assertThat(writes(observer, res, "after-rollback")).isOne();
    }
  }

  /**
   * (c) pgjdbc {@code autosave=always}: a failing statement after the check is rolled back to the
   * driver's savepoint; the check's lock is still held and the transaction commits its fenced
   * writes.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void autosaveRollbackOfAFailedStatementKeepsTheFence(Isolation iso) throws SQLException {
    String res = "savepoint-c-" + iso.tag();
    try (Connection observer = db.connect();
        Session admin = Interleaving.session(db);
        Session writer = Interleaving.writer(db, iso, Map.of("autosave", "always"));
        Session acquirer = Interleaving.session(db)) {
      long t1 = currentTokenWithFreeLease(admin, res);

      begin(writer, iso);
      assertThat(Fence.check(writer.c(), res, t1)).isEqualTo(t1);
      write(writer, res, t1, "fenced");

      CompletableFuture<Fence.Acquired> acquire =
          async(pool(), () -> Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, PATIENCE));
      awaitBlockedBy(observer, acquirer.pid(), writer.pid());

      assertFails(DIVISION_BY_ZERO, () -> Fence.execute(writer.c(), "SELECT 1 / 0"));
      // the driver rolled back to its automatic savepoint: the transaction goes on (without
      // autosave this write would fail with 25P02) ...
      write(writer, res, t1, "after-error");
      // ... and the fence still holds
      Interleaving.assertBlockedBy(observer, acquirer.pid(), writer.pid());
      assertThat(acquire).isNotDone();
      writer.c().commit();

      Fence.Acquired acquired = join(acquire);
      assertThat(acquired.acquired()).isTrue();
      assertThat(acquired.token()).isNotNull().isGreaterThan(t1);
      assertThat(writes(observer, res, "fenced")).isOne();
      assertThat(writes(observer, res, "after-error")).isOne();
    }
  }
}
