package dev.fencing.etcd;

import dev.fencing.jdbc.FencedLock;
import dev.fencing.jdbc.FencedLockException;
import dev.fencing.jdbc.FencingToken;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
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
 * An etcd lock (etcd's Lock service, held through a lease this object grants and keeps alive) whose
 * fencing token is the <b>create revision of its lock key</b>: the etcd revision of the transaction
 * that put the key. PostgreSQL compares it through a {@code FencedDataSource}; the resource must be
 * declared external first ({@code FencedDataSource.createExternalResource}).
 *
 * <pre>{@code
 * try (EtcdFencedLock lock = EtcdFencedLock.builder(etcdClient, "ledger").build()) {
 *   FencingToken token = lock.acquire(Duration.ofSeconds(10));
 *   try (FencingScope scope = Fencing.bind(token); Connection c = fencedDataSource.getConnection()) {
 *     ... writes: PostgreSQL refuses them once a later holder has written ...
 *   }
 * }
 * }</pre>
 *
 * <h2>Why every later holder's token is strictly greater</h2>
 *
 * <ul>
 *   <li>etcd's Lock service: each contender puts a key {@code <name>/<lease id>} attached to its
 *       lease and holds the lock once no key under {@code <name>/} with a smaller create revision
 *       exists. It holds it until its key is deleted: unlock, or the end of its lease (revoked, or
 *       expired because keep-alives stopped reaching etcd).
 *   <li>etcd applies every write in one total order (Raft) and numbers it with the store's
 *       revision, which only ever increases (compaction discards old history, never the counter).
 *   <li>If B holds the lock after A did, B's key was created after A's: had it existed when A
 *       acquired, it would have had the smaller revision and A would have waited for it. Hence
 *       revision(B) &gt; revision(A).
 *   <li><b>Lease expiry.</b> A pauses past its lease's TTL: etcd deletes A's key in a revision, and
 *       only then can B hold. A, not knowing yet, carries its old token, which PostgreSQL refuses
 *       once B has written. Acquiring again means a new lease and a new key: a greater token.
 *   <li><b>Reconnects.</b> A connection loss shorter than the TTL keeps the lease and the key: same
 *       holder, same token. {@link #isHeld()} turns false when keep-alives are refused or have not
 *       been confirmed for a whole TTL, counted from when the request that etcd confirmed was
 *       <i>sent</i> (etcd starts the TTL no earlier than it receives the request): never later than
 *       etcd's own expiry while the two clocks run at the same pace.
 *   <li>After the lock call returns, the key is read back: the token is only returned if the key
 *       still exists and belongs to this lease.
 *   <li>Limits: an etcd cluster restored from an old snapshot, or a new cluster, can hand out
 *       smaller revisions; PostgreSQL then refuses every new holder as stale (safe, but stuck)
 *       until the resource is dropped and declared again.
 * </ul>
 *
 * <p>Each acquisition gets its own lease, revoked by {@link #release()} (which deletes the key at
 * once) and by a timed-out acquisition (so an abandoned wait cannot turn into a hidden hold). One
 * lock object holds at most one acquisition at a time; any thread may release it.
 */
public final class EtcdFencedLock implements FencedLock {
  private static final Duration MAX_TTL = Duration.ofDays(1);

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

  /** How many keep-alive tasks are scheduled, all locks together (tests). */
  static int scheduledKeepAlives() {
    return KEEP_ALIVES.getQueue().size();
  }

  private final Client client;
  private final String resource;
  private final String lockName;
  private final long ttlSeconds;
  private final Duration requestTimeout;
  private final LongSupplier nanoTime;
  private final Object guard = new Object();
  private volatile @Nullable Holding holding;
  private volatile boolean closed;

  private EtcdFencedLock(Builder builder, String lockName) {
    this.client = builder.client;
    this.resource = builder.resource;
    this.lockName = lockName;
    this.ttlSeconds = builder.leaseTtl.toSeconds();
    this.requestTimeout = builder.requestTimeout;
    this.nanoTime = builder.nanoTime;
  }

  /**
   * Starts the configuration of a lock for {@code resource} (a PostgreSQL resource name: 1 to 200
   * of letters, digits and {@code _ . : / @ + = # -}).
   */
  public static Builder builder(Client client, String resource) {
    return new Builder(client, resource);
  }

  @Override
  public String resource() {
    return resource;
  }

  /** The etcd lock name; the holders' keys are {@code <name>/<lease id>}. */
  public String lockName() {
    return lockName;
  }

  /**
   * The lease of the current holding, or empty if not held: for diagnostics and tests (revoking it
   * is how etcd takes the lock away).
   */
  public Optional<Long> leaseId() {
    Holding h = holding;
    return h == null ? Optional.empty() : Optional.of(h.leaseId);
  }

  /**
   * {@inheritDoc}
   *
   * <p>{@code wait} bounds the whole acquisition, round trips to etcd included (a wait of zero
   * acquires nothing); granting the lease and reading the key back are bounded by the builder's
   * request timeout.
   */
  @Override
  public Optional<FencingToken> tryAcquire(Duration wait) throws InterruptedException {
    Objects.requireNonNull(wait, "wait");
    if (wait.isNegative()) {
      throw new IllegalArgumentException("wait must not be negative, was " + wait);
    }
    synchronized (guard) {
      if (closed) {
        throw new IllegalStateException("lock on " + resource + " is closed");
      }
      Holding current = holding;
      if (current != null) {
        throw new IllegalStateException(
            "lock on " + resource + " is already held with token " + current.token);
      }
      long sentAt = nanoTime.getAsLong(); // before the request: the TTL starts after it
      LeaseGrantResponse grant = call("grant a lease", client.getLeaseClient().grant(ttlSeconds));
      Holding h = new Holding(grant.getID(), sentAt + TimeUnit.SECONDS.toNanos(grant.getTTL()));
      long leaseId = h.leaseId;
      h.keepAliveEvery(TimeUnit.SECONDS.toNanos(ttlSeconds) / 3);
      try {
        ByteSequence key;
        try {
          key =
              client
                  .getLockClient()
                  .lock(bytes(lockName), leaseId)
                  .get(saturatedNanos(wait), TimeUnit.NANOSECONDS)
                  .getKey();
        } catch (TimeoutException e) {
          h.end(client, requestTimeout);
          return Optional.empty();
        } catch (ExecutionException e) {
          throw new FencedLockException(
              "could not acquire the etcd lock " + lockName + " for " + resource, e.getCause());
        }
        List<KeyValue> kvs = call("read the lock key back", client.getKVClient().get(key)).getKvs();
        if (kvs.isEmpty() || kvs.get(0).getLease() != leaseId) {
          throw new FencedLockException(
              "lock key "
                  + key.toString(StandardCharsets.UTF_8)
                  + " is gone right after acquisition: lease "
                  + Long.toHexString(leaseId)
                  + " ended; not held");
        }
        h.token = FencingToken.of(resource, kvs.get(0).getCreateRevision());
        holding = h;
        return Optional.of(h.token);
      } catch (InterruptedException | RuntimeException e) {
        try {
          h.end(client, requestTimeout);
        } catch (RuntimeException again) {
          e.addSuppressed(again);
        }
        throw e;
      }
    }
  }

  @Override
  public FencingToken acquire(Duration timeout) throws InterruptedException, TimeoutException {
    return tryAcquire(timeout)
        .orElseThrow(
            () ->
                new TimeoutException(
                    "etcd lock "
                        + lockName
                        + " for "
                        + resource
                        + " not acquired within "
                        + timeout));
  }

  @Override
  public Optional<FencingToken> token() {
    Holding h = holding;
    return h != null && h.alive() ? Optional.ofNullable(h.token) : Optional.empty();
  }

  @Override
  public boolean isHeld() {
    Holding h = holding;
    return h != null && h.alive();
  }

  /**
   * Sends one keep-alive for the current holding now (the background ones come every third of the
   * TTL); completes when etcd answered. For tests.
   */
  CompletableFuture<?> renewNow() {
    Holding h = holding;
    return h == null ? CompletableFuture.completedFuture(null) : h.renew();
  }

  /** Revokes the holding's lease, which deletes the lock key at once. */
  @Override
  public void release() {
    synchronized (guard) {
      Holding h = holding;
      if (h == null) {
        return;
      }
      holding = null;
      h.end(client, requestTimeout);
    }
  }

  @Override
  public void close() {
    closed = true;
    release();
  }

  @Override
  public String toString() {
    Holding h = holding;
    return "EtcdFencedLock["
        + resource
        + " at "
        + lockName
        + (h == null ? ", not held" : ", token " + Objects.requireNonNull(h.token).value())
        + "]";
  }

  private <T> T call(String what, CompletableFuture<T> future) throws InterruptedException {
    try {
      return future.get(requestTimeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      throw new FencedLockException(
          "could not " + what + " for the etcd lock " + lockName, e.getCause());
    } catch (TimeoutException e) {
      future.cancel(true);
      throw new FencedLockException(
          "etcd did not answer within " + requestTimeout + " to " + what + " for " + lockName, e);
    }
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

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  private static long saturatedNanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE;
    }
  }

  /**
   * One acquisition: its lease, kept alive until released, and what etcd said about it. The
   * keep-alives are sent here, one request at a time ({@code keepAliveOnce}), not by jetcd's
   * keep-alive stream: its replies do not say when the request they answer was sent, and the lease
   * is only known to last its TTL from then.
   */
  private final class Holding {
    final long leaseId;
    @Nullable FencingToken token;
    private volatile boolean lost;
    private volatile boolean ended;
    private volatile @Nullable ScheduledFuture<?> keepAlives;
    private volatile long confirmedUntil; // written under synchronized (this)

    Holding(long leaseId, long confirmedUntil) {
      this.leaseId = leaseId;
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
     * removed at once, not left queued for up to a third of the TTL), or until the client refuses
     * to send (closed): the lease then runs out at its confirmed deadline.
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
     * (replies may come out of order: the latest such moment wins). "Lease not found" (a TTL of
     * zero) is final; other failures leave the lease to its confirmed deadline.
     */
    CompletableFuture<?> renew() {
      long sentAt = nanoTime.getAsLong(); // before the request, so the estimate errs early
      return client
          .getLeaseClient()
          .keepAliveOnce(leaseId)
          .whenComplete(
              (response, failure) -> {
                if (response != null) {
                  extend(sentAt + TimeUnit.SECONDS.toNanos(response.getTTL()));
                } else if (unwrap(failure) instanceof EtcdException e
                    && e.getErrorCode() == ErrorCode.NOT_FOUND) {
                  lost = true; // keepAliveOnce's answer to a TTL of zero
                }
              })
          .exceptionally(failure -> null);
    }

    private synchronized void extend(long until) {
      if (until - confirmedUntil > 0) {
        confirmedUntil = until;
      }
    }

    /** Stops the keep-alives and revokes the lease (deleting the lock key, if any). */
    void end(Client client, Duration timeout) {
      lost = true;
      ended = true;
      ScheduledFuture<?> k = keepAlives;
      if (k != null) {
        k.cancel(false);
      }
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
  }

  /** Configuration of an {@link EtcdFencedLock}; validated by {@link #build()}. */
  public static final class Builder {
    private final Client client;
    private final String resource;
    private @Nullable String lockName;
    private Duration leaseTtl = Duration.ofSeconds(10);
    private Duration requestTimeout = Duration.ofSeconds(10);
    private LongSupplier nanoTime = System::nanoTime;

    private Builder(Client client, String resource) {
      this.client = Objects.requireNonNull(client, "client");
      this.resource = Objects.requireNonNull(resource, "resource");
    }

    /**
     * The etcd lock name (default {@code fencing/locks/<resource>}). Every client locking the
     * resource must use the same name.
     */
    public Builder lockName(String lockName) {
      Objects.requireNonNull(lockName, "lockName");
      if (lockName.isEmpty()) {
        throw new IllegalArgumentException("lockName must not be empty");
      }
      this.lockName = lockName;
      return this;
    }

    /**
     * How long etcd keeps the lock after the last keep-alive it received (default 10 s; whole
     * seconds, 1 s to 1 day). The lock is kept alive in the background while held.
     */
    public Builder leaseTtl(Duration leaseTtl) {
      Objects.requireNonNull(leaseTtl, "leaseTtl");
      if (leaseTtl.compareTo(Duration.ofSeconds(1)) < 0
          || leaseTtl.compareTo(MAX_TTL) > 0
          || leaseTtl.toNanosPart() != 0) {
        throw new IllegalArgumentException(
            "leaseTtl must be whole seconds from 1 s to 1 day, was " + leaseTtl);
      }
      this.leaseTtl = leaseTtl;
      return this;
    }

    /** How long a single request to etcd may take (default 10 s; 1 ms to 1 hour). */
    public Builder requestTimeout(Duration requestTimeout) {
      Objects.requireNonNull(requestTimeout, "requestTimeout");
      if (requestTimeout.compareTo(Duration.ofMillis(1)) < 0
          || requestTimeout.compareTo(Duration.ofHours(1)) > 0) {
        throw new IllegalArgumentException(
            "requestTimeout must be from 1 ms to 1 hour, was " + requestTimeout);
      }
      this.requestTimeout = requestTimeout;
      return this;
    }

    /**
     * The monotonic clock {@link #isHeld()} counts the lease's TTL on ({@link System#nanoTime()}
     * but in tests); how often keep-alives are sent is real time, whatever this clock.
     */
    Builder nanoTime(LongSupplier nanoTime) {
      this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
      return this;
    }

    /**
     * Builds the lock (nothing is sent to etcd yet).
     *
     * @throws IllegalArgumentException if the resource name is malformed
     */
    public EtcdFencedLock build() {
      FencingToken.requireValidResource(resource);
      return new EtcdFencedLock(this, lockName != null ? lockName : "fencing/locks/" + resource);
    }
  }
}
