package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.STALE;
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

/**
 * Migration V19 attacked: the fast path re-reads, after its advisory share lock, the row version
 * its lookup found, by ctid. Pinned here: the re-read decides on a snapshot taken after the lock
 * even when the check is called from a context that keeps one snapshot for itself (a STABLE
 * function, a procedure); the row version this very transaction moved (an acquisition in the same
 * transaction) is the one found, and a rollback to a savepoint puts the old version back, which is
 * found again.
 */
class LeanAcceptPathAttackTest extends InterleavingTestBase {
  /** How the application's statement reaches check_token. */
  private static final List<String> CALLERS =
      List.of(
          "SELECT fencing.check_token(?, ?)",
          "SELECT public.stable_check(?, ?)",
          "CALL public.check_procedure(?, ?)");

  @BeforeAll
  static void callers() throws SQLException {
    try (Connection c = db.connect()) {
      Fence.execute(c, "CREATE EXTENSION IF NOT EXISTS pageinspect");
      Fence.execute(
          c,
          "CREATE FUNCTION public.stable_check(p_resource text, p_token bigint) RETURNS bigint"
              + " LANGUAGE plpgsql STABLE AS"
              + " 'BEGIN RETURN fencing.check_token(p_resource, p_token); END'");
      Fence.execute(
          c,
          "CREATE PROCEDURE public.check_procedure(p_resource text, p_token bigint)"
              + " LANGUAGE plpgsql AS"
              + " 'BEGIN PERFORM fencing.check_token(p_resource, p_token); END'");
    }
  }

