package dev.fencing.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencing.jdbc.FencingToken;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link ZooKeeperFencedLock} used as users do, rightly and wrongly: what it says is what ZooKeeper
 * holds. Most cases pin behaviour found sound; those whose javadoc tells what went wrong were red
 * before their fix (docs/ARCHITECTURE.md, "Attacked as a zombie and misused").
 */
class ZooKeeperMisuseTest {
  @RegisterExtension static final ZooKeeperFixture zk = new ZooKeeperFixture("zk-misuse");

  private static final Duration PATIENCE = ZooKeeperFixture.PATIENCE;
  private static final Duration SHORT = Duration.ofMillis(300);

  private CuratorFramework client(@Nullable String namespace) throws InterruptedException {
    return zk.client(b -> b.namespace(namespace));
  }

  private static String resource() {
    return zk.resource();
  }

  @Test
  void notHeldMeansNoTokenWhateverTheReason() throws Exception {
    CuratorFramework client = client(null);
    ZooKeeperFencedLock lock = ZooKeeperFencedLock.builder(client, resource()).build();
    assertThat(lock.isHeld()).isFalse();
    assertThat(lock.token()).isEmpty();
    lock.release(); // idempotent, nothing held
    FencingToken token = lock.acquire(PATIENCE);
    assertThat(lock.token()).contains(token);
    lock.release();
    assertThat(lock.isHeld()).isFalse();
    assertThat(lock.token()).isEmpty();
    assertThat(lock.toString()).contains("not held");
    lock.close();
    assertThat(lock.token()).isEmpty();
  }

  /**
   * Disconnected (Curator's SUSPENDED): cannot know, so not held; same session back, same token.
   */
  @Test
  void whileDisconnectedTheLockSaysNotHeldAndGetsItsTokenBackInTheSameSession() throws Exception {
    CuratorFramework client = client(null);
    try (ZooKeeperFencedLock lock = ZooKeeperFencedLock.builder(client, resource()).build()) {
      FencingToken token = lock.acquire(PATIENCE);
      zk.server().stop();
      try {
        await().atMost(PATIENCE).until(() -> !lock.isHeld());
        assertThat(lock.token()).isEmpty();
        assertThatThrownBy(() -> lock.tryAcquire(Duration.ZERO))
            .as("the client cannot know: the holding still counts")
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("already held");
      } finally {
        zk.server().restart();
      }
      await().atMost(PATIENCE).until(lock::isHeld);
      assertThat(lock.token()).contains(token);
    }
  }

  /** Curator's reentrancy is per mutex object: a second lock object is a second contender. */
  @Test
  void twoLockObjectsOnOnePathAreTwoContendersEvenOnOneThread() throws Exception {
    CuratorFramework client = client(null);
    String resource = resource();
    try (ZooKeeperFencedLock first = ZooKeeperFencedLock.builder(client, resource).build();
        ZooKeeperFencedLock second = ZooKeeperFencedLock.builder(client, resource).build()) {
      FencingToken token = first.acquire(PATIENCE);
      assertThat(second.tryAcquire(SHORT)).isEmpty();
      assertThat(client.getChildren().forPath(first.lockPath())).hasSize(1);
      assertThatThrownBy(() -> first.tryAcquire(SHORT))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("already held with token " + token);
      first.release();
      assertThat(second.tryAcquire(SHORT))
          .hasValueSatisfying(t -> assertThat(t).isNotEqualTo(token));
    }
  }

  @Test
  void aNamespacedClientLocksAndNoticesItsNodeDeleted() throws Exception {
    CuratorFramework client = client("app");
    CuratorFramework other = client("app");
    String resource = resource();
    try (ZooKeeperFencedLock lock = ZooKeeperFencedLock.builder(client, resource).build();
        ZooKeeperFencedLock next = ZooKeeperFencedLock.builder(other, resource).build()) {
      FencingToken token = lock.tryAcquire(Duration.ofSeconds(Long.MAX_VALUE)).orElseThrow();
      assertThat(client(null).checkExists().forPath("/app" + lock.lockPath())).isNotNull();
      List<String> nodes = other.getChildren().forPath(lock.lockPath());
      assertThat(nodes).hasSize(1);
      other.delete().forPath(lock.lockPath() + "/" + nodes.get(0));
      await().atMost(PATIENCE).until(() -> !lock.isHeld());
      assertThat(next.acquire(PATIENCE).value()).isGreaterThan(token.value());
    }
  }

