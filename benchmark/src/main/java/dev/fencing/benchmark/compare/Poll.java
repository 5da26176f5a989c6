package dev.fencing.benchmark.compare;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/** Waits for a condition observed in a lock service, asking again every few milliseconds. */
final class Poll {
  private static final long INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  private Poll() {}

  /** The observation: true once the awaited state is there. */
  @FunctionalInterface
  interface Condition {
    boolean holds() throws Exception;
  }

  /**
   * Returns as soon as {@code condition} holds.
   *
   * @throws IllegalStateException naming {@code what} if it still does not hold after {@code
   *     timeout}
   */
  static void until(String what, Duration timeout, Condition condition) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.holds()) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(what + " did not happen within " + timeout);
      }
      LockSupport.parkNanos(INTERVAL_NANOS);
    }
  }
}
