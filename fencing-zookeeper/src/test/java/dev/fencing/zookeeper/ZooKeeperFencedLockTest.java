package dev.fencing.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencedLock;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingExceptions;
import dev.fencing.jdbc.FencingRefusedException;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link ZooKeeperFencedLock} against a real ZooKeeper (Curator's in-process {@link TestingServer})
 * and a real PostgreSQL: tokens increase across holders, sessions and container re-creation; a
 * holder whose session expired is refused by PostgreSQL once the next holder wrote.
 */
class ZooKeeperFencedLockTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();
  @RegisterExtension static final ZooKeeperFixture zk = new ZooKeeperFixture("zk");

  private static final Duration PATIENCE = ZooKeeperFixture.PATIENCE;
  private static final Duration SHORT = Duration.ofMillis(200);

  private static HikariDataSource pool;
  private static FencedDataSource fenced;

  private String resource;

  @BeforeAll
  static void start() throws Exception {
    FencingMigrations.builder(db.migrationDataSource())
        .ownerRole(db.ownerRole())
        .applicationRole(db.appRole())
        .build()
        .migrate();
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(db.jdbcUrl());
    config.setUsername(db.user());
    config.setPassword(db.password());
    config.setMaximumPoolSize(3);
    pool = new HikariDataSource(config);
    fenced = FencedDataSource.wrap(pool);
    Ledger.create(pool);
  }

  @AfterAll
  static void stop() throws Exception {
    pool.close();
  }

  @BeforeEach
  void declareResource() throws SQLException {
    resource = zk.resource();
    fenced.createExternalResource(resource);
  }

  private CuratorFramework client() throws InterruptedException {
    return zk.client();
  }

  private ZooKeeperFencedLock lock(CuratorFramework client) {
    return ZooKeeperFencedLock.builder(client, resource).build();
  }

  /**
   * Ends {@code client}'s session on the server at once, as a session timeout during a long pause
   * would: a second connection joins the session and closes it, so ZooKeeper deletes the session's
   * ephemeral nodes. The client learns of it only later, when it reconnects.
   */
  private static void expireSession(CuratorFramework client) throws Exception {
    ZooKeeper handle = client.getZookeeperClient().getZooKeeper();
    CountDownLatch connected = new CountDownLatch(1);
    ZooKeeper twin =
        new ZooKeeper(
            zk.connectString(),
            20_000,
            event -> {
              if (event.getState() == KeeperState.SyncConnected) {
                connected.countDown();
              }
            },
            handle.getSessionId(),
            handle.getSessionPasswd());
    try {
      assertThat(connected.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
    } finally {
      twin.close();
    }
  }

  @Test
  void zombieWhoseSessionExpiredIsRefusedAfterTheNextHolderWrote() throws Exception {
    CuratorFramework clientA = client();
    CuratorFramework clientB = client();
    try (ZooKeeperFencedLock lockA = lock(clientA);
        ZooKeeperFencedLock lockB = lock(clientB)) {
      FencingToken tokenA = lockA.acquire(PATIENCE);
      Ledger.write(fenced, tokenA, "A before the pause");
      assertThat(Ledger.maxSeen(pool, resource)).isEqualTo(tokenA.value());

      expireSession(clientA); // A is "paused": it does not know yet

      FencingToken tokenB = lockB.acquire(PATIENCE);
      assertThat(tokenB.value()).isGreaterThan(tokenA.value());
      Ledger.write(fenced, tokenB, "B");
      assertThat(Ledger.maxSeen(pool, resource)).isEqualTo(tokenB.value());

      // A wakes up and writes with the token it holds
      assertThatThrownBy(() -> Ledger.write(fenced, tokenA, "A after the pause"))
          .isInstanceOf(StaleFencingTokenException.class)
          .satisfies(
              e -> {
                FencingRefusedException refusal = (FencingRefusedException) e;
                assertThat(refusal.getSQLState()).isEqualTo("ZF001");
                assertThat(refusal.resource()).isEqualTo(resource);
                assertThat(refusal.presentedToken()).isEqualTo(tokenA.value());
                assertThat(refusal.maxSeen()).isEqualTo(tokenB.value());
              });
      assertThat(Ledger.contains(pool, resource, "A after the pause")).isFalse();
      assertThat(Ledger.contains(pool, resource, "A before the pause")).isTrue();
      assertThat(Ledger.contains(pool, resource, "B")).isTrue();
      assertThat(
              Ledger.count(
                  pool,
                  "SELECT count(*) FROM fencing.rejection WHERE resource = ? AND token = "
                      + tokenA.value(),
                  resource))
          .isOne();

      // once A's client learns of the expiry, the lock says so
      await().atMost(PATIENCE).until(() -> !lockA.isHeld());
      assertThat(lockA.token()).isEmpty();
      assertThat(lockB.isHeld()).isTrue();
      assertThat(lockB.token()).contains(tokenB);
    }
  }

  @Test
  void reacquiringAfterSessionLossGivesAGreaterToken() throws Exception {
    CuratorFramework client = client();
    try (ZooKeeperFencedLock lock = lock(client)) {
      FencingToken first = lock.acquire(PATIENCE);
      expireSession(client);
      await().atMost(PATIENCE).until(() -> !lock.isHeld());
      lock.release(); // the node is gone with the session; releasing only forgets it
      assertThat(client.blockUntilConnected((int) PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
      FencingToken second = lock.acquire(PATIENCE);
      assertThat(second.value()).isGreaterThan(first.value());
      Ledger.write(fenced, second, "after the new session");
      assertThatThrownBy(() -> Ledger.write(fenced, first, "old session"))
          .isInstanceOf(StaleFencingTokenException.class);
    }
  }

  /**
   * A holding whose session ZooKeeper ended is not held (FencedLock: "already held" only if held):
   * the next acquisition on the acquiring thread acquires anew, without a release() first.
   */
  @Test
  void aHoldingWhoseSessionEndedDoesNotMakeTheLockAlreadyHeld() throws Exception {
    CuratorFramework client = client();
    try (ZooKeeperFencedLock lock = lock(client)) {
      FencingToken first = lock.acquire(PATIENCE);
      expireSession(client);
      await().atMost(PATIENCE).until(() -> !lock.isHeld());
      assertThat(client.blockUntilConnected((int) PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
      await()
          .atMost(PATIENCE)
          .until(() -> client.getZookeeperClient().getZooKeeper().getSessionId() != 0);
      FencingToken second = lock.acquire(PATIENCE);
      assertThat(second.value()).isGreaterThan(first.value());
      assertThat(lock.token()).contains(second);
      assertThat(client.getChildren().forPath(lock.lockPath())).hasSize(1);
      Ledger.write(fenced, second, "after the new session");
      assertThatThrownBy(() -> Ledger.write(fenced, first, "old session"))
          .isInstanceOf(StaleFencingTokenException.class);
      lock.release();
      assertThat(client.getChildren().forPath(lock.lockPath())).isEmpty();
    }
  }

  /**
   * The lock node deleted by someone else (an operator kicking a stuck holder): ZooKeeper dropped
   * the lock and the next contender holds it. The holder is told by a watch on its node: isHeld()
   * turns false (it stayed true for as long as the session lived), and the next acquisition
   * acquires anew.
   */
  @Test
  void aLockNodeDeletedByAnotherClientIsNoLongerHeld() throws Exception {
    CuratorFramework clientA = client();
    CuratorFramework clientB = client();
    try (ZooKeeperFencedLock lockA = lock(clientA);
        ZooKeeperFencedLock lockB = lock(clientB)) {
      FencingToken tokenA = lockA.acquire(PATIENCE);
      String node = clientB.getChildren().forPath(lockA.lockPath()).get(0);
      clientB.delete().forPath(lockA.lockPath() + "/" + node);
      FencingToken tokenB = lockB.acquire(PATIENCE);
      assertThat(tokenB.value()).isGreaterThan(tokenA.value());
      await().atMost(PATIENCE).until(() -> !lockA.isHeld());
      assertThat(lockA.token()).isEmpty();
      assertThat(lockB.isHeld()).isTrue();
      lockB.release();
      FencingToken again = lockA.acquire(PATIENCE);
      assertThat(again.value()).isGreaterThan(tokenB.value());
      assertThat(lockA.isHeld()).isTrue();
    }
  }

  /** Lost on one thread, asked on another: Curator's mutex is per thread; said clearly. */
  @Test
  void aLostHoldingIsForgottenOnlyOnTheAcquiringThread() throws Exception {
    CuratorFramework client = client();
    try (ZooKeeperFencedLock lock = lock(client)) {
      lock.acquire(PATIENCE);
      expireSession(client);
      await().atMost(PATIENCE).until(() -> !lock.isHeld());
      assertThat(client.blockUntilConnected((int) PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
      CompletableFuture<FencingToken> elsewhere =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return lock.acquire(PATIENCE);
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              });
      assertThatThrownBy(() -> elsewhere.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
          .hasRootCauseInstanceOf(IllegalStateException.class)
          .hasMessageContaining("session that held it")
          .hasMessageContaining("thread that acquired");
    }
  }

  @Test
  void tokensIncreaseAcrossHoldersAndAcrossRecreationOfTheLockPath() throws Exception {
    CuratorFramework one = client();
    CuratorFramework two = client();
    List<Long> tokens = new ArrayList<>();
    for (int round = 0; round < 3; round++) {
      for (CuratorFramework client : List.of(one, two)) {
        try (ZooKeeperFencedLock lock = lock(client)) {
          FencingToken token = lock.acquire(PATIENCE);
          Ledger.write(fenced, token, "round " + round + " " + tokens.size());
          tokens.add(token.value());
        }
      }
      // ZooKeeper deletes an empty container node (the lock path) by itself, and sequence numbers
      // restart under a re-created one; the czxid does not
      String path = lock(one).lockPath();
      one.delete().forPath(path);
    }
    assertThat(tokens).hasSize(6).isSorted().doesNotHaveDuplicates();
    assertThat(Ledger.maxSeen(pool, resource)).isEqualTo(tokens.get(tokens.size() - 1));
  }

  @Test
  void sequenceNumbersRestartUnderARecreatedPathWhileTokensDoNot() throws Exception {
    CuratorFramework client = client();
    ZooKeeperFencedLock lock = lock(client);
    List<String> nodes = new ArrayList<>();
    List<Long> tokens = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      tokens.add(lock.acquire(PATIENCE).value());
      nodes.add(client.getChildren().forPath(lock.lockPath()).get(0));
      lock.release();
      client.delete().forPath(lock.lockPath());
    }
    lock.close();
    assertThat(nodes.get(0)).endsWith("0000000000");
    assertThat(nodes.get(1)).endsWith("0000000000");
    assertThat(tokens.get(1)).isGreaterThan(tokens.get(0));
  }

  @Test
  void contentionIsNotAnErrorAndTheNextHolderGetsAGreaterToken() throws Exception {
    CuratorFramework clientA = client();
    CuratorFramework clientB = client();
    try (ZooKeeperFencedLock lockA = lock(clientA);
        ZooKeeperFencedLock lockB = lock(clientB)) {
      FencingToken tokenA = lockA.acquire(PATIENCE);
      assertThat(lockB.tryAcquire(SHORT)).isEmpty();
      assertThatThrownBy(() -> lockB.acquire(SHORT))
          .isInstanceOf(TimeoutException.class)
          .hasMessageContaining(resource);
      assertThat(lockB.isHeld()).isFalse();

      CompletableFuture<FencingToken> waiting =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  FencingToken t = lockB.acquire(PATIENCE);
                  lockB.release(); // same thread as the acquire
                  return t;
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              });
      await()
          .atMost(PATIENCE)
          .until(() -> clientA.getChildren().forPath(lockA.lockPath()).size() == 2);
      assertThat(waiting).isNotDone();
      lockA.release();
      assertThat(lockA.isHeld()).isFalse();
      assertThat(lockA.token()).isEmpty();
      FencingToken tokenB = waiting.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      assertThat(tokenB.value()).isGreaterThan(tokenA.value());
    }
  }

  @Test
  void reconnectingWithinTheSessionKeepsTheLockAndItsToken() throws Exception {
    CuratorFramework clientA = client();
    CuratorFramework clientB = client();
    try (ZooKeeperFencedLock lockA = lock(clientA);
        ZooKeeperFencedLock lockB = lock(clientB)) {
      FencingToken token = lockA.acquire(PATIENCE);
      long session = clientA.getZookeeperClient().getZooKeeper().getSessionId();
      zk.server().restart(); // every connection drops; sessions survive (20 s timeout)
      assertThat(clientA.blockUntilConnected((int) PATIENCE.toSeconds(), TimeUnit.SECONDS))
          .isTrue();
      await().atMost(PATIENCE).until(lockA::isHeld);
      assertThat(clientA.getZookeeperClient().getZooKeeper().getSessionId()).isEqualTo(session);
      assertThat(lockA.token()).contains(token);
      assertThat(lockB.tryAcquire(SHORT)).isEmpty();
      Ledger.write(fenced, token, "after the reconnect");
      assertThat(Ledger.maxSeen(pool, resource)).isEqualTo(token.value());
    }
  }

  @Test
  void misuseAndBadInputAreRefusedClearly() throws Exception {
    CuratorFramework client = client();
    assertThatThrownBy(() -> ZooKeeperFencedLock.builder(client, "bad name").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("position 4");
    assertThatThrownBy(() -> ZooKeeperFencedLock.builder(client, "").build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ZooKeeperFencedLock.builder(client, "..").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lockPath(...)");
    assertThat(ZooKeeperFencedLock.builder(client, "a/../b").build().lockPath())
        .as("each / of the resource is written %2F")
        .isEqualTo("/fencing/locks/a%2F..%2Fb");
    assertThatThrownBy(() -> ZooKeeperFencedLock.builder(client, "r").lockPath("no-slash").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no-slash");
    assertThat(ZooKeeperFencedLock.builder(client, "a/../b").lockPath("/locks/ab").build())
        .isNotNull();
    CuratorFramework unstarted =
        CuratorFrameworkFactory.newClient(zk.connectString(), new ExponentialBackoffRetry(100, 1));
    assertThatThrownBy(() -> ZooKeeperFencedLock.builder(unstarted, "r").build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("started");

    FencedLock lock = lock(client);
    assertThatThrownBy(() -> lock.tryAcquire(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class);
    FencingToken token = lock.acquire(PATIENCE);
    assertThatThrownBy(() -> lock.acquire(PATIENCE))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("already held");
    CompletableFuture<Void> elsewhere = CompletableFuture.runAsync(lock::release);
    assertThatThrownBy(() -> elsewhere.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
        .hasCauseInstanceOf(IllegalStateException.class)
        .hasMessageContaining("thread that acquired");
    assertThat(lock.token()).as("still held after the refused release").contains(token);
    lock.close();
    lock.close();
    assertThat(lock.isHeld()).isFalse();
    assertThat(client.getChildren().forPath(((ZooKeeperFencedLock) lock).lockPath())).isEmpty();
    assertThatThrownBy(() -> lock.tryAcquire(SHORT))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed");
  }

  /** The README's quick start, as written there (with the test's table). */
  @Test
  void quickStartWorksAsDocumented() throws Exception {
    CuratorFramework curator = client();
    FencedDataSource db = FencedDataSource.wrap(pool);
    boolean refused = false;

    db.createExternalResource("ledger"); // once (idempotent): its tokens come from elsewhere
    try (ZooKeeperFencedLock lock = ZooKeeperFencedLock.builder(curator, "ledger").build()) {
      FencingToken token = lock.acquire(Duration.ofSeconds(10)); // the czxid of the lock node
      db.fence(token); // optional: fence the previous holder off now, not at the first write
      try (FencingScope scope = Fencing.bind(token);
          Connection c = db.getConnection()) {
        c.setAutoCommit(false);
        try (PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO ledger (resource, note, token) VALUES ('ledger', ?, ?)")) {
          ps.setString(1, "quick start");
          ps.setLong(2, token.value());
          ps.executeUpdate(); // PostgreSQL checks the token first
        }
        c.commit();
      }
    } catch (SQLException e) {
      if (FencingExceptions.find(e).isPresent()) {
        refused = true; // a later holder has written: stop, never retry
      }
    }

    assertThat(refused).isFalse();
    assertThat(Ledger.contains(pool, "ledger", "quick start")).isTrue();
    assertThat(Ledger.maxSeen(pool, "ledger")).isPositive();
  }
}
