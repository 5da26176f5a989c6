package dev.fencing.jdbc;

import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Cancels a statement when the thread running it is interrupted: pgjdbc's wait for the reply on the
 * socket does not notice an interrupt, so an acquisition's handover wait (inside {@code
 * try_acquire}, up to the handover timeout) would run on. While the statement runs, the running
 * thread's interrupt status is read every {@link LeaseWait#INTERRUPT_CHECK_MILLIS} ms on one daemon
 * thread (nothing is sent meanwhile); once it is set, the statement is cancelled ({@link
 * Statement#cancel()}: PostgreSQL's cancel request, and the statement fails with {@code 57014}).
 * pgjdbc cancels only a statement still executing and waits for the cancel request to be sent
 * before {@code execute} returns, so a cancel cannot reach a later statement of the connection.
 */
final class InterruptWatch implements AutoCloseable {
  /** The SQLState of a statement cancelled ({@code query_canceled}). */
  private static final String CANCELED = "57014";

  private static final ScheduledThreadPoolExecutor WATCHER = watcher();

  private final Statement statement;
  private final Thread thread;
  private final ScheduledFuture<?> task;
  private boolean stopped; // guarded by this
  private volatile boolean cancelled;

  private InterruptWatch(Statement statement, Thread thread) {
    this.statement = statement;
    this.thread = thread;
    long period = TimeUnit.MILLISECONDS.toNanos(LeaseWait.INTERRUPT_CHECK_MILLIS);
    this.task = WATCHER.scheduleWithFixedDelay(this::check, period, period, TimeUnit.NANOSECONDS);
  }

  /** Watches the current thread while it runs {@code statement}; close when it has returned. */
  static InterruptWatch start(Statement statement) {
    return new InterruptWatch(statement, Thread.currentThread());
  }

  private synchronized void check() {
    if (stopped || cancelled || !thread.isInterrupted()) {
      return;
    }
    cancelled = true;
    try {
      statement.cancel();
    } catch (SQLException | RuntimeException e) {
      // not cancelled: the statement runs to its own end (the handover timeout at the latest)
    }
  }

  /**
   * Whether {@code failure} of the watched statement is the cancel this watch sent for an interrupt
   * (the thread still interrupted).
   */
  boolean interrupted(@Nullable SQLException failure) {
    return cancelled
        && failure != null
        && CANCELED.equals(failure.getSQLState())
        && thread.isInterrupted();
  }

  /** Stops watching; a check under way finishes first, so no cancel comes after this returns. */
  @Override
  public synchronized void close() {
    stopped = true;
    task.cancel(false);
  }

  private static ScheduledThreadPoolExecutor watcher() {
    ScheduledThreadPoolExecutor scheduler =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, "fencing-interrupt-watch");
              t.setDaemon(true);
              return t;
            });
    scheduler.setRemoveOnCancelPolicy(true);
    return scheduler;
  }
}
