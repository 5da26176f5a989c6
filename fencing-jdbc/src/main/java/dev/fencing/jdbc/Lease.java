package dev.fencing.jdbc;

import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One acquisition of a resource: its {@linkplain #token() fencing token}, greater than every token
 * issued for the resource before, and how long the database grants it. Obtained from {@link
 * LeaseClient}; bind it with {@link Fencing#bind(Lease...)} to fence writes (see {@link Fencing}
 * for the protocol).
 *
 * <pre>{@code
 * try (Lease lease = leases.acquire("ledger", Duration.ofSeconds(30), Duration.ofSeconds(5))) {
 *   ...
 * } // released: the next client acquires at once
 * }</pre>
 *
 * <p><b>On expiry</b> — the ttl passed on the database clock without a {@link #renew()} — the
 * database treats the lease as free and the next client may acquire it. Until somebody does, this
 * token is still accepted by the resource; the acquisition's greater token fences it off, and from
 * then on writes carrying it are refused ({@link StaleFencingTokenException}). The client does not
 * wait for that: once it reckons the lease has run out it reports it {@linkplain #isLost() lost}
 * and a {@link FencedDataSource} stops carrying the token. That reckoning is the client's own; see
 * {@link #isLost()} for what it cannot know, and {@link #verify()} for asking the database.
 *
 * <p><b>On crash</b> of the holder nothing is released: the lease expires on the database clock
 * after its ttl, and its token stays accepted by the resource until the next acquisition, whose
 * token fences it off. A holder that is paused or cut off instead of crashed is covered by the same
 * rule: whatever it writes after the next acquisition is refused.
 *
 * <p><b>Keep-alive</b> ({@link LeaseClient.Builder#keepAlive(boolean)}) renews the lease every
 * {@code ttl * renewFraction} until {@link #close()}; when a renewal is refused, or the lease runs
 * out before one succeeds, the lease is lost and the client's {@link LeaseListener} is told once.
 * Transient failures (connection refused, ...) are logged and retried at the next tick.
 *
 * <p>{@link #close()} releases the lease once, never throws, and is safe to call again.
 * Thread-safe.
 */
public final class Lease implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Lease.class);

  private final LeaseClient client;
  private final FencingToken token;
  private final String holder;
  private final Duration ttl;

  // Database-clock expiry, and the same moment reckoned on the client's monotonic clock
  // (LeaseClient.nanoTime(), System.nanoTime() but in tests): never later while that clock keeps
  // the database's pace.
  private volatile Instant expiresAt;
  private volatile long expiryNanos;
  // Successful renewals so far (guarded by this): a verify that a renewal overtook read the expiry
  // before it, and must not move the renewal's back.
  private long renewals;

  private final AtomicBoolean lost = new AtomicBoolean();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final AtomicBoolean listenerCalled = new AtomicBoolean();
  private volatile @Nullable String lostReason;
  private volatile @Nullable Throwable lostCause;
  private volatile @Nullable Throwable lastRenewFailure; // since the last successful renewal

  private volatile @Nullable ScheduledFuture<?> keepAlive;

  // Tests only: runs on the keep-alive thread when it is about to call the listener, before it
  // claims the call (a close() may come meanwhile).
  volatile @Nullable Runnable beforeListenerClaim;

  Lease(
      LeaseClient client,
      FencingToken token,
      String holder,
      Duration ttl,
      Instant expiresAt,
      long expiryNanos) {
    this.client = client;
    this.token = token;
    this.holder = holder;
    this.ttl = ttl;
    this.expiresAt = expiresAt;
    this.expiryNanos = expiryNanos;
  }

  /** The fencing token of this acquisition. */
  public FencingToken token() {
    return token;
  }

  /** The leased resource. */
  public String resource() {
    return token.resource();
  }

  /** Who holds the lease, as recorded in the database. */
  public String holder() {
    return holder;
  }

  /** How long each acquisition or renewal grants the lease. */
  public Duration ttl() {
    return ttl;
  }

  /** When the lease expires by the database clock, as of the last acquire or renew. */
  public Instant expiresAt() {
    return expiresAt;
  }

  /**
   * Whether this client knows the lease is gone, without asking the database.
   *
   * <p>What it knows: the lease was released by {@link #close()}; a renewal (or {@link #verify()})
   * was refused or found the lease gone; the keep-alive could not renew it in time; or the lease's
   * expiry has passed by this JVM's monotonic clock ({@link System#nanoTime()}), counted from the
   * remaining time the database reported with the acquisition or the last renewal, starting when
   * that request was sent. While the client's clock runs at the database's pace, that moment comes
   * no later than the database's expiry, so {@code true} is never late then.
   *
   * <p>What it cannot know: the database decides expiry on its own clock. A client clock that runs
   * slow or stands still — a paused VM or container, a suspended host, a process stopped for longer
   * than the lease — keeps this {@code false} after the database expired the lease, and
   * (acquisition being allowed from then on) after another client acquired it. It cannot see a
   * takeover either, nor a release or renewal made elsewhere. So {@code false} means "not known to
   * be lost", never "held": fencing does not depend on it, because PostgreSQL refuses this token
   * once a newer one exists. Where a caller needs the truth (before a side effect outside the
   * database, say), {@link #verify()} asks the database.
   */
  public boolean isLost() {
    return lost.get() || client.nanoTime() - expiryNanos >= 0;
  }

  /**
   * Asks the database, in one round trip, whether it grants this lease now: the lease of this
   * resource still has this token and is neither released nor expired by the database clock. If
   * not, the lease becomes {@linkplain #isLost() lost} here too; if so, the client's reckoning of
   * its expiry is brought in line with the database's remaining time (never later than before). A
   * lease this client already knows lost stays lost: it is no longer carried, whatever the answer.
   *
   * <p>The answer is true when the database answers; a lease can expire or be taken over the moment
   * after. Writes need no such check: PostgreSQL fences them. Use it where an action outside the
   * database should not run on a lease the database no longer grants.
   *
   * @return true if the database grants the lease to this token now
   * @throws SQLException if the database cannot be asked; nothing changes
   */
  public boolean verify() throws SQLException {
    long renewalsBefore = renewals();
    long sentAt = client.nanoTime();
    LeaseQueries.Held held = client.held(token);
    if (!held.held()) {
      markLost("the database no longer grants it (released, expired or superseded)", null);
      return false;
    }
    Long remaining = held.remainingNanos();
    if (remaining != null) {
      shorten(sentAt + remaining, renewalsBefore);
    }
    return true;
  }

  /**
   * Extends the lease by its ttl from now (database clock).
   *
   * @return the new expiry
   * @throws StaleFencingTokenException if another client has acquired the resource since; the lease
   *     is then lost
   * @throws LeaseLostException if the lease was released or had expired (the lease is then lost),
   *     or the client already knew it lost (closed, refused before, or run out under keep-alive)
   * @throws FencingRefusedException for any other refusal of the token; the lease is then lost
   * @throws SQLException if the database fails; the lease is unchanged, retry
   */
  public Instant renew() throws SQLException {
    if (lost.get()) {
      throw knownLost();
    }
    long sentAt = client.nanoTime(); // before the query, so the estimate errs early
    LeaseQueries.Renewal renewal;
    try {
      renewal = client.renew(token, ttl);
    } catch (SQLException e) {
      FencingRefusedException refused = FencingExceptions.translate(e, resource(), token.value());
      if (refused == null) {
        throw e;
      }
      markLost("its renewal was refused: " + refused.getMessage(), refused);
      throw refused;
    }
    extend(renewal.expiresAt(), sentAt + renewal.remainingNanos());
    LOG.debug("Renewed lease on {} with token {} until {}", resource(), token.value(), expiresAt);
    return renewal.expiresAt();
  }

  /**
   * Releases the lease (once; later calls do nothing) and stops its keep-alive. Never throws: if
   * the release fails it is logged at WARN and the lease simply expires after its ttl; a lease a
   * newer holder already superseded has nothing to release (logged at INFO). Afterwards {@link
   * #isLost()} is true, and no call of the {@link LeaseListener} begins (one the keep-alive began
   * before may still be running on its thread).
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    listenerCalled.set(true); // no listener call begins after this (one under way may go on)
    markLost("it was closed", null);
    ScheduledFuture<?> task = keepAlive;
    if (task != null) {
      task.cancel(false);
    }
    try {
      if (client.release(token)) {
        LOG.info("Released lease on {} with token {}", resource(), token.value());
      } else {
        LOG.debug("Lease on {} with token {} was released already", resource(), token.value());
      }
    } catch (SQLException e) {
      if (FencingSqlState.of(e.getSQLState()).orElse(null) == FencingSqlState.STALE_TOKEN) {
        // a newer holder took the resource: there is nothing of ours left to release
        LOG.info(
            "Lease on {} with token {} was superseded; nothing to release ({})",
            resource(),
            token.value(),
            e.getMessage());
        return;
      }
      warnNotReleased(e);
    } catch (RuntimeException e) {
      warnNotReleased(e);
    }
  }

  private void warnNotReleased(Exception e) {
    LOG.warn(
        "Could not release lease on {} with token {}; it will expire by {} (database clock)",
        resource(),
        token.value(),
        expiresAt,
        e);
  }

  @Override
  public String toString() {
    return "Lease["
        + token
        + ", holder "
        + holder
        + ", expires "
        + expiresAt
        + (isLost() ? ", lost" : "")
        + "]";
  }

  // --- keep-alive ------------------------------------------------------------------------------

  /** Starts renewing every {@code periodNanos}; false if the scheduler no longer takes tasks. */
  boolean startKeepAlive(ScheduledExecutorService scheduler, long periodNanos, LeaseListener l) {
    return schedule(scheduler, periodNanos, l, periodNanos);
  }

  private boolean schedule(
      ScheduledExecutorService scheduler, long periodNanos, LeaseListener l, long delayNanos) {
    ScheduledFuture<?> task;
    try {
      task =
          scheduler.schedule(
              () -> tick(scheduler, periodNanos, l), delayNanos, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      LOG.debug("Keep-alive of lease on {} with token {} stopped", resource(), token.value());
      return false;
    }
    keepAlive = task;
    // close() may have cancelled the previous task just before this one replaced it
    if (closed.get()) {
      task.cancel(false);
    }
    return true;
  }

  private void tick(ScheduledExecutorService scheduler, long periodNanos, LeaseListener l) {
    if (closed.get()) {
      return;
    }
    if (!lost.get() && client.nanoTime() - expiryNanos >= 0) {
      markLost("the keep-alive could not renew it before it expired", lastRenewFailure);
    }
    if (lost.get()) {
      notifyLost(l);
      return;
    }
    long delay = periodNanos;
    try {
      renew();
      lastRenewFailure = null;
    } catch (FencingRefusedException refused) {
      notifyLost(l);
      return;
    } catch (SQLException | RuntimeException e) {
      lastRenewFailure = e; // reported if the lease runs out before a renewal succeeds
      LOG.warn(
          "Could not renew lease on {} with token {}; retrying (expires at {})",
          resource(),
          token.value(),
          expiresAt,
          e);
      // come back no later than the expiry, so the loss is reported on time
      delay = Math.max(0, Math.min(periodNanos, expiryNanos - client.nanoTime()));
    }
    schedule(scheduler, periodNanos, l, delay);
  }

  private void notifyLost(LeaseListener l) {
    Runnable hook = beforeListenerClaim;
    if (hook != null) {
      hook.run();
    }
    // close() claims the call too: once it has, no call begins (closed alone was checked too early)
    if (!listenerCalled.compareAndSet(false, true)) {
      return;
    }
    LOG.warn("Lost lease on {} with token {}: {}", resource(), token.value(), lostReason);
    try {
      l.leaseLost(this, lostCause);
    } catch (RuntimeException e) {
      LOG.error(
          "Lease listener failed for lease on {} with token {}", resource(), token.value(), e);
    }
  }

  // --- state -----------------------------------------------------------------------------------

  private void markLost(String reason, @Nullable Throwable cause) {
    if (lost.compareAndSet(false, true)) {
      lostReason = reason;
      lostCause = cause;
    }
  }

  /** Keeps the later of two renewals that finish out of order. */
  private synchronized void extend(Instant newExpiresAt, long newExpiryNanos) {
    renewals++;
    if (newExpiryNanos - expiryNanos > 0) {
      expiresAt = newExpiresAt;
      expiryNanos = newExpiryNanos;
    }
  }

  private synchronized long renewals() {
    return renewals;
  }

  /**
   * Moves the reckoned expiry earlier, never later (the database says less time is left); not if a
   * renewal succeeded since {@code renewalsBefore}, when the request was sent: the database may
   * have answered before that renewal, whose own reckoning then stands.
   */
  private synchronized void shorten(long newExpiryNanos, long renewalsBefore) {
    if (renewals == renewalsBefore && newExpiryNanos - expiryNanos < 0) {
      expiryNanos = newExpiryNanos;
    }
  }

  private LeaseLostException knownLost() {
    return new LeaseLostException(
        "lease on " + resource() + " with token " + token.value() + " is lost: " + lostReason,
        FencingSqlState.LEASE_NOT_HELD.code(),
        resource(),
        token.value(),
        null,
        lostCause);
  }
}
