package dev.fencing.jdbc;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeoutException;

/**
 * A lock held in another service (ZooKeeper, etcd) whose every acquisition yields a {@link
 * FencingToken} greater than the tokens of all earlier holders; PostgreSQL compares it. The
 * implementations are {@code ZooKeeperFencedLock} (fencing-zookeeper) and {@code EtcdFencedLock}
 * (fencing-etcd); the lease of this module, {@link LeaseClient}, is the one to use when PostgreSQL
 * should also issue the tokens.
 *
 * <pre>{@code
 * fencedDataSource.createExternalResource("ledger");          // once: tokens come from elsewhere
 * try (FencedLock lock = ZooKeeperFencedLock.builder(curator, "ledger").build()) {
 *   FencingToken token = lock.acquire(Duration.ofSeconds(10));
 *   try (FencingScope scope = Fencing.bind(token)) {
 *     ... writes through the FencedDataSource are checked against token ...
 *   }
 * }                                                            // close() releases
 * }</pre>
 *
 * <h2>Tokens from elsewhere: fenced at the first write</h2>
 *
 * The resource must be external ({@link FencedDataSource#createExternalResource(String)}). Unlike
 * {@link LeaseClient}, whose acquisition advances {@code max_seen} in PostgreSQL at once (eager
 * fencing), an external token raises {@code max_seen} only when its holder's first fenced write
 * checks it. Until then the previous holder's token is still accepted: a zombie's transaction that
 * passed its check before the new holder's first write may commit, and the new holder's first write
 * waits for it (and for any other open transaction of the old token), then advances. From that
 * moment every transaction with an older token is refused ({@link StaleFencingTokenException}). To
 * fence the previous holder off right after acquiring, call {@link
 * FencedDataSource#fence(FencingToken)}. The README's "ZooKeeper and etcd" section describes the
 * handover at each isolation level.
 *
 * <p>Contention is not an error: {@link #tryAcquire(Duration)} returns empty. A failure of the lock
 * service (unreachable, session lost while acquiring) throws {@link FencedLockException}; the lock
 * is then not held.
 */
public interface FencedLock extends AutoCloseable {
  /** The PostgreSQL resource the tokens are for (the name given to {@code Fencing.bind}). */
  String resource();

  /**
   * Acquires the lock, waiting at most {@code wait} for the current holder to let go.
   *
   * @return the new holding's token, or empty if the lock was not free in time
   * @throws IllegalStateException if this lock is already held (or closed)
   * @throws FencedLockException if the lock service failed; the lock is not held
   */
  Optional<FencingToken> tryAcquire(Duration wait) throws InterruptedException;

  /**
   * Acquires the lock, waiting at most {@code timeout}.
   *
   * @return the new holding's token
   * @throws TimeoutException if the lock was not free in time
   * @throws IllegalStateException if this lock is already held (or closed)
   * @throws FencedLockException if the lock service failed; the lock is not held
   */
  FencingToken acquire(Duration timeout) throws InterruptedException, TimeoutException;

  /** The current holding's token, or empty if not held (never acquired, released, or lost). */
  Optional<FencingToken> token();

  /**
   * Whether this lock is held as far as this client knows: acquired, not released, and the lock
   * service has not dropped it (ZooKeeper session expired, etcd lease gone). A paused client cannot
   * know, which is why the database checks the token.
   */
  boolean isHeld();

  /**
   * Releases the lock if held (idempotent). The token stays valid at the resource until a later
   * holder's first write.
   *
   * @throws FencedLockException if the lock service could not be told; the lock is then released
   *     when the session or lease ends
   */
  void release();

  /** Releases the lock if held, then stops this lock object; it cannot be acquired again. */
  @Override
  void close();
}
