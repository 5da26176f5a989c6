package dev.fencing.benchmark.compare;

import dev.fencing.etcd.EtcdFencedLock;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencingToken;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * Row 4: {@code fencing-etcd}'s {@link EtcdFencedLock} (token = create revision of the lock key),
 * used as the README's quick start shows: declare the resource external, acquire, {@link
 * FencedDataSource#fence(FencingToken) fence(token)}, then write through the {@link
 * FencedDataSource} with the token bound. The variant {@link #WITHOUT_FENCE} skips {@code fence()}.
 *
 * <p>The lock keeps its lease alive from a background stream, which a paused thread would not stop
 * (a GC pause would): each client reaches etcd through its own {@link FreezableProxy}, and client
 * 1's is frozen. etcd then expires the lease and deletes the lock key, which {@link #awaitExpiry}
 * watches for.
 */
final class EtcdLock implements Approach {
  static final Spec SPEC =
      new Spec(
          "etcd lock + mod_revision",
          true,
          "Yes",
          "fencing-etcd's EtcdFencedLock (lock on a kept-alive lease, token = create revision of"
              + " the lock key, Raft order), then FencedDataSource.fence(token): the previous holder"
              + " is fenced at acquisition. Lease TTLs are whole seconds. Needs an etcd cluster.");

  static final Spec WITHOUT_FENCE =
      new Spec(
          "etcd lock + mod_revision, without fence()",
          true,
          "Yes",
          "The same lock, skipping the optional fence(token): fenced only from the new holder's"
              + " first write.");

  private final Spec spec;
  private final boolean fenceOnAcquire;
  private final InetSocketAddress server;
  private final String prefix;
  private final FencedDataSource fenced;
  private final Duration ttl;
  private final Duration patience;
  private final Client observer;
  private final AutoCloseable ownedServer;

  /**
   * @param endpoint e.g. {@code http://127.0.0.1:2379}
   * @param prefix prepended to every lock name; unique per run
   * @param ttl the lease, rounded up to whole seconds
   * @param fenceOnAcquire whether a client calls {@code fence(token)} right after acquiring
   * @param ownedServer closed with this approach (a server this run started), or a no-op
   */
  EtcdLock(
      String endpoint,
      String prefix,
      DataSource plain,
      Duration ttl,
      boolean fenceOnAcquire,
      AutoCloseable ownedServer) {
    this.spec = fenceOnAcquire ? SPEC : WITHOUT_FENCE;
    this.fenceOnAcquire = fenceOnAcquire;
    URI uri = URI.create(endpoint);
    this.server = new InetSocketAddress(uri.getHost(), uri.getPort());
    this.prefix = prefix;
    this.fenced = FencedDataSource.wrap(plain);
    this.ttl = Duration.ofSeconds(Math.max(1, (ttl.toMillis() + 999) / 1000));
    this.patience = Scenario.patience(this.ttl);
    this.observer = Client.builder().endpoints(endpoint).build();
    this.ownedServer = ownedServer;
  }

  @Override
  public Spec spec() {
    return spec;
  }

  @Override
  public Hold acquire(String resource, String client) throws Exception {
    fenced.createExternalResource(resource);
    FreezableProxy proxy = new FreezableProxy(server);
    Client etcd = null;
    try {
      etcd = Client.builder().endpoints("http://127.0.0.1:" + proxy.port()).build();
      EtcdFencedLock lock =
          EtcdFencedLock.builder(etcd, resource)
              .lockName(prefix + resource)
              .leaseTtl(ttl)
              .requestTimeout(patience)
              .build();
      FencingToken token = lock.acquire(patience);
      if (fenceOnAcquire) {
        fenced.fence(token);
      }
      return new RelayedHold(fenced, proxy, etcd, lock, token);
    } catch (Exception | Error e) {
      if (etcd != null) {
        etcd.close();
      }
      proxy.close();
      throw e;
    }
  }

  /**
   * Client 1's process stops (its connection, keep-alives included, freezes) until etcd has expired
   * its lease and deleted its lock key.
   */
  @Override
  public void awaitExpiry(Hold hold) throws Exception {
    RelayedHold held = (RelayedHold) hold;
    held.freeze();
    EtcdFencedLock lock = (EtcdFencedLock) held.lock();
    ByteSequence keys = bytes(lock.lockName() + "/");
    long revision = held.tokenValue();
    Poll.until(
        "expiry of the etcd lease holding " + lock.lockName() + " at revision " + revision,
        patience,
        () ->
            observer
                .getKVClient()
                .get(keys, GetOption.builder().isPrefix(true).build())
                .get(patience.toSeconds(), TimeUnit.SECONDS)
                .getKvs()
                .stream()
                .noneMatch(kv -> kv.getCreateRevision() == revision));
  }

  @Override
  public void close() throws Exception {
    try (AutoCloseable server = ownedServer) {
      observer
          .getKVClient()
          .delete(bytes(prefix), DeleteOption.builder().isPrefix(true).build())
          .get(patience.toSeconds(), TimeUnit.SECONDS);
      observer.close();
    }
  }

  private static ByteSequence bytes(String text) {
    return ByteSequence.from(text, StandardCharsets.UTF_8);
  }

  @Override
  public String toString() {
    return "EtcdLock[" + server + " " + prefix + (fenceOnAcquire ? "" : ", no fence()") + "]";
  }
}
