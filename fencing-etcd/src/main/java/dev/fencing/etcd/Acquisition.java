package dev.fencing.etcd;

import dev.fencing.jdbc.FencedLockException;
import dev.fencing.jdbc.FencingToken;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import io.etcd.jetcd.lock.LockResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One call of {@link EtcdFencedLock#tryAcquire}: the lease it grants, the lock call, the key read
 * back, all before one deadline (real time); and, when it gives up, nothing of it left holding the
 * lock. jetcd's futures cannot stop their requests (cancelling one only drops its reply), so a lock
 * call given up on still completes in etcd once the earlier holders let go: its lease, revoked at
 * once, takes the key with it; a revoke etcd did not confirm is sent again, and the key deleted,
 * when the lock call completes. A grant answered too late is revoked when the answer comes.
 */
final class Acquisition {
  private static final Logger LOG = LoggerFactory.getLogger(Acquisition.class);
  private static final long LONGEST_WAIT = Long.MAX_VALUE / 4; // nanos: no overflow of the deadline

  private final Client client;
  private final String resource;
  private final String lockName;
  private final long ttlSeconds;
  private final Duration requestTimeout;
  private final LongSupplier nanoTime;
  private final boolean watchKey;
  private final long deadline; // System.nanoTime()

  Acquisition(
      Client client,
      String resource,
      String lockName,
      long ttlSeconds,
      Duration requestTimeout,
      LongSupplier nanoTime,
      boolean watchKey,
      long waitNanos) {
    this.client = client;
    this.resource = resource;
    this.lockName = lockName;
    this.ttlSeconds = ttlSeconds;
    this.requestTimeout = requestTimeout;
    this.nanoTime = nanoTime;
    this.watchKey = watchKey;
    this.deadline = System.nanoTime() + Math.min(waitNanos, LONGEST_WAIT);
  }

  /**
   * The holding, with its token; empty if the deadline passed first (its lease then revoked, etcd
   * has confirmed it). {@code waiting} is told of the holding while the lock call is waited for.
   *
   * @throws FencedLockException if etcd failed, or the lease was lost while acquiring; its lease
   *     revoked (or, if etcd did not confirm that, revoked when the lock call completes)
   */
  Optional<LeaseHolding> run(Consumer<@Nullable LeaseHolding> waiting) throws InterruptedException {
    if (remaining() <= 0) {
      return Optional.empty(); // nothing to wait for: no lease granted only to be revoked
    }
    long sentAt = nanoTime.getAsLong(); // before the request: the TTL starts after it
    CompletableFuture<LeaseGrantResponse> granting = client.getLeaseClient().grant(ttlSeconds);
    LeaseGrantResponse grant;
    try {
      grant = await("grant a lease", granting);
    } catch (InterruptedException | RuntimeException e) {
      granting.thenAccept(g -> revokeLater(g.getID(), null));
      throw e;
    }
    if (grant == null) {
      granting.thenAccept(g -> revokeLater(g.getID(), null));
      return Optional.empty();
    }
    long ttlNanos = TimeUnit.SECONDS.toNanos(grant.getTTL());
    LeaseHolding h = new LeaseHolding(client, nanoTime, grant.getID(), ttlNanos, sentAt + ttlNanos);
    h.keepAliveEvery(TimeUnit.SECONDS.toNanos(ttlSeconds) / 3);
    waiting.accept(h);
    CompletableFuture<LockResponse> locking = CompletableFuture.completedFuture(null);
    try {
      locking = client.getLockClient().lock(bytes(lockName), h.leaseId);
      if (hold(h, locking)) {
        return Optional.of(h);
      }
    } catch (InterruptedException | RuntimeException e) {
      try {
        giveUp(h, locking);
      } catch (RuntimeException again) {
        e.addSuppressed(again);
      }
      throw e;
    } finally {
      waiting.accept(null);
    }
    giveUp(h, locking);
    return Optional.empty();
  }

  /** Waits for the lock and reads its key back; false if the deadline passed first. */
  private boolean hold(LeaseHolding h, CompletableFuture<LockResponse> locking)
      throws InterruptedException {
    try {
      // the wait ends early if the lease is lost meanwhile: it could never be held
      CompletableFuture.anyOf(locking, h.lostOrEnded()).get(remaining(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      return false;
    } catch (ExecutionException e) {
      throw new FencedLockException(
          "could not acquire the etcd lock " + lockName + " for " + resource, e.getCause());
    }
    requireAlive(h);
    ByteSequence key = locking.join().getKey();
    GetResponse read = await("read the lock key back", client.getKVClient().get(key));
    if (read == null) {
      return false;
    }
    List<KeyValue> kvs = read.getKvs();
    if (kvs.isEmpty() || kvs.get(0).getLease() != h.leaseId) {
      throw new FencedLockException(
          "lock key "
              + key.toString(StandardCharsets.UTF_8)
              + " is gone right after acquisition: lease "
              + Long.toHexString(h.leaseId)
              + " ended; not held");
    }
    requireAlive(h); // the lock call or the read-back may have outlasted the lease
    if (watchKey) {
      // a deletion, or an overwrite by anyone else, after the read ends it
      h.watchKey(
          key, read.getHeader().getRevision() + 1, kvs.get(0).getCreateRevision(), requestTimeout);
      requireAlive(h); // a watch the client refused to start ends the holding
    }
    h.token = FencingToken.of(resource, kvs.get(0).getCreateRevision());
    return true;
  }

  /**
   * Refuses to report as acquired a lease that is no longer known alive: etcd refused a keep-alive,
   * one went unanswered for a whole TTL, or none was confirmed for a whole TTL (etcd may have
   * expired it and deleted the key). The caller revokes it.
   */
  private void requireAlive(LeaseHolding h) {
    if (!h.alive()) {
      throw new FencedLockException(
          "lease "
              + Long.toHexString(h.leaseId)
              + " of the etcd lock "
              + lockName
              + " for "
              + resource
              + " was lost while acquiring (a keep-alive refused, none confirmed for a whole TTL,"
              + " or its key could not be watched); not held");
    }
  }

  /**
   * Revokes the lease now (its key, waiting or holding, goes with it: etcd refuses a lock call's
   * put for a revoked lease). If etcd does not confirm within the request timeout, the lock call
   * may still complete later and hold the lock until the lease expires: it is revoked again, and
   * its key deleted, when the call completes.
   */
  private void giveUp(LeaseHolding h, CompletableFuture<LockResponse> locking) {
    try {
      h.end(client, requestTimeout);
    } catch (RuntimeException e) {
      locking.whenComplete((lock, failure) -> revokeLater(h.leaseId, lock));
      throw e;
    }
  }

  /** Revokes the lease in the background; if etcd refuses, deletes the lock's key, if any. */
  private void revokeLater(long leaseId, @Nullable LockResponse lock) {
    client
        .getLeaseClient()
        .revoke(leaseId)
        .whenComplete(
            (revoked, failure) -> {
              if (failure == null || String.valueOf(failure).contains("lease not found")) {
                return;
              }
              if (lock == null) {
                LOG.warn(
                    "could not revoke lease {} of the etcd lock {}; it expires in its TTL",
                    Long.toHexString(leaseId),
                    lockName,
                    failure);
                return;
              }
              client
                  .getKVClient()
                  .delete(lock.getKey())
                  .whenComplete(
                      (deleted, again) -> {
                        if (again != null) {
                          LOG.warn(
                              "could not revoke lease {} nor delete its key {} of the etcd lock"
                                  + " {}; etcd deletes the key when the lease expires",
                              Long.toHexString(leaseId),
                              lock.getKey().toString(StandardCharsets.UTF_8),
                              lockName,
                              again);
                        }
                      });
            });
  }

  /**
   * The future's value, waited for until the deadline or the request timeout, whichever comes
   * first; null if the deadline came first.
   */
  private <T> @Nullable T await(String what, CompletableFuture<T> future)
      throws InterruptedException {
    long remaining = remaining();
    long bound = Math.min(remaining, requestTimeout.toNanos());
    try {
      return future.get(Math.max(bound, 0), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      throw new FencedLockException(
          "could not " + what + " for the etcd lock " + lockName, e.getCause());
    } catch (TimeoutException e) {
      if (remaining <= requestTimeout.toNanos()) {
        return null;
      }
      throw new FencedLockException(
          "etcd did not answer within " + requestTimeout + " to " + what + " for " + lockName, e);
    }
  }

  private long remaining() {
    return deadline - System.nanoTime();
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }
}
