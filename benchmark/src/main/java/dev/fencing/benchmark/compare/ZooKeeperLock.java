package dev.fencing.benchmark.compare;

import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.zookeeper.ZooKeeperFencedLock;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;

/**
 * Row 3: {@code fencing-zookeeper}'s {@link ZooKeeperFencedLock} (token = czxid of the lock node),
 * used as its README's quick start shows: declare the resource external, acquire, {@link
 * FencedDataSource#fence(FencingToken) fence(token)}, then write through the {@link
 * FencedDataSource} with the token bound. The variant {@link #WITHOUT_FENCE} skips {@code fence()},
 * which the quick start marks optional, to show what it changes.
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
          "fencing-zookeeper's ZooKeeperFencedLock (Curator mutex, token = czxid of the lock node,"
              + " Zab order), then FencedDataSource.fence(token) as its quick start shows: the"
              + " previous holder is fenced at acquisition. Needs a ZooKeeper ensemble.");

  static final Spec WITHOUT_FENCE =
      new Spec(
          "ZooKeeper lock + zxid / znode version, without fence()",
          true,
          "Yes",
          "The same lock, skipping the optional fence(token): PostgreSQL learns the token from the"
              + " new holder's first write, so the previous holder is fenced only from then on.");

  private final Spec spec;
  private final boolean fenceOnAcquire;
  private final String connectString;
  private final InetSocketAddress server;
  private final String root;
  private final FencedDataSource fenced;
  private final Duration sessionTimeout;
  private final CuratorFramework observer;
  private final AutoCloseable ownedServer;

  /**
   * @param connectString one ZooKeeper server, {@code host:port}
   * @param root the znode under which this run's locks live; unique per run
   * @param sessionTimeout the lease: how long a silent client keeps its session
   * @param fenceOnAcquire whether a client calls {@code fence(token)} right after acquiring
   * @param ownedServer closed with this approach (an in-process server), or a no-op
   */
  ZooKeeperLock(
      String connectString,
      String root,
      DataSource plain,
      Duration sessionTimeout,
      boolean fenceOnAcquire,
      AutoCloseable ownedServer)
      throws InterruptedException {
    this.spec = fenceOnAcquire ? SPEC : WITHOUT_FENCE;
    this.fenceOnAcquire = fenceOnAcquire;
    this.ownedServer = ownedServer;
    this.connectString = connectString;
    int colon = connectString.lastIndexOf(':');
    this.server =
        new InetSocketAddress(
            connectString.substring(0, colon),
            Integer.parseInt(connectString.substring(colon + 1)));
    this.root = root;
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
    return spec;
  }

  @Override
  public Hold acquire(String resource, String client) throws Exception {
    fenced.createExternalResource(resource);
    FreezableProxy proxy = new FreezableProxy(server);
    CuratorFramework curator = null;
    try {
      curator = client("127.0.0.1:" + proxy.port());
      ZooKeeperFencedLock lock =
          ZooKeeperFencedLock.builder(curator, resource).lockPath(root + "/" + resource).build();
      FencingToken token = lock.acquire(Scenario.patience(sessionTimeout));
      if (fenceOnAcquire) {
        fenced.fence(token);
      }
      return new RelayedHold(fenced, proxy, curator, lock, token);
    } catch (Exception | Error e) {
      if (curator != null) {
        curator.close();
      }
      proxy.close();
      throw e;
    }
  }

  /** Client 1's process stops (its connection freezes) until ZooKeeper deletes its lock node. */
  @Override
  public void awaitExpiry(Hold hold) throws Exception {
    RelayedHold held = (RelayedHold) hold;
    held.freeze();
    ZooKeeperFencedLock lock = (ZooKeeperFencedLock) held.lock();
    String path = lock.lockPath();
    long czxid = held.tokenValue();
    Poll.until(
        "expiry of the ZooKeeper session holding czxid " + czxid + " under " + path,
        Scenario.patience(sessionTimeout),
        () -> !holdsNode(path, czxid));
  }

  /** Whether a lock node created at {@code czxid} is still among the children of {@code path}. */
  private boolean holdsNode(String path, long czxid) throws Exception {
    if (observer.checkExists().forPath(path) == null) {
      return false;
    }
    for (String child : observer.getChildren().forPath(path)) {
      var stat = observer.checkExists().forPath(path + "/" + child);
      if (stat != null && stat.getCzxid() == czxid) {
        return true;
      }
    }
    return false;
  }

  @Override
  public void close() throws Exception {
    try (AutoCloseable server = ownedServer) {
      observer.close();
    }
  }

  @Override
  public String toString() {
    return "ZooKeeperLock[" + connectString + root + (fenceOnAcquire ? "" : ", no fence()") + "]";
  }
}
