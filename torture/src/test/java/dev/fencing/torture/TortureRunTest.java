package dev.fencing.torture;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.EmbeddedCluster;
import dev.fencing.torture.TortureRun.Fault;
import dev.fencing.torture.Violation.Rule;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The short, deterministic torture run of the test suite (fixed seed, interleaving forced by
 * holding workers and observing the database), with fencing on and off, on an embedded PostgreSQL
 * of its own that it kills and restarts.
 */
class TortureRunTest {
  private static final Duration TTL = Duration.ofMillis(800);

  private static EmbeddedCluster cluster;

  @TempDir(cleanup = org.junit.jupiter.api.io.CleanupMode.ON_SUCCESS)
  Path directory;

  @BeforeAll
  static void startCluster() {
    cluster = EmbeddedCluster.start();
  }

  @AfterAll
  static void stopCluster() {
    cluster.close();
  }

  @Test
  void fencedRunSurvivesEveryFaultWithoutViolation() throws Exception {
    TortureRun.Settings settings = new TortureRun.Settings(42, 3, 2, TTL, true);
    TortureRun.Result result;
    List<String> outcomes;
    try (TortureRun run =
        TortureRun.start(settings, TortureDatabase.embedded(cluster), directory)) {
      outcomes = Scenarios.scripted(run);
      result = run.finish();
    }

    assertThat(result.violations()).as(Report.summary(result)).isEmpty();
    assertThat(outcomes)
        .as(
            "the zombies refused, the one held inside its checked transaction committed (its"
                + " successor waited), the terminated transaction failed")
        .containsExactly(
            "zombie w1 REFUSED",
            "zombie w0 REFUSED",
            "repeat zombie w1 REFUSED",
            "mid zombie w1 ACK",
            "commit zombie w1 ACK",
            "terminate w2 ERROR",
            "hidden zombie w0 REFUSED",
            "protected zombie w1 REFUSED",
            "table zombie w0 REFUSED",
            "replay zombie w1 REFUSED",
            "carry-on zombie w1 REFUSED");
    assertThat(result.faults())
        .containsEntry(Fault.ZOMBIE, 2)
        .containsEntry(Fault.ZOMBIE_REPEAT, 1)
        .containsEntry(Fault.ZOMBIE_MID, 1)
        .containsEntry(Fault.ZOMBIE_COMMIT, 1)
        .containsEntry(Fault.ZOMBIE_HIDDEN, 1)
        .containsEntry(Fault.ZOMBIE_PROTECTED, 1)
        .containsEntry(Fault.ZOMBIE_TABLE, 1)
        .containsEntry(Fault.ZOMBIE_REPLAY, 1)
        .containsEntry(Fault.ZOMBIE_CARRY_ON, 1)
        .containsEntry(Fault.CUT_RECORDING, 1)
        .containsEntry(Fault.TERMINATE, 1)
        .containsEntry(Fault.CRASH, 1);
    assertThat(result.refusals().values().stream().mapToInt(Integer::intValue).sum())
        .isGreaterThanOrEqualTo(7);
    assertThat(result.refusals()).as("the replayed marker is no token").containsKey("ZF002");
    assertThat(result.rejectionsRecorded()).isGreaterThanOrEqualTo(7);
    assertThat(result.writes()).isGreaterThanOrEqualTo(6);
  }

  @Test
  void unfencedRunIsCaughtByTheChecker() throws Exception {
    TortureRun.Settings settings = new TortureRun.Settings(42, 3, 2, TTL, false);
    TortureRun.Result result;
    List<String> outcomes;
    try (TortureRun run =
        TortureRun.start(settings, TortureDatabase.embedded(cluster), directory)) {
      outcomes = Scenarios.scripted(run);
      result = run.finish();
    }

    assertThat(outcomes)
        .as("without the fence every zombie's write is committed")
        .containsExactly(
            "zombie w1 ACK",
            "zombie w0 ACK",
            "repeat zombie w1 ACK",
            "mid zombie w1 ACK",
            "commit zombie w1 ACK",
            "terminate w2 ERROR",
            "hidden zombie w0 ACK",
            "protected zombie w1 ACK",
            "table zombie w0 ACK",
            "replay zombie w1 ACK",
            "carry-on zombie w1 ACK");
    assertThat(result.violationsByRule().get(Rule.STALE_WRITE))
        .as(Report.summary(result))
        .isGreaterThanOrEqualTo(9);
    assertThat(result.violationsByRule().get(Rule.TOKEN_DECREASED)).isGreaterThanOrEqualTo(2);
    assertThat(result.refusals()).isEmpty();
  }
}
