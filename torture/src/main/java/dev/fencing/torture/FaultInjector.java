package dev.fencing.torture;

import static dev.fencing.testing.Processes.poll;

import dev.fencing.torture.TortureRun.Fault;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The faults of one {@link TortureRun}: injects them into its {@link WorkerProcess workers} and its
 * {@link TortureDatabase}, each at a point forced by holding a worker and observing the database,
 * and counts them (and the ones the database could not take) for the run's result.
 */
final class FaultInjector {
  private static final Logger LOG = LoggerFactory.getLogger(FaultInjector.class);

  /** Tokens the workers receive between the cut and the kill of a failover: past one pre-log. */
  static final int FAILOVER_ISSUANCES = 40;

  private static final Duration WAIT = TortureRun.WAIT;
  private static final String CRASH_SKIPPED = "CRASH: a PostgreSQL given by --url is never killed";

  private final boolean fenced;
  private final TortureDatabase database;
  private final TortureTables tables;
  private final List<WorkerProcess> workers;
  private final Map<Fault, Integer> faults = new EnumMap<>(Fault.class);
  private final List<String> skipped = new ArrayList<>();
  // lines of each worker's log written before the last failover (null: none yet)
  private @Nullable Map<Integer, Integer> linesBeforeFailover;

  /** {@code workers}: the run's list, filled as the run starts them. */
  FaultInjector(
      boolean fenced, TortureDatabase database, TortureTables tables, List<WorkerProcess> workers) {
    this.fenced = fenced;
    this.database = database;
    this.tables = tables;
    this.workers = workers;
    for (Fault fault : Fault.values()) {
      faults.put(fault, 0);
    }
    if (!database.canCrash() && !database.canFailOver()) {
      skip(CRASH_SKIPPED);
    }
  }

  Map<Fault, Integer> counts() {
    return new EnumMap<>(faults);
  }

  List<String> skipped() {
    return List.copyOf(skipped);
  }

  /** Lines of each worker's log written before the last failover; null if there was none. */
  @Nullable Map<Integer, Integer> linesBeforeFailover() {
    return linesBeforeFailover;
  }

  void counted(Fault fault) {
    faults.merge(fault, 1, Integer::sum);
  }

  private void skip(String why) {
    if (!skipped.contains(why)) {
      skipped.add(why);
    }
  }

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
    return zombie(worker, Worker.HoldPoint.BEFORE, cutRecording);
  }

  /**
   * {@link #zombie(WorkerProcess, boolean)} held at {@code at}: {@link Worker.HoldPoint#BEFORE} as
   * there ({@link Fault#ZOMBIE}), {@link Worker.HoldPoint#REPEAT} likewise at a write whose token
   * an earlier transaction of the connection checked ({@link Fault#ZOMBIE_REPEAT}), {@link
   * Worker.HoldPoint#MID} between its statements ({@link #zombieMid}).
   */
  String zombie(WorkerProcess worker, Worker.HoldPoint at, boolean cutRecording)
      throws SQLException {
    return zombie(worker, at, null, cutRecording);
  }

  /**
   * {@link #zombie(WorkerProcess, Worker.HoldPoint, boolean)} at a write that takes {@code route}
   * (null: the route the worker draws); a {@link Worker.HoldPoint#BEFORE} zombie on the {@link
   * Worker.Route#HIDDEN}, {@link Worker.Route#PROTECTED}, {@link Worker.Route#TABLE} or {@link
   * Worker.Route#MARKED} route counts as {@link Fault#ZOMBIE_HIDDEN}, {@link
   * Fault#ZOMBIE_PROTECTED}, {@link Fault#ZOMBIE_TABLE} or {@link Fault#ZOMBIE_MARKED}; one held at
   * {@link Worker.HoldPoint#REPLAY} or {@link Worker.HoldPoint#CARRY_ON} as {@link
   * Fault#ZOMBIE_REPLAY} or {@link Fault#ZOMBIE_CARRY_ON} (they choose their route themselves).
   */
  String zombie(
      WorkerProcess worker, Worker.HoldPoint at, Worker.@Nullable Route route, boolean cutRecording)
      throws SQLException {
    if (at == Worker.HoldPoint.MID || at == Worker.HoldPoint.COMMIT) {
      return zombieMid(worker, at, route);
    }
    WorkerProcess.Held held = worker.hold("HOLD " + at + (route == null ? "" : " " + route), WAIT);
    if (held == null) {
      return "NO_HOLD";
    }
    worker.pause();
    boolean takenOver = poll(WAIT, () -> tables.maxToken(held.resource()) > held.token());
    boolean cut = cutRecording && fenced && takenOver;
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
    counted(kind(at, route));
    return result;
  }

  /** What a zombie held at {@code at} (not inside its transaction) on {@code route} counts as. */
  private static Fault kind(Worker.HoldPoint at, Worker.@Nullable Route route) {
    return switch (at) {
      case REPEAT -> Fault.ZOMBIE_REPEAT;
      case REPLAY -> Fault.ZOMBIE_REPLAY;
      case CARRY_ON -> Fault.ZOMBIE_CARRY_ON;
      default ->
          route == null
              ? Fault.ZOMBIE
              : switch (route) {
                case HIDDEN -> Fault.ZOMBIE_HIDDEN;
                case PROTECTED -> Fault.ZOMBIE_PROTECTED;
                case TABLE -> Fault.ZOMBIE_TABLE;
                case MARKED -> Fault.ZOMBIE_MARKED;
                case DIRECT -> Fault.ZOMBIE;
              };
    };
  }

  /**
   * The zombie inside its transaction: {@code worker}'s next write stops between its statements
   * ({@code at} {@link Worker.HoldPoint#MID}) or after its last one, before its commit ({@link
   * Worker.HoldPoint#COMMIT}) (its check passed, its transaction open), the whole JVM is stopped
   * until another worker contends for the resource — a newer token issued, or a backend waiting for
   * the zombie's locks, observed in the database — and then the zombie resumes and finishes the
   * write. The fence must make the successor wait for the open transaction (the write commits with
   * its token still the newest) or refuse the rest of the write; a successor issued meanwhile shows
   * in the {@code max_seen} the zombie's second statement reads, and the checker reports {@code
   * STALE_WRITE}.
   *
   * @return the zombie's outcome: {@code ACK}, {@code REFUSED} or {@code ERROR}, or {@code
   *     NO_CONTENTION} if nobody contended in time
   */
  String zombieMid(WorkerProcess worker, Worker.HoldPoint at, Worker.@Nullable Route route)
      throws SQLException {
    WorkerProcess.Held held = worker.hold("HOLD " + at + (route == null ? "" : " " + route), WAIT);
    if (held == null) {
      return "NO_HOLD";
    }
    worker.pause();
    boolean contended =
        poll(WAIT, () -> tables.contended(worker.id(), held.resource(), held.token()));
    worker.resume();
    worker.send("GO");
    String result = worker.awaitResult(WAIT);
    if (!contended) {
      return "NO_CONTENTION";
    }
    counted(at == Worker.HoldPoint.COMMIT ? Fault.ZOMBIE_COMMIT : Fault.ZOMBIE_MID);
    return result;
  }

  /**
   * Stops {@code worker}'s next write between its statements, terminates its connection with {@code
   * pg_terminate_backend}, lets it go on.
   *
   * @return the interrupted write's outcome (expected: {@code ERROR})
   */
  String terminateMidTransaction(WorkerProcess worker) throws SQLException {
    if (worker.hold("HOLD MID", WAIT) == null) {
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
      skip(CRASH_SKIPPED);
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
      skip("FAILOVER: " + database.describe() + " has no replica to promote");
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
}
