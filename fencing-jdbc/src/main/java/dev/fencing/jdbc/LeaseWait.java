package dev.fencing.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How {@link LeaseClient#acquire} waits for a lease: on one connection that listens for releases
 * ({@code fencing_lease_released}, which {@code release()} notifies with the resource name) and
 * otherwise sleeps on the socket until the current lease expires by the database's reckoning; it
 * does not poll (it wakes every {@link #INTERRUPT_CHECK_MILLIS} ms to read the thread's interrupt
 * status and whether the client was closed, sending nothing; either ends the wait). Each wake-up
 * makes one attempt (one try_acquire transaction), whose handover wait is capped by the time left;
 * handovers that time out are tried again within the timeout.
 */
final class LeaseWait {
  private static final Logger LOG = LoggerFactory.getLogger(LeaseClient.class);

  /** The channel {@code release()} notifies, with the resource name as payload. */
  static final String RELEASED_CHANNEL = "fencing_lease_released";

  /**
   * While another acquisition's transaction holds the lease row, neither holder nor expiry is
   * known; it ends within the handover timeout, so retry soon rather than wait for a notification.
   */
  private static final long CONTENDED_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

  /**
   * pgjdbc's wait on the socket does not notice an interrupt: the wait for a release is cut into
   * slices of at most this long, and the interrupt status read between them. Nothing is sent.
   */
  static final int INTERRUPT_CHECK_MILLIS = 100;

  /** PostgreSQL's query_canceled: the SQLState of an acquisition ended by an interrupt. */
  static final String INTERRUPTED = "57014";

  private LeaseWait() {}

  /** One try_acquire on {@code c}, waiting up to {@code handover} for the previous holder. */
  @FunctionalInterface
  interface Attempter {
    Attempt attempt(Connection c, Duration handover) throws SQLException;
  }

  /** One try_acquire: the lease, or who holds it and for how long (database clock). */
  record Attempt(
      @Nullable Lease lease,
      @Nullable String currentHolder,
      @Nullable Instant expiresAt,
      @Nullable Long untilExpiryNanos) {}

  /**
   * Listens on {@code c} (in autocommit, as LISTEN takes effect only once committed) and attempts
   * until a lease is acquired or {@code timeout}, counted from {@code start} ({@link
   * System#nanoTime()}), runs out, or {@code closed} (the client's) becomes true; then stops
   * listening and gives the connection back its autocommit.
   */
  static Lease acquire(
      Connection c,
      String resource,
      Duration handoverTimeout,
      Duration timeout,
      long start,
      BooleanSupplier closed,
      Attempter attempter)
      throws SQLException {
    boolean autoCommit = c.getAutoCommit();
    c.setAutoCommit(true); // LISTEN takes effect only once committed
    execute(c, "LISTEN " + RELEASED_CHANNEL);
    Lease lease;
    try {
      lease = waitFor(c, resource, handoverTimeout, timeout, start, closed, attempter);
    } catch (SQLException | RuntimeException e) {
      stopListeningQuietly(c, autoCommit, e);
      throw e;
    }
    stopListening(c, autoCommit);
    return lease;
  }

  private static Lease waitFor(
      Connection c,
      String resource,
      Duration handoverTimeout,
      Duration timeout,
      long start,
      BooleanSupplier closed,
      Attempter attempter)
      throws SQLException {
    PGConnection pg = c.unwrap(PGConnection.class);
    long timeoutNanos = saturatedNanos(timeout);
    while (true) {
      requireOpen(resource, closed);
      long left = timeoutNanos - (System.nanoTime() - start);
      Attempt attempt;
      try {
        attempt = attempter.attempt(c, handoverWithin(left, handoverTimeout));
      } catch (HandoverTimeoutException e) {
        if (timeoutNanos - (System.nanoTime() - start) <= 0) {
          throw e;
        }
        requireNotInterrupted(resource, e);
        LOG.debug("Handover of {} not done yet; trying again: {}", resource, e.getMessage());
        continue; // the attempt itself waited for the previous holder's transactions
      }
      Lease lease = attempt.lease();
      if (lease != null) {
        return lease;
      }
      left = timeoutNanos - (System.nanoTime() - start);
      if (left <= 0) {
        throw timedOut(resource, attempt, timeout);
      }
      Long untilExpiry = attempt.untilExpiryNanos();
      long wait = Math.min(left, untilExpiry == null ? CONTENDED_RETRY_NANOS : untilExpiry);
      LOG.debug(
          "Lease on {} is held by {}; waiting up to {} ms for its release",
          resource,
          attempt.currentHolder(),
          TimeUnit.NANOSECONDS.toMillis(wait));
      awaitRelease(pg, resource, wait, closed);
    }
  }

  /** The handover timeout of an attempt with {@code leftNanos} of acquire's timeout left. */
  private static Duration handoverWithin(long leftNanos, Duration handoverTimeout) {
    Duration left =
        Duration.ofNanos(Math.max(leftNanos, LeaseSettings.MIN_HANDOVER_TIMEOUT.toNanos()));
    return left.compareTo(handoverTimeout) < 0 ? left : handoverTimeout;
  }

  /**
   * Returns when {@code resource} was released, or after {@code waitNanos}.
   *
   * @throws SQLException SQLState {@code 57014} if the thread is or gets interrupted meanwhile
   * @throws IllegalStateException if the client is or gets closed meanwhile
   */
  private static void awaitRelease(
      PGConnection pg, String resource, long waitNanos, BooleanSupplier closed)
      throws SQLException {
    long start = System.nanoTime();
    long left = waitNanos;
    while (left > 0) {
      requireNotInterrupted(resource, null);
      requireOpen(resource, closed);
      // getNotifications(0) would block forever: always wait at least 1 ms
      int millis = (int) Math.min(INTERRUPT_CHECK_MILLIS, Math.max(1, ceilMillis(left)));
      PGNotification[] notifications = pg.getNotifications(millis);
      for (PGNotification n : notifications == null ? new PGNotification[0] : notifications) {
        if (RELEASED_CHANNEL.equals(n.getName()) && resource.equals(n.getParameter())) {
          return;
        }
      }
      left = waitNanos - (System.nanoTime() - start);
    }
  }

  /**
   * Throws if the waiting thread is interrupted, keeping its interrupt status: the wait ends,
   * nothing is acquired.
   */
  private static void requireNotInterrupted(String resource, @Nullable Exception last)
      throws SQLException {
    if (Thread.currentThread().isInterrupted()) {
      throw interrupted(resource, "waiting for the lease", last);
    }
  }

  /**
   * The failure of an acquisition ended by an interrupt while {@code doing}: SQLState {@code
   * 57014}, an {@link InterruptedException} as cause, {@code last} (if any) suppressed.
   */
  static SQLException interrupted(String resource, String doing, @Nullable Exception last) {
    SQLException e =
        new SQLException(
            "interrupted while " + doing + " on \"" + resource + "\"; nothing was acquired",
            INTERRUPTED,
            new InterruptedException());
    if (last != null) {
      e.addSuppressed(last);
    }
    return e;
  }

  /** Throws if the client was closed: a closed client acquires nothing, also not after a wait. */
  private static void requireOpen(String resource, BooleanSupplier closed) {
    if (closed.getAsBoolean()) {
      throw new IllegalStateException(
          "lease client was closed while waiting for the lease on \""
              + resource
              + "\"; nothing was acquired");
    }
  }

  private static SQLTimeoutException timedOut(String resource, Attempt last, Duration timeout) {
    String heldBy =
        last.currentHolder() == null
            ? "another client's acquisition in progress"
            : "held by "
                + last.currentHolder()
                + " until "
                + last.expiresAt()
                + " (database clock)";
    return new SQLTimeoutException(
        "timed out after " + timeout + " waiting for the lease on \"" + resource + "\": " + heldBy);
  }

  private static void stopListening(Connection c, boolean autoCommit) throws SQLException {
    execute(c, "UNLISTEN " + RELEASED_CHANNEL);
    c.setAutoCommit(autoCommit);
  }

  private static void stopListeningQuietly(Connection c, boolean autoCommit, Exception failure) {
    try {
      stopListening(c, autoCommit);
    } catch (SQLException | RuntimeException e) {
      failure.addSuppressed(e);
    }
  }

  private static void execute(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  private static long ceilMillis(long nanos) {
    return (nanos + 999_999) / 1_000_000;
  }

  private static long saturatedNanos(Duration d) {
    return d.compareTo(Duration.ofNanos(Long.MAX_VALUE)) >= 0 ? Long.MAX_VALUE : d.toNanos();
  }
}
