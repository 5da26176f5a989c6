package dev.fencing.etcd;

import dev.fencing.jdbc.FencedLock;
import dev.fencing.jdbc.FencedLockException;
import dev.fencing.jdbc.FencingToken;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
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
 *       etcd's own expiry while the two clocks run at the same pace. A keep-alive etcd leaves
 *       unanswered for a whole TTL from when it was sent (etcd hung, the network silently dropping
 *       packets), with no later keep-alive confirmed meanwhile, ends the holding as lost, for good:
 *       {@link #isHeld()} stays false and no more keep-alives are sent.
 *   <li><b>Key deleted or overwritten.</b> A watch on the lock key ends the holding as lost when
 *       the key is deleted by anyone (another client kicking a stuck holder while its lease lives):
 *       the next contender then holds the lock, and {@link #isHeld()} turns false. So does a put on
 *       the key by anyone else (by hand, another client): etcd keeps an overwritten key's create
 *       revision but attaches it to the put's lease (or none), so this holding's keep-alives no
 *       longer keep it nor its release delete it; a key deleted and put again has a new create
 *       revision, not this token. The lock then stays taken by that key until its new lease ends or
 *       someone deletes it. A watch that ends (etcd restarting, its revision compacted away, its
 *       stream closed with an error) is replaced after the key is read again: still this holding's,
 *       it is watched from the revision after the read; gone or overwritten meanwhile, the holding
 *       is lost; unreadable once the lease is not known alive, lost too. A holding is never left
 *       held with nobody watching its key.
 *   <li>After the lock call returns, the key is read back: the token is only returned if the key
 *       still exists, belongs to this lease, and the lease is still known alive (a lease lost
 *       during the wait ends the acquisition with {@link FencedLockException}).
 *   <li>Limits: an etcd cluster restored from an old snapshot, or a new cluster, can hand out
 *       smaller revisions; PostgreSQL then refuses every new holder as stale (safe, but stuck)
 *       until an operator runs {@code fencing.reset_external(resource, <the new cluster's
 *       revision>)} once every holder of the old cluster is known to be gone (README, "Limits of
 *       external tokens").
 * </ul>
 *
 * <p>Each acquisition gets its own lease, revoked by {@link #release()} (which deletes the key at
 * once) and by an acquisition that does not return a token: timed out, interrupted, failed, or its
 * lease lost while waiting (so an abandoned wait cannot turn into a hidden hold; a revoke etcd did
 * not confirm is sent again, and the key deleted, when etcd's lock call for it completes). One lock
 * object holds at most one acquisition at a time (a lost one does not count); any thread may
 * release it ({@code release()} releases what is held when it is called, never what an acquisition
 * in progress on another thread is about to return). {@code close()} waits for an acquisition in
 * progress on another thread, which then revokes its lease and throws {@link IllegalStateException}
 * instead of returning a token.
 */
public final class EtcdFencedLock implements FencedLock {
  private static final Duration MAX_TTL = Duration.ofDays(1);

  private final Client client;
  private final String resource;
  private final String lockName;
  private final long ttlSeconds;
  private final Duration requestTimeout;
  private final LongSupplier nanoTime;
  private final boolean watchKey;
  private final Object guard = new Object();
  private volatile @Nullable LeaseHolding holding;
  private volatile @Nullable LeaseHolding acquiring; // between the grant and the return
  private volatile boolean closed;

  private EtcdFencedLock(Builder builder, String lockName) {
    this.client = builder.client;
    this.resource = builder.resource;
    this.lockName = lockName;
    this.ttlSeconds = builder.leaseTtl.toSeconds();
    this.requestTimeout = builder.requestTimeout;
    this.nanoTime = builder.nanoTime;
    this.watchKey = builder.watchKey;
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
   * The lease of the current holding, or empty if not held (as {@link #isHeld()}: a lost holding's
   * lease, revoked or expired in etcd or no longer its key's, is not handed out): for diagnostics
   * and tests (revoking it is how etcd takes the lock away).
   */
  public Optional<Long> leaseId() {
    LeaseHolding h = holding;
    return h != null && h.alive() ? Optional.of(h.leaseId) : Optional.empty();
  }

  /**
   * {@inheritDoc}
   *
   * <p>{@code wait} is a deadline (real time) for the whole acquisition: granting the lease,
   * waiting for the lock, reading the key back. The grant and the read-back are also bounded by the
   * builder's request timeout: if it runs out first, {@link FencedLockException}; if the deadline
   * does, empty. A wait of zero sends nothing to etcd and acquires nothing. Outside the deadline,
   * each at most the request timeout: the keep-alive asking etcd about a current holding and the
   * revoke of a lost one (before), and the revoke of an acquisition that gives up (after), waited
   * for so that when this returns etcd has confirmed that nothing of it is left; unconfirmed, this
   * throws {@link FencedLockException} and the revoke is sent again (the key deleted) when etcd's
   * lock call for it completes. A grant answered after the deadline is revoked when its answer
   * comes.
   *
   * <p>A holding whose lease is lost (not {@link #isHeld()}, or refused by etcd when asked with one
   * keep-alive here) does not count as held: it is revoked and a new acquisition starts.
   *
   * <p>A token is only returned for a lease still known alive when the key was read back (the same
   * test as {@link #isHeld()}): a lease lost while waiting (a keep-alive refused, or unanswered for
   * a whole TTL from when it was sent) ends the wait at once, and a lease whose TTL ran out
   * unconfirmed is not reported either. Both throw {@link FencedLockException} (a failure of the
   * lock service, not contention) after revoking the lease, which deletes its key: nothing is held
   * and the lock object can acquire again.
   *
   * @throws FencedLockException if etcd failed or the lease was lost while acquiring; not held
   * @throws IllegalStateException if held (its lease alive as far as etcd said) or closed (also
   *     when closed while this waited: its lease then revoked)
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
      LeaseHolding current = holding;
      if (current != null) {
        if (stillAlive(current)) {
          throw new IllegalStateException(
              "lock on " + resource + " is already held with token " + current.token);
        }
        holding = null; // lost: not held; whatever etcd still keeps of it goes
        current.end(client, requestTimeout);
      }
      Optional<LeaseHolding> acquired =
          new Acquisition(
                  client,
                  resource,
                  lockName,
                  ttlSeconds,
                  requestTimeout,
                  nanoTime,
                  watchKey,
                  saturatedNanos(wait))
              .run(h -> acquiring = h);
      if (acquired.isPresent() && closed) {
        // close() came while this waited (it waits for the guard): not acquired, nothing kept
        acquired.get().end(client, requestTimeout);
        throw new IllegalStateException(
            "lock on " + resource + " was closed while acquiring; its lease revoked, not held");
      }
      holding = acquired.orElse(null);
      return acquired.map(h -> Objects.requireNonNull(h.token));
    }
  }

  /**
   * Whether a holding is still alive, as far as etcd says now: one keep-alive is sent (bounded by
   * the request timeout; unanswered, the holding counts as alive), so that a lease etcd ended
   * (revoked, expired) does not make the lock "already held".
   */
  private boolean stillAlive(LeaseHolding h) throws InterruptedException {
    if (!h.alive()) {
      return false;
    }
    try {
      h.renew().get(requestTimeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (ExecutionException | TimeoutException e) {
      // renew() completes normally; unanswered in time: the lease stays as last confirmed
    }
    return h.alive();
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
    LeaseHolding h = holding;
    return h != null && h.alive() ? Optional.ofNullable(h.token) : Optional.empty();
  }

  @Override
  public boolean isHeld() {
    LeaseHolding h = holding;
    return h != null && h.alive();
  }

  /**
   * Sends one keep-alive for the current holding now (the background ones come every third of the
   * TTL); completes when etcd answered. For tests.
   */
  CompletableFuture<?> renewNow() {
    LeaseHolding h = holding;
    return h == null ? CompletableFuture.completedFuture(null) : h.renew();
  }

  /**
   * Completes when the lease of the acquisition in progress is lost or ended (the acquisition
   * waits); null if none is in progress. For tests.
   */
  @Nullable CompletableFuture<?> acquisitionLost() {
    LeaseHolding h = acquiring;
    return h == null ? null : h.lostOrEnded();
  }

  /** The current holding, lost or not; null if none. For tests. */
  @Nullable LeaseHolding holding() {
    return holding;
  }

  /** Whether the current holding's keep-alives are still scheduled. For tests. */
  boolean keepsAlive() {
    LeaseHolding h = holding;
    return h != null && h.keepingAlive();
  }

  /**
   * Revokes the holding's lease, which deletes the lock key at once. Releases what is held when it
   * is called: during an acquisition on another thread nothing is (the acquisition ended a lost
   * holding before it started), so this returns at once and leaves what that acquisition returns
   * held.
   */
  @Override
  public void release() {
    LeaseHolding h = holding;
    if (h == null) {
      return; // not held, or an acquisition in progress: not this call's to release
    }
    synchronized (guard) {
      if (holding != h) {
        return; // ended meanwhile (released, or replaced by a later acquisition)
      }
      holding = null;
      h.end(client, requestTimeout);
    }
  }

  @Override
  public void close() {
    closed = true;
    synchronized (guard) {
      // waits for an acquisition in progress: it sees closed and revokes what it got
      release();
    }
  }

  @Override
  public String toString() {
    LeaseHolding h = holding;
    return "EtcdFencedLock["
        + resource
        + " at "
        + lockName
        + (h == null ? ", not held" : ", token " + Objects.requireNonNull(h.token).value())
        + "]";
  }

  /**
   * {@code fencing/locks/<resource>} with each {@code /} of the resource written {@code %2F}
   * ({@code %} is not a resource character, so distinct resources get distinct names): etcd's lock
   * waits for every key under {@code <name>/}, and {@code fencing/locks/a/} would take in the keys
   * of {@code a/b}'s holders, so that a holder of {@code a/b} kept {@code a} from being acquired.
   */
  static String defaultLockName(String resource) {
    return "fencing/locks/" + resource.replace("/", "%2F");
  }

  private static long saturatedNanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE;
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
    private boolean watchKey = true;

    private Builder(Client client, String resource) {
      this.client = Objects.requireNonNull(client, "client");
      this.resource = Objects.requireNonNull(resource, "resource");
    }

    /**
     * The etcd lock name (default {@code fencing/locks/<resource>}, each {@code /} of the resource
     * written {@code %2F}). Every client locking the resource must use the same name. No lock's
     * {@code <name>/} may begin another's: etcd's lock waits for every key under {@code <name>/}.
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
     * Whether a holding watches its lock key (default true): off only in tests of the keep-alive's
     * own reckoning, which the watch would otherwise overtake.
     */
    Builder watchKey(boolean watchKey) {
      this.watchKey = watchKey;
      return this;
    }

    /**
     * Builds the lock (nothing is sent to etcd yet).
     *
     * @throws IllegalArgumentException if the resource name is malformed
     */
    public EtcdFencedLock build() {
      FencingToken.requireValidResource(resource);
      return new EtcdFencedLock(this, lockName != null ? lockName : defaultLockName(resource));
    }
  }
}
