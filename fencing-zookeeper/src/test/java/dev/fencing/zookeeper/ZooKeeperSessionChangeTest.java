package dev.fencing.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencing.jdbc.FencedLockException;
import dev.fencing.jdbc.FencingToken;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The client's session changing in the middle of an acquisition: the client gave its session up
 * (Curator does so by itself after a disconnection longer than the session timeout) and connected
 * in a new one, while ZooKeeper still keeps the old session, and its lock node, until it times the
 * session out. A node of a session the client has left is not the client's to hold.
 */
class ZooKeeperSessionChangeTest {
  @RegisterExtension static final ZooKeeperFixture zk = new ZooKeeperFixture("zk-session");

  private static final Duration PATIENCE = ZooKeeperFixture.PATIENCE;
  private static final Duration SHORT = Duration.ofMillis(300);

  private CuratorFramework client() throws InterruptedException {
    // the server keeps a left session for the whole test
    return zk.client(b -> b.sessionTimeoutMs(60_000));
  }

  /**
   * Makes {@code client} leave its session as Curator does after a long disconnection (the session
   * expired as far as the client knows; ZooKeeper is not told and keeps the session and its
   * ephemeral nodes until its timeout), and returns once the client is connected in a new session.
   * Returns the session left.
   */
  static long leaveSession(CuratorFramework client) throws Exception {
    CountDownLatch reconnected = new CountDownLatch(1);
    client
        .getConnectionStateListenable()
        .addListener(
            (c, state) -> {
              if (state == ConnectionState.RECONNECTED) {
                reconnected.countDown();
              }
            });
    ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
    long left = zk.getSessionId();
    zk.getTestable().injectSessionExpiration();
    assertThat(reconnected.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
    long now = client.getZookeeperClient().getZooKeeper().getSessionId();
    assertThat(now).isNotZero().isNotEqualTo(left);
    return left;
  }

  private String resource() {
    return zk.resource();
  }

  /**
   * The session read in one session, the node read back in the next: the node, still kept by
   * ZooKeeper for the left session, matched the session read first, and the lock returned a token
   * for a node of a session the client had already left (isHeld() false at once; the node gone
   * whenever ZooKeeper timed the session out, the client unable to keep it).
   */
  @Test
  void aSessionChangeBetweenTheSessionReadAndTheReadBackIsNotAnAcquisition() throws Exception {
    CuratorFramework client = client();
    CuratorFramework other = client();
    String resource = resource();
    try (ZooKeeperFencedLock lock = ZooKeeperFencedLock.builder(client, resource).build();
        ZooKeeperFencedLock next = ZooKeeperFencedLock.builder(other, resource).build()) {
      AtomicBoolean once = new AtomicBoolean();
      AtomicLong left = new AtomicLong();
      lock.afterSessionRead(
          () -> {
            if (once.compareAndSet(false, true)) {
              try {
                left.set(leaveSession(client));
              } catch (Exception e) {
                throw new AssertionError(e);
              }
            }
          });
      assertThatThrownBy(() -> lock.tryAcquire(PATIENCE))
          .isInstanceOf(FencedLockException.class)
          .hasMessageContaining("session");
      assertThat(once).isTrue();
      assertThat(lock.isHeld()).isFalse();
      assertThat(lock.token()).isEmpty();
      // the left session's node was deleted on the way out: the lock is free now, not only once
      // ZooKeeper times the left session out
      assertThat(other.getChildren().forPath(lock.lockPath())).isEmpty();
      assertThat(next.tryAcquire(SHORT)).isPresent();
      next.release();
      // and the lock object acquires again, in the new session
      assertThat(lock.tryAcquire(PATIENCE)).isPresent();
      assertThat(lock.isHeld()).isTrue();
      assertThat(left.get())
          .isNotEqualTo(client.getZookeeperClient().getZooKeeper().getSessionId());
    }
  }

  /**
   * A waiting contender's client leaves its session: ZooKeeper keeps the waiting node of the left
   * session, which Curator, now in the new session, finds first once the holder lets go. The node
   * is not the client's: no token, and the node is deleted so that the lock is free at once.
   */
  @Test
  void aWaiterWhoseClientLeftItsSessionIsNotHandedTheLeftSessionsNode() throws Exception {
    CuratorFramework holderClient = client();
    CuratorFramework waiterClient = client();
    String resource = resource();
    try (ZooKeeperFencedLock holder = ZooKeeperFencedLock.builder(holderClient, resource).build();
        ZooKeeperFencedLock waiter = ZooKeeperFencedLock.builder(waiterClient, resource).build()) {
      holder.acquire(PATIENCE);
      CompletableFuture<Optional<FencingToken>> waiting =
          ZooKeeperFixture.tryAcquireAsync(waiter, PATIENCE);
      await()
          .atMost(PATIENCE)
          .until(() -> holderClient.getChildren().forPath(holder.lockPath()).size() == 2);
      long left = leaveSession(waiterClient);
      // the left session's waiting node is still there, and still behind the holder's
      assertThat(holderClient.getChildren().forPath(holder.lockPath())).hasSize(2);
      holder.release();
      assertThatThrownBy(() -> waiting.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
          .hasCauseInstanceOf(FencedLockException.class)
          .hasMessageContaining(Long.toHexString(left));
      assertThat(waiter.isHeld()).isFalse();
      assertThat(holderClient.getChildren().forPath(holder.lockPath())).isEmpty();
      assertThat(holder.tryAcquire(SHORT)).isPresent();
    }
  }

  /**
   * close() while another thread waits for the lock: close() returned with nothing held, and the
   * wait then acquired, so that the closed lock object held the lock (for the whole session, if the
   * waiting thread took close() at its word). The acquisition that completes after close() is
   * released at once and refused as closed.
   */
  @Test
  void anAcquisitionCompletingAfterCloseIsReleasedNotHeld() throws Exception {
    CuratorFramework holderClient = client();
    CuratorFramework waiterClient = client();
    String resource = resource();
    try (ZooKeeperFencedLock holder = ZooKeeperFencedLock.builder(holderClient, resource).build()) {
      ZooKeeperFencedLock waiter = ZooKeeperFencedLock.builder(waiterClient, resource).build();
      holder.acquire(PATIENCE);
      CompletableFuture<Optional<FencingToken>> waiting =
          ZooKeeperFixture.tryAcquireAsync(waiter, PATIENCE);
      await()
          .atMost(PATIENCE)
          .until(() -> holderClient.getChildren().forPath(holder.lockPath()).size() == 2);
      waiter.close(); // nothing held yet
      holder.release();
      assertThatThrownBy(() -> waiting.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
          .hasCauseInstanceOf(IllegalStateException.class)
          .hasMessageContaining("closed");
      assertThat(waiter.isHeld()).isFalse();
      assertThat(holderClient.getChildren().forPath(holder.lockPath())).isEmpty();
      assertThat(holder.tryAcquire(SHORT)).isPresent();
    }
  }

  /**
   * The client gave its session up (Curator, after a disconnection longer than the session timeout)
   * and is not connected in a new one yet: the holding's session is one the client can never
   * resume, so it is not held (isHeld() says so) and must not make the lock "already held" ({@code
   * IllegalStateException}, which reads as misuse) while the client reconnects. The next
   * acquisition forgets it and fails as a lock-service failure instead, which a caller retries.
   */
  @Test
  void aHoldingOfASessionTheClientLeftIsNotAlreadyHeldWhileTheClientReconnects() throws Exception {
    CuratorFramework client =
        zk.client(
            b ->
                b.sessionTimeoutMs(60_000)
                    .connectionTimeoutMs(500)
                    .retryPolicy(new RetryNTimes(0, 0))); // no retries: fail fast while it is down
    ZooKeeperFencedLock lock = ZooKeeperFencedLock.builder(client, resource()).build();
    lock.acquire(PATIENCE);
    ZooKeeper held = client.getZookeeperClient().getZooKeeper();
    long session = held.getSessionId();
    zk.server().stop();
    try {
      held.getTestable().injectSessionExpiration(); // as Curator does after the session timeout
      await()
          .atMost(PATIENCE)
          .until(() -> client.getZookeeperClient().getZooKeeper().getSessionId() != session);
      assertThat(lock.isHeld()).isFalse();
      assertThatThrownBy(() -> lock.tryAcquire(Duration.ZERO))
          .isInstanceOf(FencedLockException.class)
          .hasMessageContaining("could not acquire");
    } finally {
      zk.server().restart();
    }
  }
}
