package dev.fencing.benchmark.lease;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;

/**
 * Curator's {@code InterProcessMutex} on an in-process ZooKeeper ({@code TestingServer},
 * standalone, transaction log in a temporary directory, fsync on as ZooKeeper's default). Each
 * client has its own session, as separate processes would.
 */
final class ZooKeeperLocks implements LockService {
  static final String NAME = "ZooKeeper (Curator InterProcessMutex)";

  private final TestingServer server;
  private final String prefix;
  private final List<CuratorFramework> sessions = new ArrayList<>();

  ZooKeeperLocks(String prefix) throws Exception {
    this.server = new TestingServer(true);
    this.prefix = prefix;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String slug() {
    return "zookeeper";
  }

  @Override
  public Client client(int lock) throws InterruptedException {
    CuratorFramework session =
        CuratorFrameworkFactory.newClient(server.getConnectString(), new RetryOneTime(100));
    synchronized (sessions) {
      sessions.add(session);
    }
    session.start();
    if (!session.blockUntilConnected(30, TimeUnit.SECONDS)) {
      throw new IllegalStateException("no ZooKeeper session within 30 s");
    }
    InterProcessMutex mutex = new InterProcessMutex(session, prefix + lock);
    String path = prefix + lock;
    return () -> {
      if (!mutex.acquire(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the uncontended lock " + path + " was not free");
      }
      mutex.release();
    };
  }

  @Override
  public void close() throws Exception {
    synchronized (sessions) {
      sessions.forEach(CuratorFramework::close);
      sessions.clear();
    }
    server.close();
  }
}
