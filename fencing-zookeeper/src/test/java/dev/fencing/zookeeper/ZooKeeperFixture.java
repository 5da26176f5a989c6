package dev.fencing.zookeeper;

import dev.fencing.jdbc.FencingToken;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.TestingServer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The ZooKeeper tests' shared fixture, registered on a static field: one real ZooKeeper (Curator's
 * in-process {@link TestingServer}) for the test class, a fresh resource name for each test ({@code
 * <prefix>-<n>}), and the Curator clients a test starts ({@link #client}), connected before they
 * are returned and closed after the test.
 *
 * <pre>{@code
 * @RegisterExtension static final ZooKeeperFixture zk = new ZooKeeperFixture("tamper");
 * }</pre>
 */
final class ZooKeeperFixture
    implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {
  /** How long a test waits for ZooKeeper, a lock or a condition (a hang guard, not a timing). */
  static final Duration PATIENCE = Duration.ofSeconds(30);

  private static final AtomicInteger NAMES = new AtomicInteger();

  private final String prefix;
  private final List<CuratorFramework> testClients = new CopyOnWriteArrayList<>();
  private final List<CuratorFramework> classClients = new CopyOnWriteArrayList<>();
  private @Nullable TestingServer server;
  private @Nullable String resource;
  private boolean inTest;

  ZooKeeperFixture(String prefix) {
    this.prefix = prefix;
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    server = new TestingServer(true);
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    close(testClients);
    close(classClients);
    if (server != null) {
      server.close();
      server = null;
    }
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    resource = prefix + "-" + NAMES.incrementAndGet();
    inTest = true;
  }

  @Override
  public void afterEach(ExtensionContext context) {
    inTest = false;
    close(testClients);
  }

  private static void close(List<CuratorFramework> clients) {
    clients.forEach(CuratorFramework::close);
    clients.clear();
  }

  /** The ZooKeeper server of the test class. */
  TestingServer server() {
    if (server == null) {
      throw new IllegalStateException(
          "ZooKeeper is not started: register ZooKeeperFixture on a static field");
    }
    return server;
  }

  /** The server's connect string ({@code host:port}, no chroot). */
  String connectString() {
    return server().getConnectString();
  }

  /** The current test's resource name. */
  String resource() {
    if (resource == null) {
      throw new IllegalStateException("no test is running");
    }
    return resource;
  }

  /** A connected client (session timeout 20 s), closed after the test (or the class). */
  CuratorFramework client() throws InterruptedException {
    return client(b -> {});
  }

  /**
   * A connected client configured by {@code settings} after the defaults (the server's connect
   * string, session timeout 20 s, connection timeout 10 s, exponential back-off from 100 ms, 10
   * retries); closed after the test, or after the class if started outside a test.
   */
  CuratorFramework client(Consumer<CuratorFrameworkFactory.Builder> settings)
      throws InterruptedException {
    CuratorFrameworkFactory.Builder builder =
        CuratorFrameworkFactory.builder()
            .connectString(connectString())
            .sessionTimeoutMs(20_000)
            .connectionTimeoutMs(10_000)
            .retryPolicy(new ExponentialBackoffRetry(100, 10));
    settings.accept(builder);
    CuratorFramework client = builder.build();
    (inTest ? testClients : classClients).add(client);
    client.start();
    if (!client.blockUntilConnected((int) PATIENCE.toSeconds(), TimeUnit.SECONDS)) {
      throw new AssertionError("not connected to ZooKeeper within " + PATIENCE);
    }
    return client;
  }

  /**
   * {@code lock.tryAcquire(wait)} on another thread (the common pool); an interrupt fails the
   * future with an {@link IllegalStateException}.
   */
  static CompletableFuture<Optional<FencingToken>> tryAcquireAsync(
      ZooKeeperFencedLock lock, Duration wait) {
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
