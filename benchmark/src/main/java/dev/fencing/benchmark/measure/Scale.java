package dev.fencing.benchmark.measure;

import java.util.List;

/**
 * How much a benchmark run measures: rounds, durations and sizes. {@link #full()} is the default
 * run, {@link #quick()} the README's main command, {@link #tiny()} only for tests of the harness
 * (its figures mean nothing).
 *
 * @param name "full", "quick" or "tiny", recorded in the sections' methods
 * @param rounds interleaved rounds of every comparison
 * @param latencyOps timed operations per round and alternative, one client
 * @param throughputMillis duration of one throughput measurement (one variant, one round)
 * @param clients concurrent clients of the multi-client measurements
 * @param handovers lease handovers timed
 * @param resourceCounts resource counts of the check-cost growth, ascending
 * @param writesPerTransaction writes per transaction of the second growth measurement, ascending
 * @param multixactMillis duration of each sustained same-token load
 * @param multixactSampleMillis interval of the multixact series
 * @param triggerRows rows of each INSERT ... SELECT into a protected table
 */
public record Scale(
    String name,
    int rounds,
    int latencyOps,
    long throughputMillis,
    int clients,
    int handovers,
    List<Integer> resourceCounts,
    List<Integer> writesPerTransaction,
    long multixactMillis,
    long multixactSampleMillis,
    int triggerRows) {

  public Scale {
    resourceCounts = List.copyOf(resourceCounts);
    writesPerTransaction = List.copyOf(writesPerTransaction);
    if (rounds < 1 || latencyOps < 1 || throughputMillis < 1 || clients < 1 || handovers < 1) {
      throw new IllegalArgumentException("every count and duration must be positive: " + this);
    }
  }

  /** The full measurement: 10^6 resources, 10 rounds (tens of minutes). */
  public static Scale full() {
    return new Scale(
        "full",
        10,
        300,
        2_000,
        8,
        20,
        List.of(1, 1_000, 1_000_000),
        List.of(1, 10, 100, 1_000),
        20_000,
        2_000,
        50_000);
  }

  /** The README's quick mode: a few minutes; at most 10^4 resources (full mode: 10^6). */
  public static Scale quick() {
    return new Scale(
        "quick",
        5,
        100,
        500,
        8,
        5,
        List.of(1, 1_000, 10_000),
        List.of(1, 10, 100, 1_000),
        4_000,
        1_000,
        50_000);
  }

  /** For tests of the harness only: seconds, two clients, figures without meaning. */
  public static Scale tiny() {
    return new Scale(
        "tiny", 2, 5, 60, 2, 2, List.of(1, 10, 100), List.of(1, 10, 100, 1_000), 400, 200, 500);
  }

  /** {@link #quick()} if {@code quick}, else {@link #full()}. */
  public static Scale of(boolean quick) {
    return quick ? quick() : full();
  }
}
