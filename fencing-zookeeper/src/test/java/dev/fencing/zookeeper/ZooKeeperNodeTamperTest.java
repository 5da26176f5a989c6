package dev.fencing.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.jdbc.FencingToken;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A held lock node tampered with by another client (an operator's script, a careless tool): the
 * holder must not go on saying it holds a node that is no longer the one it acquired.
 */
class ZooKeeperNodeTamperTest {
  @RegisterExtension static final ZooKeeperFixture zk = new ZooKeeperFixture("tamper");

  private static final Duration PATIENCE = ZooKeeperFixture.PATIENCE;

  private CuratorFramework client() throws InterruptedException {
    return zk.client();
  }

  /**
   * The holder's node has its data set, then is deleted and created again under the same name, all
   * before the holder's client has handled the data change (its event thread is busy here; a
   * disconnection does the same: on reconnecting, ZooKeeper reports the re-created node as changed,
   * not deleted). Meanwhile another contender held the lock. The watch on the node was re-armed on
   * the new node and the holding stayed held: two holders as far as isHeld() tells.
   */
  @Test
  void aLockNodeDeletedAndCreatedAgainUnderItsNameIsNoLongerHeld() throws Exception {
    CuratorFramework clientA = client();
    CuratorFramework other = client();
    String resource = "tamper-recreated";
    try (ZooKeeperFencedLock lockA = ZooKeeperFencedLock.builder(clientA, resource).build();
        ZooKeeperFencedLock lockC = ZooKeeperFencedLock.builder(other, resource).build()) {
      FencingToken tokenA = lockA.acquire(PATIENCE);
      String node = lockA.lockPath() + "/" + other.getChildren().forPath(lockA.lockPath()).get(0);

      // hold A's event thread in a watcher of another node, so that A handles the events that
      // follow only once released
      String busy = "/tamper-busy";
      other.create().forPath(busy);
      CountDownLatch busyNow = new CountDownLatch(1);
      CountDownLatch letGo = new CountDownLatch(1);
      clientA
          .checkExists()
          .usingWatcher(
              (Watcher)
                  event -> {
                    busyNow.countDown();
                    try {
                      letGo.await();
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                  })
          .forPath(busy);
      other.setData().forPath(busy, new byte[] {1});
      assertThat(busyNow.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();

      other.setData().forPath(node, new byte[] {1}); // fires A's watch (handled later)
      other.delete().forPath(node);
      FencingToken tokenC = lockC.acquire(PATIENCE);
      assertThat(tokenC.value()).isGreaterThan(tokenA.value());
      other.create().withMode(CreateMode.EPHEMERAL).forPath(node);
      Stat recreated = other.checkExists().forPath(node);
      assertThat(recreated.getCzxid()).isNotEqualTo(tokenA.value());
      letGo.countDown();

      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(() -> assertThat(lockA.isHeld()).as("A's node is gone").isFalse());
      assertThat(lockA.token()).isEmpty();
      assertThat(lockC.token()).contains(tokenC);
      lockC.release();
      FencingToken again = lockA.acquire(PATIENCE); // forgets the lost holding, acquires anew
      assertThat(again.value()).isGreaterThan(tokenC.value());
    }
  }

  /** toString() (what logs show) said "token N" for a holding lost with its node. */
  @Test
  void aLostHoldingIsNotShownAsHeld() throws Exception {
    CuratorFramework client = client();
    CuratorFramework other = client();
    try (ZooKeeperFencedLock lock = ZooKeeperFencedLock.builder(client, "tamper-shown").build()) {
      FencingToken token = lock.acquire(PATIENCE);
      assertThat(lock.toString()).endsWith(", token " + token.value() + "]");
      other
          .delete()
          .forPath(lock.lockPath() + "/" + other.getChildren().forPath(lock.lockPath()).get(0));
      await().atMost(PATIENCE).until(() -> !lock.isHeld());
      assertThat(lock.toString()).endsWith(", not held (was token " + token.value() + ")]");
    }
  }
}
