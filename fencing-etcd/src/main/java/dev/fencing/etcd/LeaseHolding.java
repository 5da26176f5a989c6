package dev.fencing.etcd;

import dev.fencing.jdbc.FencedLockException;
import dev.fencing.jdbc.FencingToken;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * One acquisition: its lease, kept alive until released, and what etcd said about it. The
 * keep-alives are sent here, one request at a time ({@code keepAliveOnce}), not by jetcd's
 * keep-alive stream: its replies do not say when the request they answer was sent, and the lease is
 * only known to last its TTL from then. A keep-alive unanswered for a whole TTL from when it was
 * sent, with no later one confirmed meanwhile, ends the holding as lost (etcd may have let the
 * lease expire): jetcd's request has no deadline of its own, and an etcd that stopped answering
 * without closing the connection would leave it pending for ever.
 */
final class LeaseHolding {
  private final Client client;
  private final LongSupplier nanoTime;
  private final long ttlNanos;
  final long leaseId;
  @Nullable FencingToken token;
  private volatile boolean lost;
  private final CompletableFuture<@Nullable Void> lostOrEnded = new CompletableFuture<>();
  private volatile boolean ended;
  private volatile @Nullable ScheduledFuture<?> keepAlives;
  private volatile long confirmedUntil; // written under synchronized (this)
  private volatile @Nullable KeyWatch keyWatch;

  LeaseHolding(
      Client client, LongSupplier nanoTime, long leaseId, long ttlNanos, long confirmedUntil) {
    this.client = client;
    this.nanoTime = nanoTime;
    this.leaseId = leaseId;
    this.ttlNanos = ttlNanos;
    this.confirmedUntil = confirmedUntil;
  }

  /**
   * Whether etcd has neither dropped the lease nor left it unconfirmed for a whole TTL since the
   * last confirmed request was sent.
   */
  boolean alive() {
    return !lost && nanoTime.getAsLong() - confirmedUntil < 0;
  }

  /**
   * Renews every {@code periodNanos} (real time) until ended (the task is then cancelled and
   * removed at once, not left queued for up to a third of the TTL), or until the client refuses to
   * send (closed): the lease then runs out at its confirmed deadline.
   */
  void keepAliveEvery(long periodNanos) {
    keepAlives =
        KEEP_ALIVES.scheduleAtFixedRate(
            () -> {
              if (!ended && !lost) {
                renew();
              } else if (keepAlives != null) {
                keepAlives.cancel(false); // lost: nothing left to renew
              }
            },
            periodNanos,
            periodNanos,
            TimeUnit.NANOSECONDS);
  }

  /**
   * One keep-alive: etcd's reply extends the lease to its TTL from when this request was sent
   * (replies may come out of order: the latest such moment wins). "Lease not found" (a TTL of zero)
   * is final, and so is no reply within the lease's TTL from when the request was sent (real time)
   * unless a later keep-alive was confirmed meanwhile (etcd then said the lease lives on): by then
   * nothing etcd could answer to this one would extend the lease past now, and etcd may have ended
   * it. Other failures leave the lease to its confirmed deadline. Completes (normally) when the
   * holding knows the outcome: a TTL after the call at the latest.
   */
  CompletableFuture<?> renew() {
    long sentAt = nanoTime.getAsLong(); // before the request, so the estimate errs early
    return client
        .getLeaseClient()
        .keepAliveOnce(leaseId)
        .orTimeout(ttlNanos, TimeUnit.NANOSECONDS)
        .whenComplete(
            (response, failure) -> {
              if (response != null) {
                extend(sentAt + TimeUnit.SECONDS.toNanos(response.getTTL()));
              } else if (unwrap(failure) instanceof EtcdException e
                  && e.getErrorCode() == ErrorCode.NOT_FOUND) {
                lose(); // keepAliveOnce's answer to a TTL of zero
              } else if (unwrap(failure) instanceof TimeoutException && !alive()) {
                // unanswered for a whole TTL and no later keep-alive confirmed: it may be gone
                lose();
              }
            })
        .exceptionally(failure -> null);
  }

