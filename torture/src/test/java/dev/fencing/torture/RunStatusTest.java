package dev.fencing.torture;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.torture.TortureRun.Fault;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The exit status and the words of a finished run, from its figures alone: a run that proved
 * nothing (no fault that tests the fence landed, no write committed, or fencing off and no
 * violation) must not pass as a clean one.
 */
class RunStatusTest {
  private static final TortureRun.Settings FENCED =
      new TortureRun.Settings(42, 4, 2, Duration.ofMillis(1500), true);
  private static final TortureRun.Settings UNFENCED =
      new TortureRun.Settings(42, 4, 2, Duration.ofMillis(1500), false);
  private static final Violation STALE = new Violation(Violation.Rule.STALE_WRITE, "evidence");

  private static TortureRun.Result result(
      TortureRun.Settings settings, Map<Fault, Integer> faults, int writes, List<Violation> v) {
    return new TortureRun.Result(
        settings,
        "embedded",
        faults,
        List.of(),
        writes,
        writes,
        Map.of(),
        0,
        writes,
        Map.of(),
        v,
        Checker.Loss.NONE,
        Duration.ofSeconds(60));
  }

  @Test
  void aFencedRunWithZombiesAndWritesAndNoViolationPasses() {
    TortureRun.Result r = result(FENCED, Map.of(Fault.ZOMBIE, 1), 100, List.of());
    assertThat(Main.status(r)).isZero();
    assertThat(r.inconclusive()).isEmpty();
    assertThat(Report.summary(r)).doesNotContain("INCONCLUSIVE");
  }

  @Test
  void violationsFailWhateverElse() {
    assertThat(Main.status(result(FENCED, Map.of(), 0, List.of(STALE)))).isEqualTo(1);
    assertThat(Main.status(result(UNFENCED, Map.of(Fault.ZOMBIE, 1), 10, List.of(STALE))))
        .isEqualTo(1);
  }

  @Test
  void aRunWithoutAnyFaultIsInconclusive() {
    TortureRun.Result r = result(FENCED, Map.of(), 100, List.of());
    assertThat(Main.status(r)).as("exit status of a run without faults").isEqualTo(3);
    assertThat(r.inconclusive())
        .anyMatch(reason -> reason.contains("no zombie, crash or failover"));
    assertThat(Report.summary(r)).startsWith("INCONCLUSIVE");
    assertThat(Report.markdown(r, Duration.ofSeconds(60))).contains("INCONCLUSIVE");
  }

  @Test
  void aRunWhoseOnlyFaultsMissTheFenceIsInconclusive() {
    // pauses and terminations that never met a takeover test recovery, not the fence
    TortureRun.Result r =
        result(FENCED, Map.of(Fault.PAUSE, 3, Fault.TERMINATE, 2, Fault.ZOMBIE, 0), 100, List.of());
    assertThat(Main.status(r)).isEqualTo(3);
  }

  @Test
  void aRunWithoutWritesIsInconclusive() {
    TortureRun.Result r = result(FENCED, Map.of(Fault.ZOMBIE_MID, 2), 0, List.of());
    assertThat(Main.status(r)).isEqualTo(3);
    assertThat(r.inconclusive()).anyMatch(reason -> reason.contains("no write"));
  }

  @Test
  void anUnfencedRunWithoutViolationIsInconclusive() {
    // fencing off, the zombies' writes must show as violations: none means the faults missed
    TortureRun.Result r = result(UNFENCED, Map.of(Fault.ZOMBIE, 3), 100, List.of());
    assertThat(Main.status(r)).isEqualTo(3);
    assertThat(r.inconclusive()).anyMatch(reason -> reason.contains("fencing off"));
  }

  @Test
  void aFailoverRunWithoutZombiesIsEvidenceOfIssuance() {
    // the failover schedule (PatroniTortureTest) puts no zombie in: its failover tests issuance
    TortureRun.Result r = result(FENCED, Map.of(Fault.FAILOVER, 1), 50, List.of());
    assertThat(r.inconclusive()).isEmpty();
    assertThat(Main.status(r)).isZero();
    assertThat(Report.summary(r)).doesNotContain("INCONCLUSIVE");
  }

  @Test
  void aCrashIsEvidenceOfIssuance() {
    TortureRun.Result r = result(FENCED, Map.of(Fault.CRASH, 1, Fault.PAUSE, 2), 50, List.of());
    assertThat(r.inconclusive()).isEmpty();
  }
}