  /** A chroot in the connect string: the same lock as a namespace of that name. */
  @Test
  void aChrootedClientAndANamespacedClientShareTheLock() throws Exception {
    client(null).create().forPath("/chrooted");
    CuratorFramework chrooted = zk.client(b -> b.connectString(zk.connectString() + "/chrooted"));
    String resource = resource();
    try (ZooKeeperFencedLock lock = ZooKeeperFencedLock.builder(chrooted, resource).build();
        ZooKeeperFencedLock next =
            ZooKeeperFencedLock.builder(client("chrooted"), resource).build()) {
      FencingToken token = lock.acquire(PATIENCE);
      assertThat(next.tryAcquire(SHORT)).isEmpty();
      List<String> nodes = chrooted.getChildren().forPath(lock.lockPath());
      assertThat(nodes).hasSize(1);
      chrooted.delete().forPath(lock.lockPath() + "/" + nodes.get(0));
      await().atMost(PATIENCE).until(() -> !lock.isHeld());
      assertThat(next.acquire(PATIENCE).value()).isGreaterThan(token.value());
    }
  }

  @Test
  void anInterruptedWaitLeavesNoNodeBehind() throws Exception {
    CuratorFramework holderClient = client(null);
    CuratorFramework waiterClient = client(null);
    String resource = resource();
    try (ZooKeeperFencedLock holder = ZooKeeperFencedLock.builder(holderClient, resource).build();
        ZooKeeperFencedLock waiter = ZooKeeperFencedLock.builder(waiterClient, resource).build();
        ZooKeeperFencedLock third = ZooKeeperFencedLock.builder(holderClient, resource).build()) {
      holder.acquire(PATIENCE);
      Thread[] waiting = new Thread[1];
      CompletableFuture<Throwable> outcome = new CompletableFuture<>();
      waiting[0] =
          new Thread(
              () -> {
                try {
                  outcome.complete(new AssertionError("acquired " + waiter.tryAcquire(PATIENCE)));
                } catch (Throwable e) {
                  outcome.complete(e);
                }
              });
      waiting[0].start();
      await()
          .atMost(PATIENCE)
          .until(() -> holderClient.getChildren().forPath(holder.lockPath()).size() == 2);
      waiting[0].interrupt();
      assertThat(outcome.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
          .isInstanceOf(InterruptedException.class);
      await()
          .atMost(PATIENCE)
          .until(() -> holderClient.getChildren().forPath(holder.lockPath()).size() == 1);
      holder.release();
      assertThat(third.tryAcquire(PATIENCE)).isPresent();
    }
  }

  /**
   * An interrupted wait throws InterruptedException and, as such a method should, clears the
   * thread's interrupt status: Curator sets it again, so a caller that handled the interrupt and
   * went on had its next ZooKeeper call interrupted at once (a retried tryAcquire threw
   * InterruptedException without waiting, and the release of a read-back cut short by the interrupt
   * could only be done in the background).
   */
  @Test
  void anInterruptedWaitClearsTheInterruptStatusItReports() throws Exception {
    CuratorFramework holderClient = client(null);
    CuratorFramework waiterClient = client(null);
    String resource = resource();
    try (ZooKeeperFencedLock holder = ZooKeeperFencedLock.builder(holderClient, resource).build();
        ZooKeeperFencedLock waiter = ZooKeeperFencedLock.builder(waiterClient, resource).build()) {
      holder.acquire(PATIENCE);
      CompletableFuture<String> outcome = new CompletableFuture<>();
      Thread waiting =
          new Thread(
              () -> {
                try {
                  waiter.tryAcquire(PATIENCE);
                  outcome.complete("acquired");
                } catch (InterruptedException e) {
                  boolean stillInterrupted = Thread.currentThread().isInterrupted();
                  try {
                    outcome.complete(
                        "interrupted, status "
                            + stillInterrupted
                            + ", retry "
                            + waiter.tryAcquire(SHORT));
                  } catch (Throwable again) {
                    outcome.complete(
                        "interrupted, status " + stillInterrupted + ", retry " + again);
                  }
                } catch (Throwable e) {
                  outcome.complete(e.toString());
                }
              });
      waiting.start();
      await()
          .atMost(PATIENCE)
          .until(() -> holderClient.getChildren().forPath(holder.lockPath()).size() == 2);
      waiting.interrupt();
      assertThat(outcome.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
          .isEqualTo("interrupted, status false, retry Optional.empty");
    }
  }

  /**
   * Two threads wait on one lock object; the first to hold loses its node (deleted by hand), and
   * the second then holds. The first thread's release() found Curator's record of its own lost
   * acquisition, forgot the second thread's holding and left its node in place: the lock was held
   * in ZooKeeper for the whole session by a holding nobody could see or release.
   */
  @Test
  void aReleaseOnAThreadWhoseHoldingWasLostLeavesTheOtherThreadsHolding() throws Exception {
    CuratorFramework client = client(null);
    CuratorFramework other = client(null);
    String resource = resource();
    try (ZooKeeperFencedLock first = ZooKeeperFencedLock.builder(other, resource).build();
        ZooKeeperFencedLock shared = ZooKeeperFencedLock.builder(client, resource).build()) {
      first.acquire(PATIENCE);
      ExecutorService x = Executors.newSingleThreadExecutor();
      ExecutorService y = Executors.newSingleThreadExecutor();
      try {
        FencingToken tokenY = xLosesThenYHolds(first, shared, other, x, y);
        assertThat(shared.token()).contains(tokenY);

        CompletableFuture.runAsync(shared::release, x).get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        assertThat(shared.token()).as("Y still holds").contains(tokenY);
        CompletableFuture.runAsync(shared::release, y).get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        assertThat(other.getChildren().forPath(first.lockPath())).isEmpty();
        assertThat(first.tryAcquire(SHORT)).isPresent();
      } finally {
        x.shutdownNow();
        y.shutdownNow();
      }
    }
  }

  /**
   * As above, but the first thread asks again instead of releasing: "already held" while the second
   * holds, and once the second released, the first thread's acquisitions all failed: Curator's
   * record of its lost acquisition made each one re-entrant, handing back the deleted node ("gone
   * right after acquisition"), and each failure's release only counted the reentrancy down.
   */
  @Test
  void aThreadWhoseHoldingWasLostAcquiresAgainOnceTheOtherThreadReleased() throws Exception {
    CuratorFramework client = client(null);
    CuratorFramework other = client(null);
    String resource = resource();
    try (ZooKeeperFencedLock first = ZooKeeperFencedLock.builder(other, resource).build();
        ZooKeeperFencedLock shared = ZooKeeperFencedLock.builder(client, resource).build()) {
      first.acquire(PATIENCE);
      ExecutorService x = Executors.newSingleThreadExecutor();
      ExecutorService y = Executors.newSingleThreadExecutor();
      try {
        FencingToken tokenY = xLosesThenYHolds(first, shared, other, x, y);

        assertThatThrownBy(() -> acquireOn(x, shared).get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
            .hasMessageContaining("already held with token " + tokenY);
        CompletableFuture.runAsync(shared::release, y).get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        FencingToken again = acquireOn(x, shared).get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        assertThat(again.value()).isGreaterThan(tokenY.value());
        CompletableFuture.runAsync(shared::release, x).get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        assertThat(other.getChildren().forPath(first.lockPath())).isEmpty();
      } finally {
        x.shutdownNow();
        y.shutdownNow();
      }
    }
  }

  /**
   * With {@code first} holding: threads {@code x}, then {@code y}, wait on {@code shared}; {@code
   * first} releases, {@code x} holds and loses its node (deleted by {@code other}), and {@code y}
   * then holds. Returns {@code y}'s token.
   */
  private static FencingToken xLosesThenYHolds(
      ZooKeeperFencedLock first,
      ZooKeeperFencedLock shared,
      CuratorFramework other,
      Executor x,
      Executor y)
      throws Exception {
    CompletableFuture<FencingToken> onX = acquireOn(x, shared);
    await().atMost(PATIENCE).until(() -> other.getChildren().forPath(first.lockPath()).size() == 2);
    CompletableFuture<FencingToken> onY = acquireOn(y, shared);
    await().atMost(PATIENCE).until(() -> other.getChildren().forPath(first.lockPath()).size() == 3);
    first.release();
    FencingToken tokenX = onX.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    other.delete().forPath(nodeOf(other, first.lockPath(), tokenX));
    return onY.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
  }

  private static CompletableFuture<FencingToken> acquireOn(
      Executor executor, ZooKeeperFencedLock lock) {
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            return lock.acquire(PATIENCE);
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        },
        executor);
  }

  private static String nodeOf(CuratorFramework client, String path, FencingToken token)
      throws Exception {
    for (String child : client.getChildren().forPath(path)) {
      if (client.checkExists().forPath(path + "/" + child).getCzxid() == token.value()) {
        return path + "/" + child;
      }
    }
    throw new AssertionError("no node of " + token);
  }
}
