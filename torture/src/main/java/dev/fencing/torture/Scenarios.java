package dev.fencing.torture;

import dev.fencing.testing.Processes;
import dev.fencing.torture.TortureRun.Fault;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The fault schedules a {@link TortureRun} can be put through. */
final class Scenarios {
  private static final Logger LOG = LoggerFactory.getLogger(Scenarios.class);

  private Scenarios() {}

  /** A zombie step of the scripted scenario: its label, its worker, where it is held, its route. */
  private record ZombieStep(
      String label, int worker, Worker.HoldPoint at, Worker.Route route, boolean cutRecording) {
    String run(FaultInjector faults, TortureRun run, long start) throws SQLException {
      String outcome =
          label + " " + faults.zombie(run.workers().get(worker), at, route, cutRecording);
      step(outcome, start);
      return outcome;
    }
  }

  private static final List<ZombieStep> ZOMBIES_BEFORE_TERMINATE =
      List.of(
          new ZombieStep("zombie w1", 1, Worker.HoldPoint.BEFORE, Worker.Route.DIRECT, true),
          new ZombieStep("zombie w0", 0, Worker.HoldPoint.BEFORE, Worker.Route.DIRECT, false),
          new ZombieStep(
              "repeat zombie w1", 1, Worker.HoldPoint.REPEAT, Worker.Route.DIRECT, false),
          new ZombieStep("mid zombie w1", 1, Worker.HoldPoint.MID, Worker.Route.DIRECT, false),
          new ZombieStep(
              "commit zombie w1", 1, Worker.HoldPoint.COMMIT, Worker.Route.DIRECT, false));

  private static final List<ZombieStep> ZOMBIES_AFTER_TERMINATE =
      List.of(
          new ZombieStep(
              "hidden zombie w0", 0, Worker.HoldPoint.BEFORE, Worker.Route.HIDDEN, false),
          new ZombieStep(
              "protected zombie w1", 1, Worker.HoldPoint.BEFORE, Worker.Route.PROTECTED, false),
          new ZombieStep("table zombie w0", 0, Worker.HoldPoint.BEFORE, Worker.Route.TABLE, false),
          new ZombieStep(
              "replay zombie w1", 1, Worker.HoldPoint.REPLAY, Worker.Route.MARKED, false),
          new ZombieStep(
              "carry-on zombie w1", 1, Worker.HoldPoint.CARRY_ON, Worker.Route.DIRECT, false));

  /**
   * The short, deterministic schedule of the test suite: every fault once, each at a point forced
   * by holding a worker and observing the database, never by timing.
   *
   * <ol>
   *   <li>every worker writes;
   *   <li>worker 1 (token bound) becomes a zombie: stopped before a write until another worker has
   *       taken the resource over and written, then resumed; its connection is terminated while it
   *       records the refusal;
   *   <li>worker 0 (lease bound) likewise;
   *   <li>worker 1 becomes a zombie at a write that follows a committed one under the same lease on
   *       the same connection (its token was checked in an earlier transaction);
   *   <li>worker 1 becomes a zombie inside its transaction: stopped between its statements (its
   *       check passed) until another worker contends for the resource, then resumed;
   *   <li>worker 1 becomes a zombie after the last statement of a write, before its commit, until
   *       another worker contends for the resource, then resumed;
   *   <li>worker 2's connection is terminated in the middle of a write transaction;
   *   <li>worker 0 becomes a zombie at a write hidden from {@code FencedDataSource}'s classifier
   *       (only the commit's check can refuse it);
   *   <li>worker 1 becomes a zombie at a write into the protected table through a plain connection,
   *       its token carried (only the table's trigger can refuse it);
   *   <li>worker 0 likewise into its resource's table protected as a whole (only the statement
   *       trigger can refuse it);
   *   <li>worker 1 becomes a zombie at a write that replays the marker of an earlier transaction of
   *       its lease instead of checking (only the trigger's validation of the marker can refuse
   *       it);
   *   <li>worker 1 becomes a zombie whose refused transaction is not rolled back: it carries on
   *       with no token bound and commits ({@code REFUSED} only if the refused transaction stayed
   *       failed, {@code 25P02}; a commit refused anew by a check of its own is {@code ERROR});
   *   <li>PostgreSQL is killed and restarted (skipped with a server given by URL);
   *   <li>every worker writes again.
   * </ol>
   *
   * @return the outcomes of the steps, in order: {@code zombie w1 ACK|REFUSED|...}, {@code zombie
   *     w0 ...}, {@code repeat zombie w1 ...}, {@code mid zombie w1 ...}, {@code commit zombie w1
   *     ...}, {@code terminate w2 ERROR|...}, {@code hidden zombie w0 ...}, {@code protected zombie
   *     w1 ...}, {@code table zombie w0 ...}, {@code replay zombie w1 ...}, {@code carry-on zombie
   *     w1 ...}
   */
  static List<String> scripted(TortureRun run) throws SQLException {
    if (run.workers().size() < 3) {
      throw new IllegalArgumentException("the scripted scenario needs 3 workers or more");
    }
    FaultInjector faults = run.faults();
    List<String> outcomes = new ArrayList<>();
    long start = System.nanoTime();
    faults.awaitProgress(1);
    step("every worker wrote", start);
    for (ZombieStep z : ZOMBIES_BEFORE_TERMINATE) {
      outcomes.add(z.run(faults, run, start));
    }
    outcomes.add("terminate w2 " + faults.terminateMidTransaction(run.workers().get(2)));
    step(outcomes.get(outcomes.size() - 1), start);
    for (ZombieStep z : ZOMBIES_AFTER_TERMINATE) {
      outcomes.add(z.run(faults, run, start));
    }
    if (faults.crash()) {
      step("crashed and restarted PostgreSQL", start);
    }
    faults.awaitProgress(1);
    step("every worker wrote again", start);
    return outcomes;
  }

