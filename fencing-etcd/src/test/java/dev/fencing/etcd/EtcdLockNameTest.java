package dev.fencing.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.FencingToken;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Default lock names of different resources are independent locks: a resource whose name extends
 * another's by {@code /...} ({@code tenant/a} and {@code tenant/a/ledger}) does not wait for the
 * other's holders. etcd's lock waits for every key under {@code <name>/} with a smaller revision,
 * and {@code fencing/locks/tenant/a/} was a prefix of {@code fencing/locks/tenant/a/ledger/}.
 */
class EtcdLockNameTest {
  @RegisterExtension static final EtcdFixture etcd = new EtcdFixture("tenant");

  private static final Duration PATIENCE = EtcdFixture.PATIENCE;
  private static final Duration SHORT = Duration.ofMillis(500);

  @Test
  void aHolderOfANestedNameDoesNotBlockTheOuterName() throws Exception {
    Client clientA = etcd.client();
    Client clientB = etcd.client();
    String outer = etcd.resource();
    try (EtcdFencedLock nested = EtcdFencedLock.builder(clientA, outer + "/ledger").build();
        EtcdFencedLock parent = EtcdFencedLock.builder(clientB, outer).build()) {
      nested.acquire(PATIENCE);
      Optional<FencingToken> token = parent.tryAcquire(SHORT);
      assertThat(token).as("the lock of " + outer + " is free").isPresent();
    }
  }

  @Test
  void defaultLockNamesOfDifferentResourcesAreNeverNested() {
    Client clientA = etcd.client();
    String a = EtcdFencedLock.builder(clientA, "t/a").build().lockName();
    String b = EtcdFencedLock.builder(clientA, "t/a/b").build().lockName();
    assertThat((b + "/").startsWith(a + "/")).isFalse();
  }
}
