package dev.fencing.benchmark.throughput;

import java.time.Duration;

/**
 * How long and how big the throughput benchmark runs.
 *
 * @param mode the plan's name in the report
 * @param clients concurrent clients, each a thread with its own pooled connection
 * @param branches pgbench branches; also the number of fenced resources ({@code branch:<bid>})
 * @param tellersPerBranch tellers per branch (pgbench: 10)
 * @param accountsPerBranch accounts per branch (pgbench: 100,000; smaller here, so that loading
 *     stays quick with 1,000 branches)
 * @param rounds measured rounds; each gives every comparison (a variant and its baseline) one turn
 *     of four adjacent slices, baseline, variant, variant, baseline, in an order rotated per round
 * @param warmup unmeasured time at the start of each slice
 * @param measure measured time of each slice
 */
public record Plan(
    String mode,
    int clients,
    int branches,
    int tellersPerBranch,
    int accountsPerBranch,
    int rounds,
    Duration warmup,
    Duration measure) {

  public Plan {
    if (clients < 1 || branches < 1 || tellersPerBranch < 1 || accountsPerBranch < 1) {
      throw new IllegalArgumentException("clients, branches, tellers and accounts must be >= 1");
    }
    if (rounds < 1 || warmup.isNegative() || measure.isZero() || measure.isNegative()) {
      throw new IllegalArgumentException("need >= 1 round, warm-up >= 0 and a positive measure");
    }
  }

  /**
   * The README's main command: about two and a half minutes (19 comparisons, 6 rounds of turns of
   * four 0.35 s slices, after one unrecorded warm-up turn of each variant).
   */
  public static Plan quick() {
    return new Plan("quick", 8, 1000, 10, 100, 6, Duration.ofMillis(100), Duration.ofMillis(250));
  }

  /** Longer slices and more rounds, for figures to publish: about 30 minutes. */
  public static Plan full() {
    return new Plan("full", 8, 1000, 10, 100, 12, Duration.ofMillis(500), Duration.ofMillis(1500));
  }

  /** For tests: every code path once, in seconds; its figures mean nothing. */
  public static Plan tiny() {
    return new Plan("tiny", 2, 10, 2, 10, 2, Duration.ofMillis(20), Duration.ofMillis(60));
  }

  /** The plan in words, for the report. */
  public String describe() {
    return String.format(
        java.util.Locale.ROOT,
        "%d clients, %d rounds; in each round every comparison of a variant with its baseline"
            + " takes one turn of four adjacent slices (baseline, variant, variant, baseline;"
            + " variant, baseline, baseline, variant in odd rounds), each slice %.2f s warm-up"
            + " + %.2f s measured; %d branches × %d tellers × %d accounts",
        clients,
        rounds,
        warmup.toMillis() / 1000.0,
        measure.toMillis() / 1000.0,
        branches,
        tellersPerBranch,
        accountsPerBranch);
  }
}
