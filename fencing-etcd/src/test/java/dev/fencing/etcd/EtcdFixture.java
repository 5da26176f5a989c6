package dev.fencing.etcd;

import dev.fencing.jdbc.FencingToken;
import dev.fencing.testing.EtcdServer;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.grpc.ClientInterceptor;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The etcd tests' shared fixture, registered on a static field: one real etcd ({@link EtcdServer})
 * for the test class, a fresh resource name for each test ({@code <prefix>-<n>}), and the clients a
 * test builds ({@link #client}), closed after it.
 *
 * <pre>{@code
 * @RegisterExtension static final EtcdFixture etcd = new EtcdFixture("tamper");
 * }</pre>
 */
final class EtcdFixture
    implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {
  /** How long a test waits for etcd, a lock or a condition (a hang guard, not a timing). */
  static final Duration PATIENCE = Duration.ofSeconds(30);

  private static final AtomicInteger NAMES = new AtomicInteger();

  private final String prefix;
  private final List<Client> clients = new CopyOnWriteArrayList<>();
  private @Nullable EtcdServer server;
  private @Nullable String resource;

  EtcdFixture(String prefix) {
    this.prefix = prefix;
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    server = EtcdServer.start();
  }

  @Override
  public void afterAll(ExtensionContext context) {
    closeClients();
    if (server != null) {
      server.close();
      server = null;
    }
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    resource = prefix + "-" + NAMES.incrementAndGet();
  }

  @Override
  public void afterEach(ExtensionContext context) {
    closeClients();
  }

  private void closeClients() {
    clients.forEach(Client::close);
    clients.clear();
  }

  /** The etcd server of the test class. */
  EtcdServer server() {
    if (server == null) {
      throw new IllegalStateException(
          "etcd is not started: register EtcdFixture on a static field");
    }
    return server;
  }

  /** The current test's resource name. */
  String resource() {
    if (resource == null) {
      throw new IllegalStateException("no test is running");
    }
    return resource;
  }

  /** A client of the test's etcd through {@code interceptors}, closed after the test. */
  Client client(ClientInterceptor... interceptors) {
    var builder = Client.builder().endpoints(server().endpoint());
    for (ClientInterceptor i : interceptors) {
      builder.interceptor(i);
    }
    Client client = builder.build();
    clients.add(client);
    return client;
  }

  /** The holders' and waiters' keys under the lock's name. */
  static List<KeyValue> keys(Client client, EtcdFencedLock lock) throws Exception {
    ByteSequence prefix = ByteSequence.from(lock.lockName() + "/", StandardCharsets.UTF_8);
    return client
        .getKVClient()
        .get(prefix, GetOption.builder().isPrefix(true).build())
        .get(PATIENCE.toSeconds(), TimeUnit.SECONDS)
        .getKvs();
  }

  /** How many holders' and waiters' keys exist under the lock's name. */
  static long keyCount(Client client, EtcdFencedLock lock) throws Exception {
    return keys(client, lock).size();
  }

  /**
   * The one holder's key under the lock's name.
   *
   * @throws AssertionError if there is none, or more than one
   */
  static KeyValue holderKey(Client client, EtcdFencedLock lock) throws Exception {
    List<KeyValue> kvs = keys(client, lock);
    if (kvs.size() != 1) {
      throw new AssertionError("expected one key under " + lock.lockName() + ", found " + kvs);
    }
    return kvs.get(0);
  }

  /**
   * {@code lock.tryAcquire(wait)} on another thread (the common pool); an interrupt fails the
   * future with an {@link IllegalStateException}.
   */
  static CompletableFuture<Optional<FencingToken>> tryAcquireAsync(
      EtcdFencedLock lock, Duration wait) {
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            return lock.tryAcquire(wait);
          } catch (InterruptedException e) {
            throw new IllegalStateException(e);
          }
        });
  }
}
