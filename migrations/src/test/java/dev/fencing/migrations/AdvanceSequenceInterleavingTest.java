package dev.fencing.migrations;

import static dev.fencing.migrations.Interleaving.PATIENCE;
import static dev.fencing.migrations.Interleaving.async;
import static dev.fencing.migrations.Interleaving.awaitBlockedBy;
import static dev.fencing.migrations.Interleaving.begin;
import static dev.fencing.migrations.Interleaving.join;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.migrations.Interleaving.Isolation;
import dev.fencing.migrations.Interleaving.Session;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Migration V32: {@code advance_sequence(gap)} reads the sequence and sets it under the issuance
 * lock, held exclusively. Without it, acquisitions that took values between its read and its {@code
 * setval} had the sequence set back under them, and a later acquisition of another resource was
 * handed one of their tokens again (a duplicate key on {@code issuance_pkey}).
 *
 * <p>The interleaving is forced with the sequence's own lock: an acquirer's transaction holds ROW
 * EXCLUSIVE on {@code token_seq} from its first {@code nextval} (PostgreSQL takes it once per
 * transaction); a third session's {@code ALTER SEQUENCE} queues for SHARE ROW EXCLUSIVE behind it;
 * {@code advance_sequence}'s read (ACCESS SHARE) passes that queue and its {@code setval} (ROW
 * EXCLUSIVE) waits in it, while the acquirer, already holding its lock, takes more values.
 */
class AdvanceSequenceInterleavingTest extends InterleavingTestBase {

  @ParameterizedTest
  @EnumSource(Isolation.class)
  void acquisitionsDuringAnAdvanceAreNeitherSetBackNorIssuedTwice(Isolation isolation)
      throws SQLException {
    String prefix = "advance-race/" + isolation.tag() + "/";
    try (Connection observer = db.connect();
        Session acquirer = Interleaving.writer(db, isolation);
        Session alterer = Interleaving.writer(db, Isolation.READ_COMMITTED);
        Session operator = Interleaving.writer(db, isolation);
        Session next = Interleaving.writer(db, isolation)) {
      List<Long> tokens = new ArrayList<>();
      begin(acquirer, isolation);
      tokens.add(Fence.acquire(acquirer.c(), prefix + "a0", "acquirer", LEASE));

      begin(alterer, Isolation.READ_COMMITTED);
      CompletableFuture<Void> alter =
          async(
              pool(),
              () -> {
                Fence.execute(alterer.c(), "ALTER SEQUENCE fencing.token_seq NO CYCLE");
                return null;
              });
      awaitBlockedBy(observer, alterer.pid(), acquirer.pid());

      begin(operator, isolation);
      CompletableFuture<Long> advance =
          async(
              pool(), () -> FenceSql.longValue(operator.c(), "SELECT fencing.advance_sequence(1)"));
      awaitWaitingForALock(observer, operator.pid());

      // while advance_sequence waits: more tokens in the acquirer's transaction, then commit
      tokens.add(Fence.acquire(acquirer.c(), prefix + "a1", "acquirer", LEASE));
      tokens.add(Fence.acquire(acquirer.c(), prefix + "a2", "acquirer", LEASE));
      acquirer.c().commit();
      join(alter);
      alterer.c().rollback();
      long advanced = join(advance);
      operator.c().commit();

      assertThat(tokens).isSorted().doesNotHaveDuplicates();
      assertThat(advanced)
          .as("under %s the sequence moves past every token issued (%s)", isolation, tokens)
          .isGreaterThan(tokens.get(tokens.size() - 1));
      begin(next, isolation);
      long after = Fence.acquire(next.c(), prefix + "b", "next", LEASE);
      next.c().commit();
      assertThat(after).isGreaterThan(advanced);
      assertThat(
              FenceSql.longValue(
                  observer,
                  "SELECT count(*) FROM fencing.issuance i JOIN fencing.resource r"
                      + " ON r.id = i.resource_id WHERE r.name LIKE ? || '%'",
                  prefix))
          .isEqualTo(4);
    }
  }

  /** Waits until backend {@code pid} waits for a heavyweight lock (whichever holds it). */
  private static void awaitWaitingForALock(Connection observer, int pid) {
    await("backend " + pid + " waiting for a lock")
        .atMost(PATIENCE)
        .pollInterval(Duration.ofMillis(5))
        .until(
            () ->
                "Lock"
                    .equals(
                        FenceSql.string(
                            observer,
                            "SELECT wait_event_type FROM pg_stat_activity WHERE pid = ?",
                            pid)));
  }
}