  /**
   * The failover schedule (a database that can fail over, such as a Patroni cluster): every worker
   * writes; the replica is cut off, the workers receive {@link FaultInjector#FAILOVER_ISSUANCES}
   * more tokens, the primary is killed hard and the replica promoted ({@link
   * FaultInjector#failover(int)}); every worker writes twice more, on the promoted primary.
   */
  static void failover(TortureRun run) throws SQLException {
    FaultInjector faults = run.faults();
    long start = System.nanoTime();
    faults.awaitProgress(1);
    step("every worker wrote", start);
    if (!faults.failover(FaultInjector.FAILOVER_ISSUANCES)) {
      throw new IllegalArgumentException("the failover scenario needs a database that fails over");
    }
    step("failed over", start);
    faults.awaitProgress(2);
    step("every worker wrote twice on the promoted primary", start);
  }

  /**
   * The long run's schedule: until {@code duration} has passed, after a random spell of natural
   * work, one random fault. The sequence of faults, victims and pause lengths follows from {@code
   * seed}; the moments they hit the workers do not (they are real processes).
   */
  static void random(TortureRun run, Duration duration, long seed, Progress progress)
      throws SQLException {
    FaultInjector faults = run.faults();
    Random random = new Random(seed);
    long ttl = run.settings().ttl().toMillis();
    long end = System.nanoTime() + duration.toNanos();
    while (System.nanoTime() - end < 0) {
      sleep(250 + random.nextInt(1500));
      WorkerProcess victim = run.workers().get(random.nextInt(run.workers().size()));
      int dice = random.nextInt(100);
      Fault fault =
          dice < 30
              ? Fault.ZOMBIE
              : dice < 60 ? Fault.PAUSE : dice < 88 ? Fault.TERMINATE : Fault.CRASH;
      // on a cluster that fails over, CRASH is a failover (FaultInjector.crash)
      switch (fault) {
        case ZOMBIE ->
            faults.zombie(
                victim,
                Worker.HoldPoint.values()[random.nextInt(Worker.HoldPoint.values().length)],
                Worker.Route.values()[random.nextInt(Worker.Route.values().length)],
                random.nextBoolean());
        case PAUSE -> {
          // Longer than the lease in most cases: the real GC pause.
          long pause = (long) (ttl * (0.5 + 2.5 * random.nextDouble()));
          victim.pause();
          sleep(pause);
          victim.resume();
          faults.counted(Fault.PAUSE);
        }
        case TERMINATE -> {
          // Catch the victim inside a transaction: poll until it is in one, then terminate.
          int[] killed = {0};
          Processes.poll(
              Duration.ofSeconds(5),
              () -> {
                try {
                  killed[0] = faults.terminate(victim);
                } catch (SQLException e) {
                  killed[0] = 0;
                }
                return killed[0] > 0;
              });
          if (killed[0] > 0) {
            faults.counted(Fault.TERMINATE);
          }
        }
        case CRASH, FAILOVER -> faults.crash();
      }
      progress.report(run);
    }
  }

  private static void step(String what, long start) {
    LOG.info("torture step after {} ms: {}", (System.nanoTime() - start) / 1_000_000, what);
  }

  /** Hears of the long run's progress after each fault. */
  @FunctionalInterface
  interface Progress {
    void report(TortureRun run);
  }

  // The long run's pacing and pause lengths; the short scenario never sleeps.
  private static void sleep(long millis) {
    try {
      TimeUnit.MILLISECONDS.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