  /**
   * Hazard 7 from a caller with one snapshot of its own: the check's lookup sees the old token,
   * waits behind an acquisition that then commits; the check is refused.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void aCallerKeepingItsOwnSnapshotStillGetsADecisionAfterTheLock(Isolation isolation)
      throws SQLException {
    for (int i = 0; i < CALLERS.size(); i++) {
      String sql = CALLERS.get(i);
      String res = "lean-attack/caller-" + i + "/" + isolation.tag();
      try (Connection observer = db.connect();
          Session writer = Interleaving.writer(db, isolation);
          Session acquirer = Interleaving.writer(db, Isolation.READ_COMMITTED)) {
        long t1 = Fence.acquire(observer, res, "holder-a", LEASE);
        assertThat(Fence.release(observer, res, t1)).isTrue();

        begin(acquirer, Isolation.READ_COMMITTED);
        Fence.Acquired acquired = Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, PATIENCE);
        assertThat(acquired.acquired()).isTrue();
        long t2 = acquired.token();

        begin(writer, isolation);
        CompletableFuture<Void> check =
            async(
                pool(),
                () -> {
                  FenceSql.run(writer.c(), sql, res, t1);
                  return null;
                });
        awaitBlockedBy(observer, writer.pid(), acquirer.pid());
        acquirer.c().commit();

        Fence.assertFails(STALE, () -> join(check));
        writer.c().rollback();
        assertThat(Fence.maxSeen(observer, res)).as(sql).isEqualTo(t2);
      }
    }
  }

  /**
   * The row version moved by an UPDATE of this transaction (an acquisition inside a savepoint) is
   * the one the lookup and the re-read find: the new token is accepted in the transaction. ROLLBACK
   * TO SAVEPOINT puts the old version back (the same ctid as before): the old token is accepted
   * again, the new one is refused, and the next acquisition's token is above the rolled-back one
   * (never issued twice).
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void aVersionMovedInThisTransactionAndPutBackByASavepoint(Isolation isolation)
      throws SQLException {
    String res = "lean-attack/savepoint/" + isolation.tag();
    try (Connection observer = db.connect();
        Session writer = Interleaving.writer(db, isolation)) {
      long t1 = Fence.acquire(observer, res, "holder-a", LEASE);
      assertThat(Fence.release(observer, res, t1)).isTrue();
      String ctidBefore =
          FenceSql.string(observer, "SELECT ctid::text FROM fencing.resource WHERE name = ?", res);

      begin(writer, isolation);
      FenceSql.run(writer.c(), "SAVEPOINT before_acquire");
      Fence.Acquired inner = Fence.tryAcquire(writer.c(), res, "holder-b", LEASE, PATIENCE);
      assertThat(inner.acquired()).isTrue();
      long t2 = inner.token();
      assertThat(
              FenceSql.string(
                  writer.c(), "SELECT ctid::text FROM fencing.resource WHERE name = ?", res))
          .as("moved by this transaction")
          .isNotEqualTo(ctidBefore);
      assertThat(Fence.check(writer.c(), res, t2)).isEqualTo(t2);

      FenceSql.run(writer.c(), "ROLLBACK TO SAVEPOINT before_acquire");
      assertThat(
              FenceSql.string(
                  writer.c(), "SELECT ctid::text FROM fencing.resource WHERE name = ?", res))
          .as("the old version is the visible one again")
          .isEqualTo(ctidBefore);
      assertThat(Fence.check(writer.c(), res, t1))
          .as("the old token is current again")
          .isEqualTo(t1);
      FenceSql.run(writer.c(), "SAVEPOINT rolled_back_token");
      SQLException refused =
          org.assertj.core.api.Assertions.catchThrowableOfType(
              SQLException.class, () -> Fence.check(writer.c(), res, t2));
      assertThat((Object) refused).as("the rolled-back token is refused").isNotNull();
      assertThat(refused.getSQLState()).startsWith("ZF");
      FenceSql.run(writer.c(), "ROLLBACK TO SAVEPOINT rolled_back_token");
      writer.c().commit();

      assertThat(Fence.maxSeen(observer, res)).isEqualTo(t1);
      long t3 = Fence.acquire(observer, res, "holder-c", LEASE);
      assertThat(t3).as("never the rolled-back token again").isGreaterThan(t2);
    }
  }

  /**
   * The version the lookup found is not pruned, and its ctid not reused or moved, while the check
   * waits for its lock: a second exclusive locker queued behind the acquisition keeps the check
   * waiting after the acquisition committed (the found version is dead by then), HOT-updates the
   * row several times and a VACUUM runs: the found version's line pointer is still a normal tuple
   * (pageinspect), not pruned, not reused. The check, once granted, finds nothing visible at its
   * ctid and is refused. (A table rewrite, which would move every ctid, needs ACCESS EXCLUSIVE: the
   * check's relation lock, held since its lookup, excludes it.)
   */
  @Test
  void theFoundVersionSurvivesHotUpdatesAndVacuumWhileTheCheckWaits() throws SQLException {
    String res = "lean-attack/hot-vacuum";
    try (Connection observer = db.connect();
        Session writer = Interleaving.writer(db, Isolation.READ_COMMITTED);
        Session acquirer = Interleaving.writer(db, Isolation.READ_COMMITTED);
        Session owner = Interleaving.writer(db, Isolation.READ_COMMITTED)) {
      long t1 = Fence.acquire(observer, res, "holder-a", LEASE);
      assertThat(Fence.release(observer, res, t1)).isTrue();
      String found =
          FenceSql.string(observer, "SELECT ctid::text FROM fencing.resource WHERE name = ?", res);

      begin(acquirer, Isolation.READ_COMMITTED);
      Fence.Acquired acquired = Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, PATIENCE);
      assertThat(acquired.acquired()).isTrue();
      long t2 = acquired.token();

      begin(owner, Isolation.READ_COMMITTED);
      CompletableFuture<Void> queued =
          async(
              pool(),
              () -> {
                FenceSql.run(
                    owner.c(),
                    "SELECT pg_advisory_xact_lock(lock_space, fencing.advisory_key(id))"
                        + " FROM fencing.resource WHERE name = ?",
                    res);
                return null;
              });
      awaitBlockedBy(observer, owner.pid(), acquirer.pid());

      begin(writer, Isolation.READ_COMMITTED);
      FenceSql.run(writer.c(), "SELECT pg_current_xact_id()");
      CompletableFuture<Long> check = async(pool(), () -> Fence.check(writer.c(), res, t1));
      awaitBlockedBy(observer, writer.pid(), acquirer.pid());

      acquirer.c().commit(); // the version the check found is dead now
      join(queued);
      Interleaving.assertBlockedBy(observer, writer.pid(), owner.pid());
      for (int i = 0; i < 5; i++) {
        FenceSql.run(
            owner.c(),
            "UPDATE fencing.resource SET updated_at = clock_timestamp() WHERE name = ?",
            res);
      }
      Fence.execute(observer, "VACUUM fencing.resource");
      assertThat(
              FenceSql.longValue(
                  observer,
                  "SELECT count(*) FROM heap_page_items(get_raw_page('fencing.resource',"
                      + " (?::tid::text::point)[0]::int))"
                      + " WHERE lp = (?::tid::text::point)[1]::int AND lp_flags = 1"
                      + " AND t_data IS NOT NULL",
                  found,
                  found))
          .as("the found version %s is still on its page, not pruned", found)
          .isOne();
      assertThat(
              FenceSql.string(
                  observer, "SELECT ctid::text FROM fencing.resource WHERE name = ?", res))
          .as("the current version is elsewhere")
          .isNotEqualTo(found);
      owner.c().commit();

      Fence.assertFails(STALE, () -> join(check));
      writer.c().rollback();
      assertThat(Fence.maxSeen(observer, res)).isEqualTo(t2);
    }
  }
}
