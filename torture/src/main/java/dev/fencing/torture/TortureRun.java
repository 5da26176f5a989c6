package dev.fencing.torture;

import dev.fencing.migrations.FencingMigrations;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One torture run: N {@link Worker} processes contending for a few resources of a {@link
 * TortureDatabase}, the faults a {@link Scenarios scenario} injects into them, and at the end the
 * {@link History} they left and the {@link Checker}'s verdict on it.
 */
final class TortureRun implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TortureRun.class);

  /** The kinds of fault a run injects. */
  enum Fault {
    /**
     * A worker about to write is stopped (SIGSTOP) until another one has taken over and written.
     */
    ZOMBIE,
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
  }

  static final Duration WAIT = Duration.ofSeconds(60);

  /** Tokens the workers receive between the cut and the kill of a failover: past one pre-log. */
  static final int FAILOVER_ISSUANCES = 40;

  private static final String CRASH_SKIPPED = "CRASH: a PostgreSQL given by --url is never killed";
  private static final long POLL_MILLIS = 50;

  private final Settings settings;
  private final TortureDatabase database;
  private final List<String> resources = new ArrayList<>();
  private final TortureTables tables;
  private final List<WorkerProcess> workers = new ArrayList<>();
  private final Map<Fault, Integer> faults = new EnumMap<>(Fault.class);
  private final List<String> skipped = new ArrayList<>();
  private final long started = System.nanoTime();
  // lines of each worker's log written before the last failover (null: none yet)
  private @Nullable Map<Integer, Integer> linesBeforeFailover;

  private TortureRun(Settings settings, TortureDatabase database) {
    this.settings = settings;
    this.database = database;
    this.tables = new TortureTables(database, resources);
    for (Fault fault : Fault.values()) {
      faults.put(fault, 0);
    }
    if (!database.canCrash() && !database.canFailOver()) {
      skipped(CRASH_SKIPPED);
    }
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
    tables.create();
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

  Map<Fault, Integer> faultCounts() {
    return new EnumMap<>(faults);
  }

  void counted(Fault fault) {
    faults.merge(fault, 1, Integer::sum);
  }

  void skipped(String why) {
    if (!skipped.contains(why)) {
      skipped.add(why);
    }
  }

  // --- faults ----------------------------------------------------------------------------------

  /**
   * The zombie: {@code worker}'s next write stops after the client's own checks, the whole JVM is
   * stopped (so its keep-alive is too), another worker takes the resource over and writes with a
   * newer token — observed in the database — and then the zombie resumes and writes.
   *
   * <p>With {@code cutRecording} (and fencing on), the refusal's recording is cut off: the harness
   * holds a lock that makes {@code record_rejection} wait, and terminates the zombie's connection
   * while it waits — as a crash of the server right after the refusal would.
   *
   * @return the zombie's outcome: {@code ACK}, {@code REFUSED} or {@code ERROR}, or {@code
   *     NO_TAKEOVER} if nobody took the resource over in time
   */
  String zombie(WorkerProcess worker, boolean cutRecording) throws SQLException {
    worker.send("HOLD BEFORE");
    WorkerProcess.Held held = worker.awaitHeld(WAIT);
    if (held == null) {
      return "NO_HOLD";
    }
    worker.pause();
    boolean takenOver = poll(WAIT, () -> tables.maxToken(held.resource()) > held.token());
    boolean cut = cutRecording && settings.fenced() && takenOver;
    Connection lock = cut ? tables.lockRejectionLog() : null;
    try {
      worker.resume();
      worker.send("GO");
      if (lock != null) {
        // the refusal's recording now waits for the lock: kill its connection there (unless the
        // write failed otherwise, say on a connection a crash had broken: then nothing records)
        poll(WAIT, () -> tables.waitsForLock(worker.id()) || worker.hasReported("RESULT "));
        if (tables.waitsForLock(worker.id()) && tables.terminate(worker.id()) > 0) {
          counted(Fault.CUT_RECORDING);
        }
      }
    } finally {
      if (lock != null) {
        lock.rollback();
        lock.close();
      }
    }
    String result = worker.awaitResult(WAIT);
    if (!takenOver) {
      return "NO_TAKEOVER";
    }
    counted(Fault.ZOMBIE);
    return result;
  }

  /**
   * Stops {@code worker}'s next write between its statements, terminates its connection with {@code
   * pg_terminate_backend}, lets it go on.
   *
   * @return the interrupted write's outcome (expected: {@code ERROR})
   */
  String terminateMidTransaction(WorkerProcess worker) throws SQLException {
    worker.send("HOLD MID");
    if (worker.awaitHeld(WAIT) == null) {
      return "NO_HOLD";
    }
    int killed = tables.terminate(worker.id());
    worker.send("GO");
    String result = worker.awaitResult(WAIT);
    if (killed > 0) {
      counted(Fault.TERMINATE);
    }
    return result;
  }

  /**
   * Terminates the backends of {@code worker} that are inside a transaction right now.
   *
   * @return how many
   */
  int terminate(WorkerProcess worker) throws SQLException {
    return tables.terminate(worker.id());
  }

  /**
   * Kills PostgreSQL hard and restarts it; on a cluster that can fail over, a {@link
   * #failover(int)} instead; skipped (and reported) with a server given by URL.
   */
  boolean crash() throws SQLException {
    if (database.canFailOver()) {
      return failover(FAILOVER_ISSUANCES);
    }
    if (!database.canCrash()) {
      skipped(CRASH_SKIPPED);
      return false;
    }
    database.crashAndRestart();
    counted(Fault.CRASH);
    return true;
  }

  /**
   * Asynchronous failover mid-run: cuts the replica off, waits until the workers have received
   * {@code issuancesAfterCut} more tokens (past 32, the sequence has written a new WAL record the
   * replica never gets: {@code nextval} pre-logs 32 values), kills the primary's server processes
   * hard and waits until the replica is promoted. What the workers saw until then may be lost
   * ({@link History#beforeFailover()}); what they see afterwards must hold on the new primary.
   *
   * @return whether it happened (false: the database cannot fail over, reported as skipped)
   */
  boolean failover(int issuancesAfterCut) throws SQLException {
    if (!database.canFailOver()) {
      skipped("FAILOVER: " + database.describe() + " has no replica to promote");
      return false;
    }
    database.cutReplication();
    long cut = tables.issuances();
    boolean issued = poll(WAIT, () -> tables.issuances() >= cut + issuancesAfterCut);
    String what = database.killPrimaryAndAwaitPromotion();
    Map<Integer, Integer> lines = new HashMap<>();
    for (WorkerProcess w : workers) {
      lines.put(w.id(), WorkerLog.lines(w.log()));
    }
    linesBeforeFailover = lines;
    counted(Fault.FAILOVER);
    LOG.info("failover after {} issuances past the cut: {}", tables.issuances() - cut, what);
    if (!issued) {
      throw new IllegalStateException(
          "the workers received fewer than " + issuancesAfterCut + " tokens within " + WAIT);
    }
    return true;
  }

  /** Waits until every worker has committed at least {@code more} writes from now on. */
  void awaitProgress(int more) {
    Map<Integer, Long> before = tables.writesPerWorker();
    boolean done =
        poll(
            WAIT,
            () -> {
              Map<Integer, Long> now = tables.writesPerWorker();
              for (WorkerProcess w : workers) {
                if (now.getOrDefault(w.id(), 0L) - before.getOrDefault(w.id(), 0L) < more) {
                  return false;
                }
              }
              return true;
            });
    if (!done) {
      throw new IllegalStateException(
          "the workers made no progress within " + WAIT + ": " + tables.writesPerWorker());
    }
  }

  // --- observing the database --------------------------------------------------------------------

  /** Polls {@code condition} (which may find the database down) until true or {@code wait} ends. */
  boolean poll(Duration wait, BooleanSupplier condition) {
    long deadline = System.nanoTime() + wait.toNanos();
    while (true) {
      if (condition.getAsBoolean()) {
        return true;
      }
      if (System.nanoTime() - deadline > 0) {
        return false;
      }
      try {
        TimeUnit.MILLISECONDS.sleep(POLL_MILLIS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
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
        new EnumMap<>(faults),
        List.copyOf(skipped),
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
    Map<Integer, Integer> lines = linesBeforeFailover;
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
