package dev.fencing.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.jdbc.FencingToken;
import dev.fencing.testing.EtcdServer;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A holding's lock key changed behind its back, by hand or by another client: overwritten (etcd
 * keeps its create revision but detaches it from the holding's lease, or attaches it to another),
 * deleted and put again (a new create revision). The holding is lost as soon as etcd reports the
 * change: the key is no longer the one its lease put, so neither its keep-alives nor its release
 * decide any longer when the lock is free. And a lost holding hands out no lease id. etcd only
 * ({@link EtcdServer}); the changes are seen through the holding's watch, awaited, no sleeps.
 */
class EtcdKeyTamperTest {
  private static final Duration PATIENCE = Duration.ofSeconds(30);
  private static final AtomicInteger NAMES = new AtomicInteger();

  private static EtcdServer etcd;

  private final List<Client> clients = new ArrayList<>();
  private String resource;

  @BeforeAll
  static void start() throws Exception {
    etcd = EtcdServer.start();
  }

  @AfterAll
  static void stop() {
    if (etcd != null) {
      etcd.close();
    }
  }

  @BeforeEach
  void name() {
    resource = "tamper-" + NAMES.incrementAndGet();
  }

  @AfterEach
  void closeClients() {
    clients.forEach(Client::close);
  }

  private Client client() {
    Client client = Client.builder().endpoints(etcd.endpoint()).build();
    clients.add(client);
    return client;
  }

  /** The one holder's key under the lock's name. */
  private static KeyValue key(Client client, EtcdFencedLock lock) throws Exception {
    ByteSequence prefix = ByteSequence.from(lock.lockName() + "/", StandardCharsets.UTF_8);
    List<KeyValue> kvs =
        client
            .getKVClient()
            .get(prefix, GetOption.builder().isPrefix(true).build())
            .get(PATIENCE.toSeconds(), TimeUnit.SECONDS)
            .getKvs();
    assertThat(kvs).hasSize(1);
    return kvs.get(0);
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
