package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.STALE;
import static dev.fencing.migrations.Fence.assertFails;
import static dev.fencing.migrations.Interleaving.SERIALIZATION_FAILURE;
import static dev.fencing.migrations.Interleaving.async;
import static dev.fencing.migrations.Interleaving.awaitBlockedBy;
import static dev.fencing.migrations.Interleaving.begin;
import static dev.fencing.migrations.Interleaving.join;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.migrations.Interleaving.Isolation;
import dev.fencing.migrations.Interleaving.Session;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * V43: reset_external takes external_reset's row lock (V42) before its resource row's, so two
 * resets of different resources cannot deadlock: an operator transaction resetting x then y, and an
 * autocommit reset of y in between, which waits for the operator's transaction and then completes.
 * (On V42 each held what the other waited for: 40P01 "deadlock detected".) What it costs: while a
 * reset waits for the transactions its resource's current token fences, it holds external_reset,
 * and a check under a snapshot that probes that row (V42) answers 40001, whose retry decides.
 */
class ResetExternalDeadlockTest extends InterleavingTestBase {

  @ParameterizedTest
  @EnumSource(Isolation.class)
  void aResetBetweenTwoResetsOfOneTransactionWaitsAndBothComplete(Isolation iso)
      throws SQLException {
    String x = "reset-order/x-" + iso.tag();
    String y = "reset-order/y-" + iso.tag();
    try (Connection observer = db.connect();
        Session operator = Interleaving.writer(db, iso);
        Session other = Interleaving.session(db)) {
      Interleaving.createResource(observer, x, true, false);
      Interleaving.createResource(observer, y, true, false);
      Fence.check(observer, x, 100L);
      Fence.check(observer, y, 200L);

      begin(operator, iso);
      assertThat(reset(operator.c(), x, 5L)).isEqualTo(100L);
      // an autocommit reset of y, on another connection: waits for the operator's transaction
      CompletableFuture<Long> between = async(pool(), () -> reset(other.c(), y, 7L));
      awaitBlockedBy(observer, other.pid(), operator.pid());
      assertThat(reset(operator.c(), y, 9L)).as("the operator's reset of y").isEqualTo(200L);
      operator.c().commit();

      assertThat(join(between)).as("the reset in between, after the operator's").isEqualTo(9L);
      assertThat(Fence.maxSeen(observer, x)).isEqualTo(5L);
      assertThat(Fence.maxSeen(observer, y)).isEqualTo(7L);
    }
  }

  /**
   * A check under a snapshot, of another external resource whose newer token was checked after the
   * snapshot, while a reset waits for a fenced transaction: 40001 (the reset holds external_reset),
   * and after the reset the retry is refused as stale.
   */
  @ParameterizedTest
  @EnumSource(
      value = Isolation.class,
      names = {"REPEATABLE_READ", "SERIALIZABLE"})
  void aCheckUnderASnapshotWhileAResetWaitsIsRetriedThenRefused(Isolation iso) throws SQLException {
    String x = "reset-order/waiting-x-" + iso.tag();
    String z = "reset-order/checked-z-" + iso.tag();
    try (Connection observer = db.connect();
        Session holder = Interleaving.writer(db, Isolation.READ_COMMITTED);
        Session operator = Interleaving.session(db);
        Session checker = Interleaving.writer(db, iso)) {
      Interleaving.createResource(observer, x, true, false);
      Interleaving.createResource(observer, z, true, false);
      Fence.check(observer, x, 100L);
      Fence.check(observer, z, 100L);

      begin(holder, Isolation.READ_COMMITTED);
      assertThat(Fence.check(holder.c(), x, 100L)).isEqualTo(100L); // fenced by x's token
      CompletableFuture<Long> reset = async(pool(), () -> reset(operator.c(), x, 5L));
      awaitBlockedBy(observer, operator.pid(), holder.pid());

      begin(checker, iso);
      FenceSql.run(checker.c(), "SELECT pg_current_xact_id()"); // the snapshot: z at 100
      Fence.check(observer, z, 120L); // z's next holder
      SQLException e = assertFails(SERIALIZATION_FAILURE, () -> Fence.check(checker.c(), z, 100L));
      checker.c().rollback();
      assertThat(e.getMessage()).contains("reset_external ran since");

      holder.c().commit();
      assertThat(join(reset)).isEqualTo(100L);
      begin(checker, iso); // the retry
      SQLException stale = assertFails(STALE, () -> Fence.check(checker.c(), z, 100L));
      checker.c().rollback();
      assertThat(stale.getMessage()).contains("stale fencing token 100");
      assertThat(Fence.maxSeen(observer, x)).isEqualTo(5L);
      assertThat(Fence.maxSeen(observer, z)).isEqualTo(120L);
    }
  }

  private static long reset(Connection c, String resource, long maxSeen) throws SQLException {
    return FenceSql.longValue(c, "SELECT fencing.reset_external(?, ?)", resource, maxSeen);
  }
}
