package dev.fencing.torture;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Everything a torture run leaves behind: the committed writes as the fenced data records them, the
 * fence's own issuance and rejection logs, and what each worker saw.
 *
 * @param writes committed writes, in any order (the checker orders them by {@link Write#n()})
 * @param issuances rows of {@code fencing.issuance} for the run's resources
 * @param rejections rows of {@code fencing.rejection} for the run's resources
 * @param acquisitions tokens the workers received
 * @param acks writes the workers saw committed
 * @param refusals writes the workers saw refused
 * @param beforeFailover what the workers saw before a failover to an asynchronous replica (empty
 *     without one): the commits behind these entries may be lost with the WAL the replica never
 *     received, which the checker reports as such rather than as a violation
 */
record History(
    List<Write> writes,
    List<Issuance> issuances,
    List<Rejection> rejections,
    List<WorkerLog.Acquisition> acquisitions,
    List<WorkerLog.Ack> acks,
    List<WorkerLog.Refusal> refusals,
    WorkerLog.Entries beforeFailover) {

  /** A history without failover. */
  History(
      List<Write> writes,
      List<Issuance> issuances,
      List<Rejection> rejections,
      List<WorkerLog.Acquisition> acquisitions,
      List<WorkerLog.Ack> acks,
      List<WorkerLog.Refusal> refusals) {
    this(writes, issuances, rejections, acquisitions, acks, refusals, WorkerLog.Entries.NONE);
  }

  /**
   * A committed write, as recorded in the fenced data by its own transaction.
   *
   * @param n the resource's commit counter (the row lock on it serialises the resource's commits,
   *     so n is the commit order)
   * @param maxSeen the resource's {@code max_seen} as the write's transaction saw it after taking
   *     the counter's row lock (its last statement)
   * @param maxSeenAtCommit the resource's {@code max_seen} as the write's transaction saw it inside
   *     its {@code COMMIT} (a deferred trigger, after the commit's check): what was accepted
   *     between its last statement and its commit shows here only
   */
  record Write(
      String resource,
      long n,
      long token,
      int worker,
      long seq,
      long maxSeen,
      long maxSeenAtCommit) {

    /** A write whose transaction saw the same {@code max_seen} at its last statement and commit. */
    Write(String resource, long n, long token, int worker, long seq, long maxSeen) {
      this(resource, n, token, worker, seq, maxSeen, maxSeen);
    }
  }

  /** A token the fence issued. */
  record Issuance(String resource, long token, String holder) {}

  /** A refusal the fence recorded. */
  record Rejection(String resource, @Nullable Long token, String sqlState) {}

  History {
    writes = List.copyOf(writes);
    issuances = List.copyOf(issuances);
    rejections = List.copyOf(rejections);
    acquisitions = List.copyOf(acquisitions);
    acks = List.copyOf(acks);
    refusals = List.copyOf(refusals);
  }
}
