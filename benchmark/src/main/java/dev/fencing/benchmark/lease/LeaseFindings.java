package dev.fencing.benchmark.lease;

import java.util.List;

/**
 * Where an acquire+release spends its time: the analysis behind the figures, from pgjdbc's protocol
 * trace, pgbench per-statement latencies and plpgsql loops (docs/benchmark).
 */
final class LeaseFindings {
  private LeaseFindings() {}

  static List<String> whereTheTimeGoes() {
    return List.of(
        "An acquire+release is 2 transactions, 2 round trips and 1 WAL flush: each lease"
            + " operation sends BEGIN ISOLATION LEVEL READ COMMITTED, its statement and COMMIT as"
            + " one query in autocommit mode (one Sync, issue 14; LeaseRoundTripTest counts them);"
            + " only the acquisition's commit waits for the flush (its token counts as issued only"
            + " once durable); the release commits asynchronously, since losing it in a crash only"
            + " keeps the lease until its expiry. It was 4 round trips (a separate COMMIT per"
            + " operation), and 8 before that (SHOW TRANSACTION ISOLATION LEVEL and SET SESSION"
            + " CHARACTERISTICS around each operation) with 2 flushes.",
        "What remains: the flush (the commit probe's durable minus asynchronous median), 2"
            + " round trips and 2 pool borrows, and the plpgsql of try_acquire (validation, two"
            + " lookups, the advisory and row locks of the handover, tried without waiting"
            + " (V20: no subtransaction unless there is something to wait for), nextval, two"
            + " UPDATEs and one INSERT) and release (one UPDATE), a"
            + " few hundred microseconds of server CPU together on a busy 2-core"
            + " machine. Below the flush nothing can go: a durable token needs one fsync, as a"
            + " ZooKeeper lock needs two (create and delete of the lock node).");
  }
}
