package dev.fencing.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.FencingToken;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Default lock paths of different resources are independent locks: a resource whose name extends
 * another's by {@code /...} does not put a node among the other's lock nodes. Curator's mutex sorts
 * every child of its path, and a child such as {@code 0} (resource {@code a/0}) sorted before every
 * lock node: nobody could hold {@code a} while {@code a/0} was in use.
 */
class ZooKeeperLockPathTest {
  @RegisterExtension static final ZooKeeperFixture zk = new ZooKeeperFixture("tenant");

  private static final Duration PATIENCE = ZooKeeperFixture.PATIENCE;
  private static final Duration SHORT = Duration.ofMillis(500);

  private static CuratorFramework clientA;
  private static CuratorFramework clientB;

  @BeforeAll
  static void start() throws Exception {
    clientA = zk.client();
    clientB = zk.client();
  }

  @Test
  void aHolderOfANestedNameDoesNotBlockTheOuterName() throws Exception {
    String outer = zk.resource();
    try (ZooKeeperFencedLock nested = ZooKeeperFencedLock.builder(clientA, outer + "/0").build();
        ZooKeeperFencedLock parent = ZooKeeperFencedLock.builder(clientB, outer).build()) {
      nested.acquire(PATIENCE);
      Optional<FencingToken> token = parent.tryAcquire(SHORT);
      assertThat(token).as("the lock of " + outer + " is free").isPresent();
    }
  }

  @Test
  void defaultLockPathsOfDifferentResourcesAreNeverNested() {
    String a = ZooKeeperFencedLock.builder(clientA, "t/a").build().lockPath();
    String b = ZooKeeperFencedLock.builder(clientA, "t/a/0").build().lockPath();
    assertThat(b).doesNotStartWith(a + "/");
  }

  /**
   * Under a chroot (in the connect string) or a Curator namespace, {@code /zookeeper/...} is an
   * ordinary node on the server ({@code /<root>/zookeeper/...}), not ZooKeeper's reserved subtree:
   * it was refused as if it were (B163, "also under a namespace or chroot, which the builder cannot
   * tell"), though the builder can tell (the client's namespace, and the connect string Curator
   * gives ZooKeeper, which takes its chroot from it). Accepted now; a chrooted and a namespaced
   * client on the same root share the one lock, and ZooKeeper's own subtree is untouched.
   */
  @Test
  void aZookeeperPathUnderAChrootOrNamespaceIsAnOrdinaryNode() throws Exception {
    String root = "/" + zk.resource();
    clientA.create().forPath(root);
    List<String> reserved = clientA.getChildren().forPath("/zookeeper");
    CuratorFramework chrooted = zk.client(b -> b.connectString(zk.connectString() + root));
    CuratorFramework namespaced = zk.client(b -> b.namespace(root.substring(1)));
    String path = "/zookeeper/locks/r";
    try (ZooKeeperFencedLock inChroot =
            ZooKeeperFencedLock.builder(chrooted, "r").lockPath(path).build();
        ZooKeeperFencedLock inNamespace =
            ZooKeeperFencedLock.builder(namespaced, "r").lockPath(path).build()) {
      FencingToken first = inChroot.acquire(PATIENCE);
      assertThat(clientA.getChildren().forPath(root + path))
          .as("its node, on the server")
          .hasSize(1);
      assertThat(inNamespace.tryAcquire(SHORT)).as("the same lock: taken").isEmpty();
      inChroot.release();
      assertThat(inNamespace.acquire(PATIENCE).value()).isGreaterThan(first.value());
    }
    assertThat(clientA.getChildren().forPath("/zookeeper")).isEqualTo(reserved);
  }
}
