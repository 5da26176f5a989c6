package dev.fencing.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Bad input to {@link ZooKeeperFencedLock.Builder}, catalogued in docs/BAD-INPUT.md: lock paths
 * ZooKeeper accepts as paths but that are no lock's own node. Refused by {@code build()}, before
 * anything is sent: the tree is unchanged.
 */
class BadInputZooKeeperTest {
  @RegisterExtension static final ZooKeeperFixture zk = new ZooKeeperFixture("bad-input");

  private static CuratorFramework client;

  @BeforeAll
  static void start() throws Exception {
    client = zk.client();
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
   * configuration): accepted, and the lock nodes were created among ZooKeeper's own. Only on the
   * server's path: under a chroot or namespace it is an ordinary node ({@code
   * ZooKeeperLockPathTest#aZookeeperPathUnderAChrootOrNamespaceIsAnOrdinaryNode}).
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

  /**
   * A chroot in the connect string, or a Curator namespace, that puts an ordinary lock path (the
   * default one here) in ZooKeeper's reserved subtree on the server: {@code /fencing/locks/r} under
   * the chroot or namespace {@code zookeeper} is {@code /zookeeper/fencing/locks/r}. It was
   * accepted (the builder looked at the lock path alone), and the lock nodes were created among
   * ZooKeeper's own. Refused, naming the server's path and where its prefix comes from.
   */
  @Test
  void aChrootOrNamespaceThatPutsTheLockInZooKeepersSubtreeIsRefused() throws Exception {
    List<String> before = tree();
    CuratorFramework chrooted = zk.client(b -> b.connectString(zk.connectString() + "/zookeeper"));
    CuratorFramework namespaced = zk.client(b -> b.namespace("zookeeper"));
    assertThatThrownBy(() -> ZooKeeperFencedLock.builder(chrooted, "r").build())
        .as("B168 chroot")
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(
            "ZooKeeper lock path '/fencing/locks/r' is '/zookeeper/fencing/locks/r' on the server"
                + " (the connect string's chroot '/zookeeper')")
        .hasMessageContaining("reserved /zookeeper subtree")
        .hasMessageContaining("another chroot or namespace");
    assertThatThrownBy(() -> ZooKeeperFencedLock.builder(namespaced, "r").lockPath("/r").build())
        .as("B168 namespace")
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(
            "ZooKeeper lock path '/r' is '/zookeeper/r' on the server (the Curator namespace"
                + " 'zookeeper')")
        .hasMessageContaining("reserved /zookeeper subtree");
    assertThat(tree()).isEqualTo(before);
  }
}
