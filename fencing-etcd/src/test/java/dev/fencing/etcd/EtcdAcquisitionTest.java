package dev.fencing.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.jdbc.FencingToken;
import dev.fencing.testing.EtcdServer;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.grpc.ClientInterceptor;
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
 * What an {@link EtcdFencedLock} acquisition leaves in etcd when it gives up, how long it may take,
 * and a holding lost before the next acquisition: etcd only ({@link EtcdServer}), no PostgreSQL.
 * Faults come from gRPC interceptors on the acquiring client (a revoke dropped before it reaches
 * etcd, a grant's reply held back until the test lets it through); no sleeps.
 */
class EtcdAcquisitionTest {
  private static final Duration PATIENCE = Duration.ofSeconds(30);
  private static final Duration SHORT = Duration.ofMillis(300);
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
    resource = "acquisition-" + NAMES.incrementAndGet();
  }

  @AfterEach
  void closeClients() {
    clients.forEach(Client::close);
  }

  private Client client(ClientInterceptor... interceptors) {
    var builder = Client.builder().endpoints(etcd.endpoint());
    for (ClientInterceptor i : interceptors) {
      builder.interceptor(i);
    }
    Client client = builder.build();
    clients.add(client);
    return client;
  }

  private EtcdFencedLock.Builder lock(Client client) {
    return EtcdFencedLock.builder(client, resource).leaseTtl(Duration.ofHours(1));
  }

  /** The holders' and waiters' keys under the lock's name. */
  private static List<KeyValue> keys(Client client, EtcdFencedLock lock) throws Exception {
    ByteSequence prefix = ByteSequence.from(lock.lockName() + "/", StandardCharsets.UTF_8);
    return client
        .getKVClient()
        .get(prefix, GetOption.builder().isPrefix(true).build())
        .get(PATIENCE.toSeconds(), TimeUnit.SECONDS)
        .getKvs();
  }

  /**
   * A holding etcd ended (its lease revoked by another client) does not make the next acquisition
   * on the same lock object fail as "already held": the acquisition asks etcd first, finds the
   * lease gone, and acquires with a new lease and a greater token.
   */
  @Test
  void aHoldingEtcdEndedDoesNotCountAsHeld() throws Exception {
    Client other = client();
    try (EtcdFencedLock lock = lock(client()).build()) {
      FencingToken first = lock.acquire(PATIENCE);
      long firstLease = lock.leaseId().orElseThrow();
      other.getLeaseClient().revoke(firstLease).get(PATIENCE.toSeconds(), TimeUnit.SECONDS);

      FencingToken second = lock.acquire(PATIENCE);
      assertThat(second.value()).isGreaterThan(first.value());
      assertThat(lock.isHeld()).isTrue();
      assertThat(lock.leaseId()).isPresent().get().isNotEqualTo(firstLease);
      assertThat(keys(other, lock)).hasSize(1);
      assertThatThrownBy(() -> lock.acquire(PATIENCE))
          .as("a live holding still counts")
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("already held");
    }
  }

  /** The same when the loss is already known (a keep-alive refused as "lease not found"). */
  @Test
  void aHoldingKnownLostDoesNotCountAsHeld() throws Exception {
    Client other = client();
    try (EtcdFencedLock lock = lock(client()).build()) {
      FencingToken first = lock.acquire(PATIENCE);
      other
          .getLeaseClient()
          .revoke(lock.leaseId().orElseThrow())
          .get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      lock.renewNow().get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      assertThat(lock.isHeld()).isFalse();

      assertThat(lock.acquire(PATIENCE).value()).isGreaterThan(first.value());
      assertThat(lock.isHeld()).isTrue();
      assertThat(keys(other, lock)).hasSize(1);
    }
  }
}
