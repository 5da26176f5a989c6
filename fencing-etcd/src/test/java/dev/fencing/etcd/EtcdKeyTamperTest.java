package dev.fencing.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.jdbc.FencingToken;
import dev.fencing.testing.EtcdServer;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.PutOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A holding's lock key changed behind its back, by hand or by another client: overwritten (etcd
 * keeps its create revision but detaches it from the holding's lease, or attaches it to another),
 * deleted and put again (a new create revision). The holding is lost as soon as etcd reports the
 * change: the key is no longer the one its lease put, so neither its keep-alives nor its release
 * decide any longer when the lock is free. And a lost holding hands out no lease id. etcd only
 * ({@link EtcdServer}); the changes are seen through the holding's watch, awaited, no sleeps.
 */
class EtcdKeyTamperTest {
  @RegisterExtension static final EtcdFixture etcd = new EtcdFixture("tamper");

  private static final Duration PATIENCE = EtcdFixture.PATIENCE;

  private String resource;

  @BeforeEach
  void name() {
    resource = etcd.resource();
  }

  private Client client() {
    return etcd.client();
  }

  /** The one holder's key under the lock's name. */
  private static KeyValue key(Client client, EtcdFencedLock lock) throws Exception {
    return EtcdFixture.holderKey(client, lock);
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  /**
   * A put without a lease keeps the key's create revision but detaches it from the holding's lease:
   * before, the watch ignored puts and the holding stayed held, though its release (a revoke) no
   * longer deleted the key.
   */
  @Test
  void aLockKeyOverwrittenWithoutALeaseIsNoLongerHeld() throws Exception {
    Client other = client();
    try (EtcdFencedLock lock = EtcdFencedLock.builder(client(), resource).build()) {
      FencingToken token = lock.acquire(PATIENCE);
      KeyValue kv = key(other, lock);
      other
          .getKVClient()
          .put(kv.getKey(), bytes("by hand"))
          .get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      assertThat(key(other, lock).getCreateRevision())
          .as("etcd keeps the create revision of an overwritten key")
          .isEqualTo(token.value());

      await().atMost(PATIENCE).until(() -> !lock.isHeld());
      assertThat(lock.token()).isEmpty();
      assertThat(lock.leaseId()).isEmpty();
    }
  }

  /** The same when the key is put again with another client's lease. */
  @Test
  void aLockKeyOverwrittenWithAnotherLeaseIsNoLongerHeld() throws Exception {
    Client other = client();
    long otherLease =
        other.getLeaseClient().grant(60).get(PATIENCE.toSeconds(), TimeUnit.SECONDS).getID();
    try (EtcdFencedLock lock = EtcdFencedLock.builder(client(), resource).build()) {
      lock.acquire(PATIENCE);
      KeyValue kv = key(other, lock);
      other
          .getKVClient()
          .put(kv.getKey(), bytes("hijacked"), PutOption.builder().withLeaseId(otherLease).build())
          .get(PATIENCE.toSeconds(), TimeUnit.SECONDS);

      await().atMost(PATIENCE).until(() -> !lock.isHeld());
      assertThat(lock.token()).isEmpty();
    } finally {
      other.getLeaseClient().revoke(otherLease).get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    }
  }

  /**
   * Deleted and put again by another client: a new create revision, not the holding's token. The
   * deletion alone ends the holding (its watch); the put after it does not bring it back.
   */
  @Test
  void aLockKeyDeletedAndPutAgainIsNoLongerHeld() throws Exception {
    Client other = client();
    try (EtcdFencedLock lock = EtcdFencedLock.builder(client(), resource).build()) {
      FencingToken token = lock.acquire(PATIENCE);
      long lease = lock.leaseId().orElseThrow();
      KeyValue kv = key(other, lock);
      other.getKVClient().delete(kv.getKey()).get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      other
          .getKVClient()
          .put(kv.getKey(), kv.getValue(), PutOption.builder().withLeaseId(lease).build())
          .get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      assertThat(key(other, lock).getCreateRevision()).isGreaterThan(token.value());

      await().atMost(PATIENCE).until(() -> !lock.isHeld());
      assertThat(lock.token()).isEmpty();
      assertThat(lock.leaseId()).isEmpty();
    }
  }

  /**
   * A lost holding (its lease revoked by another client) hands out no lease id: before, {@link
   * EtcdFencedLock#leaseId()} still returned the ended lease while {@code isHeld()} and {@code
   * token()} said not held.
   */
  @Test
  void aLostHoldingHasNoLeaseId() throws Exception {
    Client other = client();
    try (EtcdFencedLock lock = EtcdFencedLock.builder(client(), resource).build()) {
      lock.acquire(PATIENCE);
      other
          .getLeaseClient()
          .revoke(lock.leaseId().orElseThrow())
          .get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      lock.renewNow().get(PATIENCE.toSeconds(), TimeUnit.SECONDS); // etcd: lease not found
      assertThat(lock.isHeld()).isFalse();

      assertThat(lock.leaseId()).isEmpty();
    }
  }
}
