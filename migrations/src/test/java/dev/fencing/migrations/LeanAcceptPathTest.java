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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Migration V19: the fast path re-reads the row version its lookup found by its ctid, after the
 * advisory share lock (hazard 7). The interleaving the re-read exists for: a check whose lookup saw
 * the old token waits on the lock behind an acquisition, which commits a new token; the check must
 * then refuse, under every isolation level.
 */
class LeanAcceptPathTest extends InterleavingTestBase {
  /** The three API functions with a one-resource fast path, as the application calls them. */
  private static final List<String> CALLS =
      List.of(
          "SELECT fencing.check_token(?, ?)",
          "SELECT fencing.check_tokens(ARRAY[?]::text[], ARRAY[?]::bigint[])",
          "SELECT fencing.check_tokens_if_written(ARRAY[?]::text[], ARRAY[?]::bigint[])");

  @ParameterizedTest
  @EnumSource(Isolation.class)
  void aCheckWaitingBehindAnAcquisitionThatCommitsIsRefused(Isolation isolation)
      throws SQLException {
    for (String sql : CALLS) {
      String function = sql.substring("SELECT fencing.".length(), sql.indexOf('('));
      String res = "lean/" + isolation.tag() + "/" + function;
      try (Connection observer = db.connect();
          Session writer = Interleaving.writer(db, isolation);
          Session acquirer = Interleaving.writer(db, Isolation.READ_COMMITTED)) {
        long t1 = Fence.acquire(observer, res, "holder-a", LEASE);
        assertThat(Fence.release(observer, res, t1)).isTrue();

        // the acquisition holds the exclusive advisory lock and the new token, uncommitted
        begin(acquirer, Isolation.READ_COMMITTED);
        Fence.Acquired acquired = Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, PATIENCE);
        assertThat(acquired.acquired()).isTrue();
        assertThat(acquired.token()).isNotNull().isGreaterThan(t1);
        long t2 = acquired.token();

        // the old holder's transaction: its lookup sees t1 (t2 is not committed) and waits
        begin(writer, isolation);
        FenceSql.run(writer.c(), "SELECT pg_current_xact_id()"); // as a transaction that wrote
        CompletableFuture<Void> check =
            async(
                pool(),
                () -> {
                  FenceSql.run(writer.c(), sql, res, t1);
                  return null;
                });
        awaitBlockedBy(observer, writer.pid(), acquirer.pid());
        assertThat(
                FenceSql.string(
                    observer,
                    "SELECT wait_event_type FROM pg_stat_activity WHERE pid = ?",
                    writer.pid()))
            .as("%s under %s waits on a lock", function, isolation)
            .isEqualTo("Lock");
        acquirer.c().commit();

        // the token superseded while it waited
        Fence.assertFails(STALE, () -> join(check));
        writer.c().rollback();
        assertThat(Fence.maxSeen(observer, res)).isEqualTo(t2);
      }
    }
  }

  /**
   * The re-read fetches the version the lookup found: a version changed meanwhile without a new
   * token (here an owner's update committed behind the resource's exclusive advisory lock) is not
   * found by its ctid, and the check is decided again by the full path, which accepts the token.
   */
  @Test
  void aRowVersionChangedMeanwhileWithoutANewTokenIsStillAccepted() throws SQLException {
    String res = "lean/same-token-new-version";
    try (Connection observer = db.connect();
        Session writer = Interleaving.writer(db, Isolation.READ_COMMITTED);
        Session owner = Interleaving.writer(db, Isolation.READ_COMMITTED)) {
      long t1 = Fence.acquire(observer, res, "holder-a", LEASE);
      String before =
          FenceSql.string(observer, "SELECT ctid::text FROM fencing.resource WHERE name = ?", res);

      begin(owner, Isolation.READ_COMMITTED);
      FenceSql.run(
          owner.c(),
          "SELECT pg_advisory_xact_lock(lock_space, fencing.advisory_key(id))"
              + " FROM fencing.resource WHERE name = ?",
          res);
      FenceSql.run(owner.c(), "UPDATE fencing.resource SET updated_at = now() WHERE name = ?", res);

      begin(writer, Isolation.READ_COMMITTED);
      CompletableFuture<Long> check = async(pool(), () -> Fence.check(writer.c(), res, t1));
      awaitBlockedBy(observer, writer.pid(), owner.pid());
      owner.c().commit();
      assertThat(join(check)).isEqualTo(t1);
      assertThat(
              FenceSql.string(
                  observer, "SELECT ctid::text FROM fencing.resource WHERE name = ?", res))
          .as("the version the lookup found is gone")
          .isNotEqualTo(before);
      assertThat(
              FenceSql.longValue(
                  writer.c(),
                  "SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid()"
                      + " AND locktype = 'advisory' AND mode = 'ShareLock' AND granted"))
          .as("the share lock, held until the transaction ends")
          .isOne();
      writer.c().commit();
    }
  }
}
