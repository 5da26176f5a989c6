package dev.fencing.benchmark.compare;

import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencedLock;
import dev.fencing.jdbc.FencingToken;
import java.math.BigInteger;
import java.sql.SQLException;
import java.util.Optional;

/**
 * A hold of the ZooKeeper and etcd rows: a {@link FencedLock} whose client reaches its lock service
 * through a {@link FreezableProxy} (frozen while the client "pauses"), writing through {@link
 * FencedDataSource} with the lock's token bound.
 */
final class RelayedHold implements Approach.Hold {
  private final FencedDataSource fenced;
  private final FreezableProxy proxy;
  private final AutoCloseable client;
  private final FencedLock lock;
  private final FencingToken token;

  RelayedHold(
      FencedDataSource fenced,
      FreezableProxy proxy,
      AutoCloseable client,
      FencedLock lock,
      FencingToken token) {
    this.fenced = fenced;
    this.proxy = proxy;
    this.client = client;
    this.lock = lock;
    this.token = token;
  }

  /** Client 1's process stops: nothing it sends reaches the lock service any more. */
  void freeze() {
    proxy.freeze();
  }

  FencedLock lock() {
    return lock;
  }

  long tokenValue() {
    return token.value();
  }

  @Override
  public Optional<BigInteger> token() {
    return Optional.of(BigInteger.valueOf(token.value()));
  }

  /** The process resumes, unaware, and writes with the token it was given. */
  @Override
  public Approach.Outcome write(Approach.Write write) throws SQLException {
    proxy.thaw();
    return Writes.fenced(fenced, token, write);
  }

  /**
   * Releases the lock (on the acquiring thread: Curator's mutex is per thread), then closes the
   * client and its relay. A zombie's session or lease is gone, and its lock node or key with it:
   * there is nothing left to release, which the locks report as an exception ignored here.
   */
  @Override
  public void release() throws Exception {
    proxy.thaw();
    try {
      lock.close();
    } catch (RuntimeException e) {
      // a zombie's lock vanished with its session or lease
    } finally {
      try {
        client.close();
      } finally {
        proxy.close();
      }
    }
  }
}
