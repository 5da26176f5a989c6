package dev.fencing.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Bad input to {@link ZooKeeperFencedLock.Builder}, catalogued in docs/BAD-INPUT.md: lock paths
 * ZooKeeper accepts as paths but that are no lock's own node. Refused by {@code build()}, before
 * anything is sent: the tree is unchanged.
 */
class BadInputZooKeeperTest {
  private static TestingServer zooKeeper;
  private static CuratorFramework client;

  @BeforeAll
  static void start() throws Exception {
    zooKeeper = new TestingServer(true);
    client =
        CuratorFrameworkFactory.newClient(
            zooKeeper.getConnectString(), new ExponentialBackoffRetry(100, 10));
    client.start();
    assertThat(client.blockUntilConnected(30, TimeUnit.SECONDS)).isTrue();
  }

  @AfterAll
  static void stop() throws Exception {
    client.close();
    zooKeeper.close();
  }

  private List<String> tree() throws Exception {
    return List.of(
        String.valueOf(client.getChildren().forPath("/")),
        String.valueOf(client.getChildren().forPath("/zookeeper")));
  }

  /**
   * The root as the lock path: Curator's mutex counts every child of its path as a contender, and
   * the root holds {@code /zookeeper} and every other node (the default locks' {@code /fencing}
   * among them). It was accepted, and every acquisition then failed as a lock-service failure
   * ({@code FencedLockException} "could not acquire", NoNode), which a caller retries for ever.
   */
  @Test
  void theRootIsNoLockPath() throws Exception {
    List<String> before = tree();
    assertThatThrownBy(() -> ZooKeeperFencedLock.builder(client, "r").lockPath("/").build())
        .as("B162")
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ZooKeeper lock path '/' is the root")
        .hasMessageContaining("every child");
    assertThat(tree()).isEqualTo(before);
  }

  /**
   * A lock path in ZooKeeper's reserved {@code /zookeeper} subtree (quotas, the ensemble's
   * configuration): accepted, and the lock nodes were created among ZooKeeper's own.
   */
  @Test
  void zooKeepersReservedSubtreeIsNoLockPath() throws Exception {
    List<String> before = tree();
    for (String path : List.of("/zookeeper", "/zookeeper/quota", "/zookeeper/locks/r")) {
      assertThatThrownBy(() -> ZooKeeperFencedLock.builder(client, "r").lockPath(path).build())
          .as("B163 %s", path)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("ZooKeeper lock path '" + path + "'")
          .hasMessageContaining("reserved /zookeeper subtree");
    }
    assertThat(ZooKeeperFencedLock.builder(client, "r").lockPath("/zookeepers/r").build())
        .as("B163: only the subtree itself is reserved")
        .isNotNull();
    assertThat(tree()).isEqualTo(before);
  }
}
