package dev.fencing.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.FencingToken;
import dev.fencing.testing.EtcdServer;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Default lock names of different resources are independent locks: a resource whose name extends
 * another's by {@code /...} ({@code tenant/a} and {@code tenant/a/ledger}) does not wait for the
 * other's holders. etcd's lock waits for every key under {@code <name>/} with a smaller revision,
 * and {@code fencing/locks/tenant/a/} was a prefix of {@code fencing/locks/tenant/a/ledger/}.
 */
class EtcdLockNameTest {
  private static final Duration PATIENCE = Duration.ofSeconds(30);
  private static final Duration SHORT = Duration.ofMillis(500);
  private static final AtomicInteger NAMES = new AtomicInteger();

  private static EtcdServer etcd;
  private static Client clientA;
  private static Client clientB;

  @BeforeAll
  static void start() throws Exception {
    etcd = EtcdServer.start();
    clientA = Client.builder().endpoints(etcd.endpoint()).build();
    clientB = Client.builder().endpoints(etcd.endpoint()).build();
  }

  @AfterAll
  static void stop() {
    clientA.close();
    clientB.close();
    etcd.close();
  }

  @Test
  void aHolderOfANestedNameDoesNotBlockTheOuterName() throws Exception {
    String outer = "tenant-" + NAMES.incrementAndGet();
    try (EtcdFencedLock nested = EtcdFencedLock.builder(clientA, outer + "/ledger").build();
        EtcdFencedLock parent = EtcdFencedLock.builder(clientB, outer).build()) {
      nested.acquire(PATIENCE);
      Optional<FencingToken> token = parent.tryAcquire(SHORT);
      assertThat(token).as("the lock of " + outer + " is free").isPresent();
    }
  }

  @Test
  void defaultLockNamesOfDifferentResourcesAreNeverNested() {
    String a = EtcdFencedLock.builder(clientA, "t/a").build().lockName();
    String b = EtcdFencedLock.builder(clientA, "t/a/b").build().lockName();
    assertThat((b + "/").startsWith(a + "/")).isFalse();
  }
}
