package dev.fencing.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.FencingToken;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Default lock paths of different resources are independent locks: a resource whose name extends
 * another's by {@code /...} does not put a node among the other's lock nodes. Curator's mutex sorts
 * every child of its path, and a child such as {@code 0} (resource {@code a/0}) sorted before every
 * lock node: nobody could hold {@code a} while {@code a/0} was in use.
 */
class ZooKeeperLockPathTest {
  private static final Duration PATIENCE = Duration.ofSeconds(30);
  private static final Duration SHORT = Duration.ofMillis(500);
  private static final AtomicInteger NAMES = new AtomicInteger();

  private static TestingServer zooKeeper;
  private static CuratorFramework clientA;
  private static CuratorFramework clientB;

  @BeforeAll
  static void start() throws Exception {
    zooKeeper = new TestingServer(true);
    clientA = client();
    clientB = client();
  }

  private static CuratorFramework client() throws InterruptedException {
    CuratorFramework client =
        CuratorFrameworkFactory.newClient(
            zooKeeper.getConnectString(), new ExponentialBackoffRetry(100, 10));
    client.start();
    assertThat(client.blockUntilConnected((int) PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
    return client;
  }

  @AfterAll
  static void stop() throws Exception {
    clientA.close();
    clientB.close();
    zooKeeper.close();
  }

  @Test
  void aHolderOfANestedNameDoesNotBlockTheOuterName() throws Exception {
    String outer = "tenant-" + NAMES.incrementAndGet();
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
}