  /**
   * Watches the lock key from {@code fromRevision} on ({@link KeyWatch}): its deletion by anyone
   * (another client deleting it to kick this holder, the lease's end) ends the holding as lost,
   * since the next contender then holds the lock; so does a put that leaves it no longer this
   * holding's key (its create revision, the token, not {@code createRevision}, or its lease not
   * this one's: overwritten by hand or by another client, the key is no longer kept by these
   * keep-alives nor deleted by this release). A watch that ends is replaced after the key is read
   * again; one that cannot be (the client closed, the key unreadable once the lease is not known
   * alive) ends the holding as lost: it is never left held with nobody watching its key.
   */
  void watchKey(ByteSequence key, long fromRevision, long createRevision, Duration requestTimeout) {
    KeyWatch w =
        new KeyWatch(
            client,
            KEEP_ALIVES,
            key,
            leaseId,
            createRevision,
            requestTimeout,
            new KeyWatch.Holder() {
              @Override
              public boolean over() {
                return lost;
              }

              @Override
              public boolean alive() {
                return LeaseHolding.this.alive();
              }

              @Override
              public void lose() {
                LeaseHolding.this.lose();
              }
            });
    keyWatch = w;
    w.start(fromRevision);
    if (lost) {
      w.close(); // lost meanwhile: lose() may have missed it
    }
  }

  /** Completes when the holding is lost or ended: never alive again. */
  CompletableFuture<?> lostOrEnded() {
    return lostOrEnded;
  }

  /** Whether its keep-alives are still scheduled (tests). */
  boolean keepingAlive() {
    ScheduledFuture<?> k = keepAlives;
    return k != null && !k.isDone();
  }

  /** Ends the holding as lost: never alive again, no more keep-alives. */
  private void lose() {
    lost = true;
    ScheduledFuture<?> k = keepAlives;
    if (k != null) {
      k.cancel(false);
    }
    KeyWatch w = keyWatch;
    if (w != null) {
      w.close();
    }
    lostOrEnded.complete(null);
  }

  private synchronized void extend(long until) {
    if (until - confirmedUntil > 0) {
      confirmedUntil = until;
    }
  }

  /** Stops the keep-alives and revokes the lease (deleting the lock key, if any). */
  void end(Client client, Duration timeout) {
    ended = true;
    lose(); // no more keep-alives nor watch; then the lease itself goes
    try {
      client.getLeaseClient().revoke(leaseId).get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new FencedLockException("interrupted while revoking lease " + leaseId, e);
    } catch (ExecutionException e) {
      if (!String.valueOf(e.getCause()).contains("lease not found")) {
        throw new FencedLockException(
            "could not revoke lease "
                + Long.toHexString(leaseId)
                + "; etcd deletes the lock key when it expires",
            e.getCause());
      }
    } catch (TimeoutException e) {
      throw new FencedLockException(
          "etcd did not answer within "
              + timeout
              + " to revoke lease "
              + Long.toHexString(leaseId)
              + "; etcd deletes the lock key when it expires",
          e);
    }
  }

  /**
   * Sends every lock's keep-alives (each only starts an asynchronous request): one daemon thread,
   * not the common pool, which the application's tasks can occupy.
   */
  private static final ScheduledThreadPoolExecutor KEEP_ALIVES = keepAliveScheduler();

  private static ScheduledThreadPoolExecutor keepAliveScheduler() {
    ScheduledThreadPoolExecutor scheduler =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, "fencing-etcd-keep-alive");
              t.setDaemon(true);
              return t;
            });
    scheduler.setRemoveOnCancelPolicy(true);
    return scheduler;
  }

  /** Whether its keep-alive task is in the scheduler's queue (tests). */
  boolean keepAliveQueued() {
    ScheduledFuture<?> k = keepAlives;
    return k != null && KEEP_ALIVES.getQueue().contains(k);
  }

  /**
   * The failure itself: jetcd's futures are dependent stages of the ones its replies complete, so a
   * failure reaches them wrapped in a {@link CompletionException}.
   */
  private static @Nullable Throwable unwrap(@Nullable Throwable failure) {
    return failure instanceof CompletionException c && c.getCause() != null
        ? c.getCause()
        : failure;
  }
}
