package dev.fencing.benchmark.compare;

import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencingToken;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * Row 4, <b>stand-in until the comparison uses {@code fencing-etcd}</b>: etcd's lock service with a
 * lease that client 1 does not keep alive, token = the create revision of the lock key (etcd's Raft
 * order; the key is never modified, so it is also its mod_revision), carried by {@link
 * FencedDataSource} to an external resource. To switch, replace {@link #acquire} and {@link Held}
 * with the module's lock.
 */
final class EtcdLock implements Approach {
  static final Spec SPEC =
      new Spec(
          "etcd lock + mod_revision",
          true,
          "Yes",
          "etcd lock on a lease, token = revision of the lock key (Raft order), checked by"
              + " PostgreSQL as an external token: fenced from the new holder's first write."
              + " Lease TTLs are whole seconds. Needs an etcd cluster.");

  private final String endpoint;
  private final String prefix;
  private final DataSource plain;
  private final DataSource fenced;
  private final long ttlSeconds;
  private final Duration patience;
  private final Client observer;
  private final AutoCloseable ownedServer;

  /**
   * @param endpoint e.g. {@code http://127.0.0.1:2379}
   * @param prefix prepended to every lock name; unique per run
   * @param ttl the lease, rounded up to whole seconds
   * @param ownedServer closed with this approach (a server this run started), or a no-op
   */
  EtcdLock(
      String endpoint, String prefix, DataSource plain, Duration ttl, AutoCloseable ownedServer) {
    this.endpoint = endpoint;
    this.prefix = prefix;
    this.plain = plain;
    this.fenced = FencedDataSource.wrap(plain);
    this.ttlSeconds = Math.max(1, (ttl.toMillis() + 999) / 1000);
    this.patience = Scenario.patience(Duration.ofSeconds(ttlSeconds));
    this.observer = Client.builder().endpoints(endpoint).build();
    this.ownedServer = ownedServer;
  }

  @Override
  public Spec spec() {
    return SPEC;
  }

  @Override
  public Hold acquire(String resource, String client) throws Exception {
    try (Connection c = plain.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT fencing.create_resource(?, true)")) {
      ps.setString(1, resource);
      ps.execute();
    }
    Client etcd = Client.builder().endpoints(endpoint).build();
    try {
      long lease = etcd.getLeaseClient().grant(ttlSeconds).get(seconds(), TimeUnit.SECONDS).getID();
      ByteSequence key =
          etcd.getLockClient()
              .lock(bytes(prefix + resource), lease)
              .get(seconds(), TimeUnit.SECONDS)
              .getKey();
      List<KeyValue> kvs = etcd.getKVClient().get(key).get(seconds(), TimeUnit.SECONDS).getKvs();
      if (kvs.isEmpty()) {
        throw new IllegalStateException("lock key of " + client + " vanished right after locking");
      }
      return new Held(resource, etcd, key, kvs.get(0).getCreateRevision());
    } catch (Exception | Error e) {
      etcd.close();
      throw e;
    }
  }

  /** Client 1 sends no keep-alive; etcd expires its lease and deletes its lock key. */
  @Override
  public void awaitExpiry(Hold hold) throws Exception {
    Held held = (Held) hold;
    Poll.until(
        "expiry of the etcd lease holding " + held.key.toString(StandardCharsets.UTF_8),
        patience,
        () ->
            observer
                .getKVClient()
                .get(held.key)
                .get(seconds(), TimeUnit.SECONDS)
                .getKvs()
                .isEmpty());
  }

  @Override
  public void close() throws Exception {
    try (AutoCloseable server = ownedServer) {
      observer
          .getKVClient()
          .delete(
              bytes(prefix), io.etcd.jetcd.options.DeleteOption.builder().isPrefix(true).build())
          .get(seconds(), TimeUnit.SECONDS);
      observer.close();
    }
  }

  private long seconds() {
    return patience.toSeconds();
  }

  private static ByteSequence bytes(String text) {
    return ByteSequence.from(text, StandardCharsets.UTF_8);
  }

  private final class Held implements Hold {
    private final String resource;
    private final Client etcd;
    private final ByteSequence key;
    private final long revision;

    Held(String resource, Client etcd, ByteSequence key, long revision) {
      this.resource = resource;
      this.etcd = etcd;
      this.key = key;
      this.revision = revision;
    }

    @Override
    public Optional<BigInteger> token() {
      return Optional.of(BigInteger.valueOf(revision));
    }

    @Override
    public Outcome write(Write write) throws SQLException {
      return Writes.fenced(fenced, FencingToken.of(resource, revision), write);
    }

    /** Unlock deletes the key only if it exists; a zombie's is gone with its lease. */
    @Override
    public void release() throws Exception {
      try {
        etcd.getLockClient().unlock(key).get(seconds(), TimeUnit.SECONDS);
      } catch (java.util.concurrent.ExecutionException e) {
        // a zombie's lock key went with its lease: nothing left to release
      } finally {
        etcd.close();
      }
    }
  }
}
