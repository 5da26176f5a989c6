package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.testing.TestDatabaseExtension;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class LeaseKeepAliveTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  /** A ttl no test outlasts, even at load 40 on 2 cores (CI). */
  private static final Duration LONG = Duration.ofMinutes(10);

  private final List<LeaseClient> clients = new ArrayList<>();
  private final List<Call> calls = new CopyOnWriteArrayList<>();

  /** The threads that tried to renew while the database was unreachable, or reported a loss. */
  private final Set<Thread> keepAliveThreads = ConcurrentHashMap.newKeySet();

  /** One call of the listener, and the thread it ran on. */
  record Call(Lease lease, @Nullable Throwable cause, String thread, boolean daemon, long nanos) {}

  @BeforeAll
  static void migrate() {
    FencingTestSupport.migrate(db);
  }

  @AfterEach
  void closeClients() {
    clients.forEach(LeaseClient::close);
  }

  @Test
  void keepAliveKeepsTheLeaseValidAcrossSeveralRenewPeriods() throws SQLException {
    // renewals every 500 ms with 9.5 s of slack: a loaded machine (load 40 on 2 cores in CI)
    // may delay one by seconds, and losing the lease then would be right, not a failure
    Lease lease =
        keepAliveClient(db.dataSource(), 0.05).tryAcquire("kept", ttl(10_000)).orElseThrow();
    Instant firstExpiry = lease.expiresAt();
    List<Instant> expiries = new ArrayList<>(List.of(firstExpiry));
    List<Status> violations = new ArrayList<>();

    await()
        .atMost(FencingTestSupport.PATIENCE) // a hang guard: done once the 10 s ttl has passed
        .pollInterval(Duration.ofMillis(20))
        .until(
            () -> {
              Status s = status("kept");
              if (!s.valid() || !Long.valueOf(lease.token().value()).equals(s.token())) {
                violations.add(s);
              } else if (s.expiresAt().isAfter(expiries.get(expiries.size() - 1))) {
                expiries.add(s.expiresAt());
              }
              // moved forward 3 times, and still valid past the ttl of the acquisition
              return !violations.isEmpty() || (expiries.size() > 3 && s.now().isAfter(firstExpiry));
            });

    assertThat(violations).isEmpty();
    assertThat(expiries).hasSizeGreaterThan(3);
    assertThat(lease.isLost()).isFalse();
    assertThat(lease.expiresAt()).isAfter(firstExpiry);
    assertThat(calls).isEmpty();
  }

  @Test
  void aLeaseTakenOverBehindItsBackIsReportedLostExactlyOnce() throws SQLException {
    // renew every 300 ms; the 60 s ttl outlasts the test, so only the takeover ends the lease
    LeaseClient client = keepAliveClient(db.dataSource(), 0.005);
    Lease lease = client.tryAcquire("taken", ttl(60_000)).orElseThrow();

    expireOutsideTheClient("taken");
    Lease next =
        track(builder(db.dataSource()).holder("other").build())
            .tryAcquire("taken", LONG)
            .orElseThrow();

    await().atMost(FencingTestSupport.PATIENCE).until(() -> !calls.isEmpty());
    // several more renew periods (300 ms): no second call (atMost is only a hang guard)
    await()
        .during(Duration.ofMillis(800))
        .atMost(FencingTestSupport.PATIENCE)
        .until(() -> calls.size() == 1);
    Call call = calls.get(0);
    assertThat(call.lease()).isSameAs(lease);
    assertThat(call.cause()).isInstanceOf(FencingRefusedException.class);
    assertThat(call.thread()).startsWith("fencing-keepalive-");
    assertThat(call.daemon()).isTrue();
    assertThat(lease.isLost()).isTrue();
    assertThat(status("taken").token()).isEqualTo(next.token().value());
  }

  @Test
  void aLeaseTheKeepAliveCannotRenewIsLostAtItsExpiry() throws Exception {
    // The client's clock stands still until moved here; the keep-alive's ticks run in real time.
    AtomicLong clock = new AtomicLong(System.nanoTime());
    AtomicBoolean down = new AtomicBoolean();
    Semaphore refusals = new Semaphore(0);
    Duration ttl = ttl(600); // renewals every 200 ms (real time), expiry by the client's clock
    LeaseClient client =
        keepAliveClient(failingWhen(down, refusals, db.dataSource()), 1.0 / 3, clock::get);
    Lease lease = client.tryAcquire("outage", ttl).orElseThrow();

    down.set(true);
    // Two renewals refused: the first failure was handled, and the tick after it checked the
    // expiry (the client's clock has not moved since the acquisition) before renewing again.
    assertThat(refusals.tryAcquire(2, FencingTestSupport.PATIENCE.toSeconds(), TimeUnit.SECONDS))
        .as("two renewals tried while the database is unreachable (a hang guard)")
        .isTrue();
    assertThat(calls).as("no loss reported before the ttl passed on the client's clock").isEmpty();
    assertThat(lease.isLost()).isFalse();

    // The expiry is reckoned from before the acquisition's query: at most the ttl after it.
    clock.addAndGet(ttl.toNanos());
    await().atMost(FencingTestSupport.PATIENCE).until(() -> !calls.isEmpty()); // a hang guard
    // A keep-alive that went on after reporting would tick again within a renew period (200 ms)
    await()
        .during(Duration.ofMillis(500))
        .atMost(FencingTestSupport.PATIENCE) // a hang guard; no second call for 500 ms
        .until(() -> calls.size() == 1);
    // No keep-alive tick left to run: the client's scheduler is shut down and every thread that
    // renewed or reported this lease has ended; then the reports are counted.
    client.close();
    for (Thread t : keepAliveThreads) {
      t.join(FencingTestSupport.PATIENCE.toMillis()); // a hang guard
      assertThat(t.isAlive()).as("%s ended after the client closed", t.getName()).isFalse();
    }
    assertThat(calls).as("the loss is reported exactly once").hasSize(1);
    Call call = calls.get(0);
    assertThat(call.lease()).isSameAs(lease);
    assertThat(call.cause()).isInstanceOf(SQLException.class).hasMessageContaining("refused");
    assertThat(lease.isLost()).isTrue();
  }

  @Test
  void closingTheLeaseStopsItsKeepAlive() throws SQLException {
    Lease lease = keepAliveClient(db.dataSource()).tryAcquire("closed", ttl(300)).orElseThrow();

    lease.close();

    assertThat(status("closed").holder()).isNull();
    // a renewal after close would be refused as released and reported to the listener
    await()
        .during(Duration.ofMillis(500))
        .atMost(FencingTestSupport.PATIENCE) // a hang guard; no call for 500 ms
        .until(calls::isEmpty);
    assertThat(lease.isLost()).isTrue();
  }

  @Test
  void closingTheClientStopsRenewingButReleasesNothing() throws SQLException {
    LeaseClient client = keepAliveClient(db.dataSource());
    Lease lease = client.tryAcquire("client-closed", ttl(300)).orElseThrow();

    client.close();

    assertThat(status("client-closed").holder()).isEqualTo("kept");
    await().atMost(FencingTestSupport.PATIENCE).until(() -> !status("client-closed").valid());
    assertThat(status("client-closed").token()).isEqualTo(lease.token().value());
    assertThat(lease.isLost()).isTrue();
  }

  @Test
  void noListenerCallBeginsAfterCloseReturned() throws Exception {
    // The keep-alive found the lease lost and is about to call the listener when close() comes.
    // Once run out, every reading of the client's clock is a ttl past the last: whatever a renewal
    // under way reckons from its own reading has run out by the next.
    AtomicLong clock = new AtomicLong(System.nanoTime());
    AtomicBoolean runOut = new AtomicBoolean();
    Duration ttl = ttl(600);
    LongSupplier nanoTime = () -> runOut.get() ? clock.addAndGet(ttl.toNanos()) : clock.get();
    Lease lease =
        keepAliveClient(db.dataSource(), 1.0 / 3, nanoTime)
            .tryAcquire("closed-meanwhile", ttl)
            .orElseThrow();
    CountDownLatch atTheListener = new CountDownLatch(1);
    CountDownLatch closeReturned = new CountDownLatch(1);
    lease.beforeListenerClaim =
        () -> {
          atTheListener.countDown();
          awaitLatch(closeReturned);
        };
    // the lease runs out by the client's clock: a tick (every 200 ms) reports it lost
    runOut.set(true);
    assertThat(atTheListener.await(FencingTestSupport.PATIENCE.toSeconds(), TimeUnit.SECONDS))
        .as("the keep-alive is about to call the listener (a hang guard)")
        .isTrue();

    lease.close();
    closeReturned.countDown();

    // every tick has ended once the client's scheduler has terminated (none interrupted)
    assertThat(clients.get(clients.size() - 1).drainKeepAlive(FencingTestSupport.PATIENCE))
        .isTrue();
    assertThat(calls).as("no listener call after close() returned").isEmpty();
    assertThat(lease.isLost()).isTrue();
  }

  private static void awaitLatch(CountDownLatch latch) {
    try {
      if (!latch.await(FencingTestSupport.PATIENCE.toSeconds(), TimeUnit.SECONDS)) {
        throw new IllegalStateException("latch not counted down (a hang guard)");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  // --- helpers ---------------------------------------------------------------------------------

  private static Duration ttl(long millis) {
    return Duration.ofMillis(millis);
  }

  private static LeaseClient.Builder builder(DataSource dataSource) {
    return LeaseClient.builder(dataSource);
  }

  private LeaseClient keepAliveClient(DataSource dataSource) {
    return keepAliveClient(dataSource, 1.0 / 3);
  }

  private LeaseClient keepAliveClient(DataSource dataSource, double renewFraction) {
    return keepAliveClient(dataSource, renewFraction, System::nanoTime);
  }

  private LeaseClient keepAliveClient(
      DataSource dataSource, double renewFraction, LongSupplier nanoTime) {
    return track(
        builder(dataSource)
            .nanoTime(nanoTime)
            .holder("kept")
            .keepAlive(true)
            .renewFraction(renewFraction)
            .listener(
                (lease, cause) -> {
                  keepAliveThreads.add(Thread.currentThread());
                  calls.add(
                      new Call(
                          lease,
                          cause,
                          Thread.currentThread().getName(),
                          Thread.currentThread().isDaemon(),
                          System.nanoTime()));
                })
            .build());
  }

  private LeaseClient track(LeaseClient client) {
    clients.add(client);
    return client;
  }

  record Status(
      @Nullable String holder,
      @Nullable Long token,
      Instant expiresAt,
      boolean valid,
      Instant now) {}

  private static Status status(String resource) throws SQLException {
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT s.holder, s.lease_token, s.expires_at, s.lease_valid, clock_timestamp()"
                    + " FROM fencing.status(?) s")) {
      ps.setString(1, resource);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        long token = rs.getLong(2);
        Long tokenOrNull = rs.wasNull() ? null : token;
        return new Status(
            rs.getString(1),
            tokenOrNull,
            rs.getObject(3, OffsetDateTime.class).toInstant(),
            rs.getBoolean(4),
            rs.getObject(5, OffsetDateTime.class).toInstant());
      }
    }
  }

  /** As superuser, behind the client's back: the lease expired a second ago. */
  private static void expireOutsideTheClient(String resource) throws SQLException {
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "UPDATE fencing.lease SET expires_at = now() - interval '1 second'"
                    + " WHERE resource_id = (SELECT id FROM fencing.resource WHERE name = ?)")) {
      ps.setString(1, resource);
      assertThat(ps.executeUpdate()).isOne();
    }
  }

  /**
   * {@code dataSource}, refusing connections while {@code down} is set; each refusal releases a
   * permit of {@code refusals} and its thread is kept in {@link #keepAliveThreads}.
   */
  private DataSource failingWhen(AtomicBoolean down, Semaphore refusals, DataSource dataSource) {
    Object proxy =
        Proxy.newProxyInstance(
            DataSource.class.getClassLoader(),
            new Class<?>[] {DataSource.class},
            (self, method, args) -> {
              if (down.get() && method.getName().equals("getConnection")) {
                keepAliveThreads.add(Thread.currentThread());
                refusals.release();
                throw new SQLException("Connection to 127.0.0.1:5432 refused (test)", "08001");
              }
              try {
                return method.invoke(dataSource, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
    return (DataSource) proxy;
  }
}
