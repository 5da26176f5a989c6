package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.LONG_TTL;
import static dev.fencing.jdbc.FencingTestSupport.PATIENCE;
import static dev.fencing.jdbc.FencingTestSupport.awaitLeaseExpired;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 12, item 7: {@link Lease#isLost()} is the client's reckoning on its own monotonic clock; a
 * clock that stands still (a paused VM, a suspended host) keeps it false after the database expired
 * the lease. {@link Lease#verify()} asks the database. The clock is injected and stopped: nothing
 * here sleeps; the database's clock runs on and is watched.
 */
class LeaseVerifyTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;

  /** A client clock that only moves when the test moves it. */
  private final AtomicLong clock = new AtomicLong(System.nanoTime());

  private final List<LeaseClient> clients = new ArrayList<>();

  @BeforeAll
  static void migrate() {
    FencingTestSupport.migrate(db);
    plain = FencingTestSupport.plain(db, ds -> ds);
  }

  @AfterEach
  void closeClients() {
    clients.forEach(LeaseClient::close);
  }

  private LeaseClient client(String holder) {
    LeaseClient c = LeaseClient.builder(plain).holder(holder).nanoTime(clock::get).build();
    clients.add(c);
    return c;
  }

  @Test
  void aStoppedClientClockKeepsIsLostFalseAfterTheDatabaseExpiredTheLeaseAndVerifyTellsTheTruth()
      throws SQLException {
    Lease lease =
        client("paused").tryAcquire("verify/expired", Duration.ofMillis(300)).orElseThrow();
    assertThat(lease.verify()).isTrue();

    awaitLeaseExpired(plain, "verify/expired"); // by the database clock; the client's stood still
    assertThat(lease.isLost()).as("what the client cannot know").isFalse();

    assertThat(lease.verify()).as("the database's answer").isFalse();
    assertThat(lease.isLost()).as("and now the client knows").isTrue();
  }

  @Test
  void verifySeesATakeoverTheClientCannotSee() throws SQLException {
    Lease lease = client("first").tryAcquire("verify/taken", Duration.ofMillis(300)).orElseThrow();
    awaitLeaseExpired(plain, "verify/taken");
    Lease next = client("second").tryAcquire("verify/taken", LONG_TTL).orElseThrow();

    assertThat(lease.isLost()).isFalse();
    assertThat(lease.verify()).isFalse();
    assertThat(lease.isLost()).isTrue();
    assertThat(next.verify()).isTrue();
    assertThat(next.isLost()).isFalse();
  }

  @Test
  void verifyOfAHeldLeaseBringsTheClientsReckoningOfItsExpiryInLine() throws SQLException {
    // 60 s granted; once 5 s have passed by the database's clock, 55 s of slack remain for the
    // verify (a machine at load 40 on 2 cores, as in CI, can take seconds between two statements)
    Lease lease = client("holder").tryAcquire("verify/held", Duration.ofSeconds(60)).orElseThrow();
    // the database's clock runs on while the client's stands still: less than 55 s are left
    await()
        .atMost(PATIENCE)
        .until(
            () ->
                FencingTestSupport.queryLong(
                        plain,
                        "SELECT extract(epoch FROM expires_at - clock_timestamp()) * 1000"
                            + " FROM fencing.status('verify/held')")
                    < 55_000);
    assertThat(lease.isLost()).as("60 s granted, none passed on the client's clock").isFalse();

    assertThat(lease.verify()).isTrue();
    clock.addAndGet(Duration.ofSeconds(55).toNanos());
    assertThat(lease.isLost())
        .as("the database said less than 55 s were left; 55 s passed on the client's clock since")
        .isTrue();
  }

  @Test
  void aClosedLeaseIsNotHeld() throws SQLException {
    Lease lease = client("closer").tryAcquire("verify/closed", LONG_TTL).orElseThrow();
    lease.close();
    assertThat(lease.verify()).isFalse();
    assertThat(lease.isLost()).isTrue();
  }

  /**
   * A verify whose answer arrives after a renewal that the database granted later: the renewal's
   * expiry stands. Before, verify moved the reckoned expiry back to what it had read before the
   * renewal, so the lease counted as lost (writes refused, the keep-alive reporting a loss) while
   * the database granted it. Forced: the verify's connection is held at its close, after its read,
   * until the renewal is done.
   */
  @Test
  void aVerifyAnsweredBeforeARenewalDoesNotUndoIt() throws Exception {
    java.util.concurrent.CountDownLatch read = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch renewed = new java.util.concurrent.CountDownLatch(1);
    java.util.Set<Thread> held = java.util.concurrent.ConcurrentHashMap.newKeySet();
    DataSource holding =
        LeaseClientTest.proxy(
            DataSource.class,
            (method, args) -> {
              java.sql.Connection c = (java.sql.Connection) method.invoke(plain, args);
              if (!method.getName().equals("getConnection")
                  || !held.contains(Thread.currentThread())) {
                return c;
              }
              return LeaseClientTest.proxy(
                  java.sql.Connection.class,
                  (m, a) -> {
                    if (m.getName().equals("close")) {
                      read.countDown();
                      renewed.await();
                    }
                    return m.invoke(c, a);
                  });
            });
    LeaseClient client = LeaseClient.builder(holding).holder("racing").nanoTime(clock::get).build();
    clients.add(client);
    Lease lease = client.tryAcquire("verify/raced", Duration.ofSeconds(60)).orElseThrow();
    // the database's clock runs on while the client's stands still: less than 52 s are left
    await()
        .atMost(PATIENCE)
        .until(
            () ->
                FencingTestSupport.queryLong(
                        plain,
                        "SELECT extract(epoch FROM expires_at - clock_timestamp()) * 1000"
                            + " FROM fencing.status('verify/raced')")
                    < 52_000);

    java.util.concurrent.CompletableFuture<Boolean> verified =
        new java.util.concurrent.CompletableFuture<>();
    Thread verifier =
        new Thread(
            () -> {
              try {
                verified.complete(lease.verify());
              } catch (Throwable e) {
                verified.completeExceptionally(e);
              }
            });
    held.add(verifier);
    verifier.start();
    assertThat(read.await(PATIENCE.toSeconds(), java.util.concurrent.TimeUnit.SECONDS))
        .as("the verify has read the expiry (a hang guard)")
        .isTrue();
    lease.renew(); // 60 s from now by the database clock
    renewed.countDown();
    assertThat(verified.get(PATIENCE.toSeconds(), java.util.concurrent.TimeUnit.SECONDS)).isTrue();

    // 54 s after the renewal was sent on the client's clock: the database grants the lease 6 s more
    clock.addAndGet(Duration.ofSeconds(54).toNanos());
    assertThat(lease.isLost()).as("the renewal's expiry, not the earlier read's").isFalse();
  }
}
