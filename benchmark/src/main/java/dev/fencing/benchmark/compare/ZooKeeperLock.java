package dev.fencing.benchmark.compare;

import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencingToken;
import java.io.IOException;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

/**
 * Row 3, <b>stand-in until the comparison uses {@code fencing-zookeeper}</b>: Curator's {@code
 * InterProcessMutex}, token = the czxid of the holder's lock node (ZooKeeper's total order),
 * carried by {@link FencedDataSource} to an external resource. To switch, replace {@link #acquire}
 * and {@link Held} with the module's lock; the scenario and the table stay as they are.
 *
 * <p>Each client has its own session, reached through its own {@link FreezableProxy}: ZooKeeper's
 * client renews the session from a background thread, so client 1's pause is made real by freezing
 * its connection (a GC pause stops those threads too). The server then expires the session and
 * deletes the lock node, which is what {@link #awaitExpiry} watches for.
 */
final class ZooKeeperLock implements Approach {
  static final Spec SPEC =
      new Spec(
          "ZooKeeper lock + zxid / znode version",
          true,
          "Yes",
          "Curator InterProcessMutex, token = czxid of the lock node (Zab order), checked by"
              + " PostgreSQL as an external token: fenced from the new holder's first write, not"
              + " from its acquisition. Needs a ZooKeeper ensemble.");

  private final String connectString;
  private final InetSocketAddress server;
  private final String root;
  private final DataSource plain;
  private final DataSource fenced;
  private final Duration sessionTimeout;
  private final CuratorFramework observer;
  private final AutoCloseable ownedServer;

  /**
   * @param connectString one ZooKeeper server, {@code host:port}
   * @param root the znode under which this run's locks live; unique per run
   * @param sessionTimeout the lease: how long a silent client keeps its session
   * @param ownedServer closed with this approach (an in-process server), or a no-op
   */
  ZooKeeperLock(
      String connectString,
      String root,
      DataSource plain,
      Duration sessionTimeout,
      AutoCloseable ownedServer)
      throws InterruptedException {
    this.ownedServer = ownedServer;
    this.connectString = connectString;
    int colon = connectString.lastIndexOf(':');
    this.server =
        new InetSocketAddress(
            connectString.substring(0, colon),
            Integer.parseInt(connectString.substring(colon + 1)));
    this.root = root;
    this.plain = plain;
    this.fenced = FencedDataSource.wrap(plain);
    this.sessionTimeout = sessionTimeout;
    this.observer = client(connectString);
  }

  private CuratorFramework client(String connect) throws InterruptedException {
    CuratorFramework client =
        CuratorFrameworkFactory.builder()
            .connectString(connect)
            .sessionTimeoutMs((int) sessionTimeout.toMillis())
            .connectionTimeoutMs((int) sessionTimeout.toMillis())
            .retryPolicy(new RetryOneTime(10))
            .build();
    client.start();
    if (!client.blockUntilConnected(
        (int) Scenario.patience(sessionTimeout).toMillis(), TimeUnit.MILLISECONDS)) {
      client.close();
      throw new IllegalStateException("ZooKeeper at " + connect + " did not answer");
    }
    return client;
  }

  @Override
  public Spec spec() {
    return SPEC;
  }

  @Override
  public Hold acquire(String resource, String client) throws Exception {
    createExternalResource(resource);
    FreezableProxy proxy = new FreezableProxy(server);
    CuratorFramework curator = null;
    try {
      curator = client("127.0.0.1:" + proxy.port());
      Mutex mutex = new Mutex(curator, root + "/" + resource);
      if (!mutex.acquire(Scenario.patience(sessionTimeout).toMillis(), TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException(client + " did not get the ZooKeeper lock on " + resource);
      }
      String node = mutex.lockPath();
      Stat stat = curator.checkExists().forPath(node);
      if (stat == null) {
        throw new IllegalStateException("lock node " + node + " vanished right after acquiring");
      }
      return new Held(resource, proxy, curator, mutex, node, stat.getCzxid());
    } catch (Exception | Error e) {
      if (curator != null) {
        curator.close();
      }
      proxy.close();
      throw e;
    }
  }

  private void createExternalResource(String resource) throws SQLException {
    try (Connection c = plain.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT fencing.create_resource(?, true)")) {
      ps.setString(1, resource);
      ps.execute();
    }
  }

  /** Client 1's process stops (its connection freezes) until ZooKeeper deletes its lock node. */
  @Override
  public void awaitExpiry(Hold hold) throws Exception {
    Held held = (Held) hold;
    held.proxy.freeze();
    Poll.until(
        "expiry of the ZooKeeper session holding " + held.node,
        Scenario.patience(sessionTimeout),
        () -> observer.checkExists().forPath(held.node) == null);
  }

  @Override
  public void close() throws Exception {
    try (AutoCloseable server = ownedServer) {
      observer.close();
    }
  }

  @Override
  public String toString() {
    return "ZooKeeperLock[" + connectString + root + "]";
  }

  /** Curator's mutex, with the path of the node it created. */
  private static final class Mutex extends InterProcessMutex {
    Mutex(CuratorFramework client, String path) {
      super(client, path);
    }

    String lockPath() {
      @Nullable String path = getLockPath();
      if (path == null) {
        throw new IllegalStateException("not held by this thread");
      }
      return path;
    }
  }

  private final class Held implements Hold {
    private final String resource;
    private final FreezableProxy proxy;
    private final CuratorFramework curator;
    private final Mutex mutex;
    private final String node;
    private final long czxid;

    Held(
        String resource,
        FreezableProxy proxy,
        CuratorFramework curator,
        Mutex mutex,
        String node,
        long czxid) {
      this.resource = resource;
      this.proxy = proxy;
      this.curator = curator;
      this.mutex = mutex;
      this.node = node;
      this.czxid = czxid;
    }

    @Override
    public Optional<BigInteger> token() {
      return Optional.of(BigInteger.valueOf(czxid));
    }

    /** The process resumes, unaware, and writes with the czxid it was given. */
    @Override
    public Outcome write(Write write) throws SQLException {
      proxy.thaw();
      return Writes.fenced(fenced, FencingToken.of(resource, czxid), write);
    }

    @Override
    public void release() throws IOException {
      proxy.thaw();
      try {
        mutex.release();
      } catch (Exception e) {
        // a zombie's session is gone, and its node with it: nothing left to release
      } finally {
        curator.close();
        proxy.close();
      }
    }
  }
}
