package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.LONG_TTL;
import static dev.fencing.jdbc.FencingTestSupport.PATIENCE;
import static dev.fencing.jdbc.FencingTestSupport.awaitLeaseExpired;
import static dev.fencing.jdbc.FencingTestSupport.awaitWaitingOnLock;
import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.insert;
import static dev.fencing.jdbc.FencingTestSupport.maxSeen;
import static dev.fencing.jdbc.FencingTestSupport.nextBlock;
import static dev.fencing.jdbc.FencingTestSupport.present;
import static dev.fencing.jdbc.FencingTestSupport.rejections;
import static dev.fencing.jdbc.FencingTestSupport.waitingOnLock;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Two clients in two threads over a {@link FencedDataSource}, with the interleavings forced by
 * latches and observed in {@code pg_stat_activity}: the handover waits for the old holder's open
 * fenced transaction, and a kept-alive lease lost to another client stops being carried.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class FencedThreadsTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;

  private final List<LeaseClient> clients = new ArrayList<>();
  private final ExecutorService executor = Executors.newCachedThreadPool();

  @BeforeAll
  static void migrate() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    FencingTestSupport.createTestSchema(plain);
  }

  @AfterEach
  void cleanUp() {
    clients.forEach(LeaseClient::close);
    executor.shutdownNow();
  }

  private LeaseClient client(LeaseClient.Builder builder) {
    LeaseClient client = builder.build();
    clients.add(client);
    return client;
  }

  private static void awaitLatch(CountDownLatch latch) throws InterruptedException {
    if (!latch.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)) {
      throw new AssertionError("latch not released within " + PATIENCE);
    }
  }

  /** What client 1 binds: its token as a number, or its Lease (which the client knows is lost). */
  enum ClientOneBinds {
    TOKEN,
    LEASE
  }

  @ParameterizedTest
  @EnumSource(ClientOneBinds.class)
  void theNextAcquireWaitsForTheOpenFencedTransactionThenTheOldHolderIsRefused(ClientOneBinds binds)
      throws Exception {
    String resource = "handover-" + binds.name().toLowerCase(Locale.ROOT);
    int base = nextBlock();
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    // bound as a number, the lease may expire at once; bound as a Lease, client 1 must write its
    // first row before the lease runs out by its own clock, which stands still until the test
    // moves it past the ttl (however slow a loaded machine is to start client 1's thread)
    Duration ttl = Duration.ofMillis(300);
    AtomicLong clientOneClock = new AtomicLong(System.nanoTime());
    Lease lease1 =
        client(LeaseClient.builder(plain).holder("client-1").nanoTime(clientOneClock::get))
            .tryAcquire(resource, ttl)
            .orElseThrow();
    long token1 = lease1.token().value();

    CountDownLatch checked = new CountDownLatch(1);
    CountDownLatch commit = new CountDownLatch(1);
    CountDownLatch acquired = new CountDownLatch(1);
    Future<Throwable> client1 =
        executor.submit(
            () -> {
              try (FencingScope scope =
                      binds == ClientOneBinds.TOKEN
                          ? Fencing.bind(FencingToken.of(resource, token1))
                          : Fencing.bind(lease1);
                  Connection c = fenced.getConnection()) {
                c.setAutoCommit(false);
                insert(c, base); // passes the check: the fence holds from here to the commit
                checked.countDown();
                awaitLatch(commit);
                c.commit();
                awaitLatch(acquired);
                return catchThrowable(
                    () -> {
                      insert(c, base + 1);
                      c.commit();
                    });
              }
            });

    awaitLatch(checked);
    awaitLeaseExpired(plain, resource);
    clientOneClock.addAndGet(ttl.toNanos()); // and now by client 1's clock too
    LeaseClient client2 =
        client(LeaseClient.builder(plain).holder("client-2").handoverTimeout(PATIENCE));
    Future<Lease> acquiring =
        executor.submit(() -> client2.tryAcquire(resource, LONG_TTL).orElseThrow());

    // client 2's try_acquire waits for client 1's transaction, on a row lock
    awaitWaitingOnLock(plain, "try_acquire", 1);
    assertThat(acquiring).isNotDone();
    assertThat(maxSeen(plain, resource)).isEqualTo(token1);

    commit.countDown();
    Lease lease2 = acquiring.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    long token2 = lease2.token().value();
    assertThat(token2).isGreaterThan(token1);
    assertThat(maxSeen(plain, resource)).isEqualTo(token2);
    assertThat(present(plain, base)).as("client 1's write, accepted before the handover").isTrue();

    acquired.countDown();
    Throwable refused = client1.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    if (binds == ClientOneBinds.TOKEN) {
      assertThat(refused)
          .isInstanceOfSatisfying(
              StaleFencingTokenException.class,
              e -> {
                assertThat(e.resource()).isEqualTo(resource);
                assertThat(e.presentedToken()).isEqualTo(token1);
                assertThat(e.maxSeen()).isEqualTo(token2);
              });
    } else {
      assertThat(refused)
          .isInstanceOfSatisfying(
              LeaseLostException.class, e -> assertThat(e.presentedToken()).isEqualTo(token1));
    }
    assertThat(present(plain, base + 1)).isFalse();
  }

  @Test
  void aKeptAliveLeaseLostToAnotherClientIsNoLongerCarried() throws Exception {
    String resource = "keep-alive-lost";
    int base = nextBlock();
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    AtomicReference<Throwable> cause = new AtomicReference<>();
    CountDownLatch told = new CountDownLatch(1);
    LeaseClient keeper =
        client(
            LeaseClient.builder(plain)
                .holder("keeper")
                .keepAlive(true)
                .renewFraction(0.01) // every 600 ms: the lease never runs out by the client clock
                .listener(
                    (lease, c) -> {
                      cause.set(c);
                      told.countDown();
                    }));
    Lease lease = keeper.tryAcquire(resource, LONG_TTL).orElseThrow();

    try (FencingScope scope = Fencing.bind(lease);
        Connection c = fenced.getConnection()) {
      insert(c, base);
      assertThat(present(plain, base)).isTrue();

      // from outside: the lease expires early and another client takes the resource, in one
      // transaction, so the keeper's renewal (every 600 ms) can only see the new holder, never
      // the expired lease without one (that would be a LeaseLostException, not this test's case)
      long takerToken;
      try (Connection t = plain.getConnection()) {
        t.setAutoCommit(false);
        try (PreparedStatement expire =
                t.prepareStatement(
                    "UPDATE fencing.lease SET expires_at = now() - interval '1 second'"
                        + " WHERE resource_id = (SELECT id FROM fencing.resource WHERE name = ?)");
            PreparedStatement take =
                t.prepareStatement(
                    "SELECT acquired, token FROM fencing.try_acquire(?, 'taker', interval '1 hour')")) {
          expire.setString(1, resource);
          assertThat(expire.executeUpdate()).isEqualTo(1);
          take.setString(1, resource);
          try (ResultSet rs = take.executeQuery()) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getBoolean("acquired")).isTrue();
            takerToken = rs.getLong("token");
          }
        }
        t.commit();
      }
      assertThat(takerToken).isGreaterThan(lease.token().value());

      await().atMost(PATIENCE).until(lease::isLost);
      awaitLatch(told);
      assertThat(cause.get()).isInstanceOf(StaleFencingTokenException.class);

      assertThatThrownBy(() -> insert(c, base + 1))
          .isInstanceOfSatisfying(
              LeaseLostException.class,
              e -> {
                assertThat(e.resource()).isEqualTo(resource);
                assertThat(e.presentedToken()).isEqualTo(lease.token().value());
                assertThat(e.getSQLState()).isEqualTo("ZF005");
              });
    }
    assertThat(present(plain, base + 1)).isFalse();
    assertThat(rejections(plain, resource, "lease_lost"))
        .as("the client's own refusal is in the rejection log (V7)")
        .isEqualTo(1);
  }

  @Test
  void aWriteAfterCommitInTheSameSqlStringIsFencedToo() throws Exception {
    // one string, two transactions: the check of the first must not let the write of the second
    // through once a newer token exists. The advisory lock holds the second part back until
    // client 2 has acquired.
    String resource = "commit-in-text";
    Lease first =
        client(LeaseClient.builder(plain).holder("client-1"))
            .tryAcquire(resource, LONG_TTL)
            .orElseThrow();
    first.close(); // released: its token stays accepted until the next acquisition
    long token1 = first.token().value();
    int base = nextBlock();
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    try (Connection gate = db.connect()) {
      exec(gate, "SELECT pg_advisory_lock(4242)");
      Future<Throwable> client1 =
          executor.submit(
              () -> {
                try (FencingScope scope = Fencing.bind(FencingToken.of(resource, token1));
                    Connection c = fenced.getConnection();
                    Statement s = c.createStatement()) {
                  c.setAutoCommit(false);
                  insert(c, base); // checked: the fence holds until the COMMIT below
                  return catchThrowable(
                      () -> {
                        s.execute(
                            "COMMIT; SELECT pg_advisory_lock(4242);"
                                + " INSERT INTO t (id, v) VALUES ("
                                + (base + 1)
                                + ", 1)");
                        c.commit();
                      });
                }
              });
      // Either the string is refused before it runs, or its second transaction waits at the gate.
      await()
          .atMost(PATIENCE)
          .until(() -> client1.isDone() || waitingOnLock(plain, "pg_advisory_lock(4242)") == 1);
      Lease lease2 =
          client(LeaseClient.builder(plain).holder("client-2").handoverTimeout(PATIENCE))
              .tryAcquire(resource, LONG_TTL)
              .orElseThrow();
      assertThat(lease2.token().value()).isGreaterThan(token1);
      exec(gate, "SELECT pg_advisory_unlock(4242)");

      Throwable refused = client1.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      assertThat(present(plain, base + 1))
          .as("row written with token %s after token %s was issued", token1, lease2.token().value())
          .isFalse();
      assertThat(refused).isInstanceOf(SQLException.class);
    }
  }
}
