package dev.fencing.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencing.jdbc.FencingToken;
import dev.fencing.testing.EtcdServer;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link EtcdFencedLock#close()} while another thread waits for the lock: etcd only ({@link
 * EtcdServer}), no PostgreSQL.
 */
class EtcdCloseTest {
  @RegisterExtension static final EtcdFixture etcd = new EtcdFixture("close");

  private static final Duration PATIENCE = EtcdFixture.PATIENCE;

  private Client client() {
    return etcd.client();
  }

  private static long keys(Client client, EtcdFencedLock lock) throws Exception {
    return EtcdFixture.keyCount(client, lock);
  }

  /**
   * close() came while another thread waited for the lock (close() waits for that acquisition to
   * end): the acquisition returned a token, which close() revoked the moment after. A lock closed
   * before it was acquired is not acquired: the acquisition gives up (its lease revoked) and says
   * the lock was closed.
   */
  @Test
  void anAcquisitionCompletingAfterCloseIsNotReturnedAsAcquired() throws Exception {
    Client holderClient = client();
    Client waiterClient = client();
    String resource = etcd.resource();
    try (EtcdFencedLock holder = EtcdFencedLock.builder(holderClient, resource).build()) {
      EtcdFencedLock waiter = EtcdFencedLock.builder(waiterClient, resource).build();
      holder.acquire(PATIENCE);
      CompletableFuture<Optional<FencingToken>> waiting =
          EtcdFixture.tryAcquireAsync(waiter, PATIENCE);
      await().atMost(PATIENCE).until(() -> keys(holderClient, holder) == 2);
      Thread closer = new Thread(waiter::close, "closer");
      closer.start();
      // closed is set; close() now waits for the acquisition to end
      await().atMost(PATIENCE).until(() -> closer.getState() == Thread.State.BLOCKED);
      holder.release();
      assertThatThrownBy(() -> waiting.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
          .hasCauseInstanceOf(IllegalStateException.class)
          .hasMessageContaining("closed");
      closer.join(PATIENCE.toMillis());
      assertThat(closer.isAlive()).isFalse();
      assertThat(waiter.isHeld()).isFalse();
      assertThat(waiter.leaseId()).isEmpty();
      assertThat(keys(holderClient, holder)).isZero();
    }
  }

  /**
   * release() called on another thread while an acquisition waits releases what is held when it is
   * called: nothing. Before, it waited for the acquisition (the lock's guard) and then revoked the
   * lease the acquisition had just returned with its token: the acquirer was told "acquired" for a
   * lock released the moment after.
   */
  @Test
  void aReleaseDuringAnAcquisitionDoesNotReleaseWhatItAcquires() throws Exception {
    Client holderClient = client();
    Client waiterClient = client();
    String resource = etcd.resource();
    // TTLs far longer than the test: a slow first request to a fresh etcd must not lose the lease
    try (EtcdFencedLock holder =
            EtcdFencedLock.builder(holderClient, resource).leaseTtl(Duration.ofMinutes(2)).build();
        EtcdFencedLock waiter =
            EtcdFencedLock.builder(waiterClient, resource)
                .leaseTtl(Duration.ofMinutes(2))
                .build()) {
      holder.acquire(PATIENCE);
      CompletableFuture<Optional<FencingToken>> waiting =
          EtcdFixture.tryAcquireAsync(waiter, PATIENCE);
      await().atMost(PATIENCE).until(() -> keys(holderClient, holder) == 2);
      Thread releaser = new Thread(waiter::release, "releaser");
      releaser.start();
      releaser.join(PATIENCE.toMillis());
      assertThat(releaser.isAlive()).as("release() returned: nothing was held").isFalse();

      holder.release();
      FencingToken token = waiting.get(PATIENCE.toSeconds(), TimeUnit.SECONDS).orElseThrow();
      assertThat(waiter.isHeld()).isTrue();
      assertThat(waiter.token()).contains(token);
      assertThat(keys(holderClient, holder)).isEqualTo(1);
    }
  }
}
