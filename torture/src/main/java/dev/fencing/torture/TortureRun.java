package dev.fencing.torture;

import dev.fencing.migrations.FencingMigrations;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One torture run: N {@link Worker} processes contending for a few resources of a {@link
 * TortureDatabase}, the faults a {@link Scenarios scenario} injects into them through its {@link
 * FaultInjector}, and at the end the {@link History} they left and the {@link Checker}'s verdict on
 * it.
 */
final class TortureRun implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TortureRun.class);

  /** The kinds of fault a run injects. */
  enum Fault {
    /**
     * A worker about to write is stopped (SIGSTOP) until another one has taken over and written.
     */
    ZOMBIE,
    /**
     * {@link #ZOMBIE} at a write that follows a committed one under the same lease on the same
     * connection: a transaction whose token an earlier transaction already checked.
     */
    ZOMBIE_REPEAT,
    /**
     * A worker stopped (SIGSTOP) between the statements of a write, its check passed and its
     * transaction open, until another worker contends for the resource (a newer token issued, or a
     * backend waiting for the zombie's locks); then resumed.
     */
    ZOMBIE_MID,
    /**
     * {@link #ZOMBIE} at a write hidden from {@code FencedDataSource}'s SQL classifier ({@link
     * Worker.Route#HIDDEN}): only the commit's check stands between it and the data.
     */
    ZOMBIE_HIDDEN,
    /**
     * {@link #ZOMBIE_MID} after the write's last statement, before its commit: a token accepted in
     * that window shows only in the {@code max_seen} read inside the commit.
     */
    ZOMBIE_COMMIT,
    /**
     * {@link #ZOMBIE} at a write through a plain connection into the protected table, its token
     * carried, not checked ({@link Worker.Route#PROTECTED}): only the table's trigger stands
     * between it and the data.
     */
    ZOMBIE_PROTECTED,
    /**
     * {@link #ZOMBIE} at a write through a plain connection into the resource's table protected as
     * a whole ({@code fencing.protect}), its token carried ({@link Worker.Route#TABLE}): only the
     * table's statement trigger stands between it and the data.
     */
    ZOMBIE_TABLE,
    /**
     * {@link #ZOMBIE} at a write that checks its token with {@code fencing.check_token} and relies
     * on the check's marker in the protected table ({@link Worker.Route#MARKED}).
     */
    ZOMBIE_MARKED,
    /**
     * {@link #ZOMBIE} at a write that replays, instead of a check, the marker an earlier committed
     * transaction of its lease left ({@link Worker.HoldPoint#REPLAY}): only the statement trigger's
     * validation of the marker (its MAC names the transaction) stands between it and the data.
     */
    ZOMBIE_REPLAY,
    /**
     * {@link #ZOMBIE} whose refused transaction is not rolled back: the worker carries on in it
     * with no token bound and commits ({@link Worker.HoldPoint#CARRY_ON}); only the connection
     * keeping the refused transaction failed stands between it and the data.
     */
    ZOMBIE_CARRY_ON,
    /** A worker is stopped (SIGSTOP) at a random moment for longer than its lease, then resumed. */
    PAUSE,
    /** {@code pg_terminate_backend} of a worker's connection in the middle of a transaction. */
    TERMINATE,
    /** A zombie's connection terminated while it records its refusal (after the rollback). */
    CUT_RECORDING,
    /** PostgreSQL killed hard (SIGKILL of every server process) and restarted: crash recovery. */
    CRASH,
    /**
     * The replica cut off, then the primary's server processes killed hard (SIGKILL) and the
     * replica promoted by Patroni: asynchronous failover, losing what the replica never received.
     */
    FAILOVER
  }

  /**
   * What a run is.
   *
   * @param seed makes the workers' choices and the scenario's faults reproducible
   * @param fenced false: plain leases, each client trusting itself, plain {@code DataSource}
   */
  record Settings(long seed, int workers, int resources, Duration ttl, boolean fenced) {
    Settings {
      if (workers < 2 || workers > 16) {
        throw new IllegalArgumentException("workers must be 2 to 16, was " + workers);
      }
      if (resources < 1 || resources > 16) {
        throw new IllegalArgumentException("resources must be 1 to 16, was " + resources);
      }
      if (ttl.toMillis() < 100) {
        throw new IllegalArgumentException("ttl must be at least 100 ms, was " + ttl);
      }
    }
  }

  /** The verdict and the figures of a finished run. */
  record Result(
      Settings settings,
      String database,
      Map<Fault, Integer> faults,
      List<String> skipped,
      int writes,
      int acks,
      Map<String, Integer> refusals,
      int rejectionsRecorded,
      int acquisitions,
      Map<String, Integer> workerErrors,
      List<Violation> violations,
      Checker.Loss lostToFailover,
      Duration elapsed) {

    /** Violations per rule, every rule listed. */
    Map<Violation.Rule, Integer> violationsByRule() {
      Map<Violation.Rule, Integer> counts = new EnumMap<>(Violation.Rule.class);
      for (Violation.Rule rule : Violation.Rule.values()) {
        counts.put(rule, 0);
      }
      violations.forEach(v -> counts.merge(v.rule(), 1, Integer::sum));
      return counts;
    }

    /**
     * Why the run proves nothing, if it does not (empty: it does). A run without violations is
     * evidence only if a fault that tests an obligation landed and writes committed: a zombie (the
     * fault that puts a stale token in front of the fence, taken over or contended, {@link
     * #FENCE_FAULTS}), or a crash or failover (which test that issued tokens survive, {@link
     * #ISSUE_FAULTS}: the failover schedule has no zombie); with fencing off, only if the checker
     * found violations (none means the faults missed the writes, and the checker was not shown to
     * see anything).
     */
    List<String> inconclusive() {
      List<String> reasons = new ArrayList<>();
      if (landed(FENCE_FAULTS) + landed(ISSUE_FAULTS) == 0) {
        reasons.add(
            "no zombie, crash or failover landed ("
                + FENCE_FAULTS
                + ", "
                + ISSUE_FAULTS
                + " all 0): no stale token met the fence and no issuance was put to the test");
      }
      if (writes == 0) {
        reasons.add("no write committed");
      }
      if (!settings.fenced() && violations.isEmpty()) {
        reasons.add("fencing off and no violation found: the faults did not reach the writes");
      }
      return reasons;
    }

    private int landed(List<Fault> kinds) {
      return kinds.stream().mapToInt(f -> faults.getOrDefault(f, 0)).sum();
    }
  }

  /**
   * The faults that test that issued tokens survive (the checker's {@code TOKEN_ISSUED_TWICE},
   * {@code ISSUANCE_LOST}): a crash of PostgreSQL, an asynchronous failover.
   */
  static final List<Fault> ISSUE_FAULTS = List.of(Fault.CRASH, Fault.FAILOVER);

  /** The faults that put a stale token in front of the fence: a run without one proves nothing. */
  static final List<Fault> FENCE_FAULTS =
      List.of(
          Fault.ZOMBIE,
          Fault.ZOMBIE_REPEAT,
          Fault.ZOMBIE_MID,
          Fault.ZOMBIE_COMMIT,
          Fault.ZOMBIE_HIDDEN,
          Fault.ZOMBIE_PROTECTED,
          Fault.ZOMBIE_TABLE,
          Fault.ZOMBIE_MARKED,
          Fault.ZOMBIE_REPLAY,
          Fault.ZOMBIE_CARRY_ON);

  static final Duration WAIT = Duration.ofSeconds(60);

  private final Settings settings;
  private final TortureDatabase database;
  private final List<String> resources = new ArrayList<>();
  private final TortureTables tables;
  private final List<WorkerProcess> workers = new ArrayList<>();
  private final FaultInjector faults;
  private final long started = System.nanoTime();

  private TortureRun(Settings settings, TortureDatabase database) {
    this.settings = settings;
    this.database = database;
    this.tables = new TortureTables(database, resources);
    this.faults = new FaultInjector(settings.fenced(), database, tables, workers);
  }

  /** Prepares the database and starts the workers. */
  static TortureRun start(Settings settings, TortureDatabase database, Path directory)
      throws SQLException {
    TortureRun run = new TortureRun(settings, database);
    try {
      run.prepare(directory);
      LOG.info(
          "torture run ready after {} ms: {}", (System.nanoTime() - run.started) / 1_000_000, run);
    } catch (SQLException | RuntimeException e) {
      run.close();
      throw e;
    }
    return run;
  }

  private void prepare(Path directory) throws SQLException {
    FencingMigrations.migrate(database.dataSource());
    // Resource names unique to this run: earlier runs in the same database stay out of its history.
    String run = Long.toString(System.currentTimeMillis(), 36) + "-" + settings.seed();
    for (int i = 0; i < settings.resources(); i++) {
      resources.add("torture-" + run + "-r" + i);
    }
    tables.create(settings.fenced());
    for (int i = 0; i < settings.workers(); i++) {
      workers.add(
          WorkerProcess.start(
              i,
              database.url(),
              resources,
              settings.fenced(),
              settings.ttl(),
              settings.seed() * 1_000_003L + i,
              directory));
    }
    // started together, they warm up in parallel
    workers.forEach(w -> w.awaitReady(WAIT));
  }

  Settings settings() {
    return settings;
  }

  TortureDatabase database() {
    return database;
  }

  List<WorkerProcess> workers() {
    return workers;
  }

  /** The faults this run injects, and their counts so far. */
  FaultInjector faults() {
    return faults;
  }

  // --- the end -----------------------------------------------------------------------------------

  /** Stops the workers, reads the history and judges it. */
  Result finish() throws SQLException {
    for (WorkerProcess w : workers) {
      w.stop(WAIT);
    }
    History history = load();
    Checker.Verdict verdict = Checker.judge(history);
    List<Violation> violations = verdict.violations();
    Map<String, Integer> refusals = new TreeMap<>();
    history.refusals().forEach(r -> refusals.merge(r.sqlState(), 1, Integer::sum));
    Map<String, Integer> errors = new TreeMap<>();
    for (WorkerProcess w : workers) {
      WorkerLog.read(w.id(), w.log()).errors().forEach((k, v) -> errors.merge(k, v, Integer::sum));
    }
    return new Result(
        settings,
        database.describe(),
        faults.counts(),
        faults.skipped(),
        history.writes().size(),
        history.acks().size(),
        refusals,
        history.rejections().size(),
        history.acquisitions().size(),
        errors,
        violations,
        verdict.loss(),
        Duration.ofNanos(System.nanoTime() - started));
  }

  History load() throws SQLException {
    TortureTables.Recorded recorded = tables.recorded();
    List<WorkerLog.Acquisition> acquisitions = new ArrayList<>();
    List<WorkerLog.Ack> acks = new ArrayList<>();
    List<WorkerLog.Refusal> refusals = new ArrayList<>();
    WorkerLog.Entries beforeFailover = WorkerLog.Entries.NONE;
    Map<Integer, Integer> lines = faults.linesBeforeFailover();
    for (WorkerProcess w : workers) {
      WorkerLog.Entries entries = WorkerLog.read(w.id(), w.log());
      acquisitions.addAll(entries.acquisitions());
      acks.addAll(entries.acks());
      refusals.addAll(entries.refusals());
      if (lines != null) {
        beforeFailover =
            beforeFailover.plus(WorkerLog.read(w.id(), w.log(), lines.getOrDefault(w.id(), 0)));
      }
    }
    return new History(
        recorded.writes(),
        recorded.issuances(),
        recorded.rejections(),
        acquisitions,
        acks,
        refusals,
        beforeFailover);
  }

  /** Stops any worker still running (killing it if need be). */
  @Override
  public void close() {
    for (WorkerProcess w : workers) {
      w.stop(Duration.ofSeconds(10));
    }
  }

  @Override
  public String toString() {
    return "TortureRun[" + settings + ", " + Objects.requireNonNull(database.describe()) + "]";
  }
}
