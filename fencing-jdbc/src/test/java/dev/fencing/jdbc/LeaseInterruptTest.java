package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * {@link LeaseClient#acquire} ends its wait when the waiting thread is interrupted (an executor
 * shutting down, a cancelled task): it throws, keeps the thread's interrupt status, acquires
 * nothing and gives the connection back not listening. Before, pgjdbc's wait on the socket ignored
 * the interrupt, so the thread waited out the whole timeout (or the release), and a wait ended by a
 * handover timeout was retried. Closing the client ends its waits the same way.
 */
class LeaseInterruptTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  /**
   * Far longer than {@link FencingTestSupport#PATIENCE}: a wait that ends sooner did not end by it.
   */
  private static final Duration LONG = Duration.ofMinutes(10);

  private final List<LeaseClient> clients = new ArrayList<>();

  @BeforeAll
  static void migrate() {
    FencingTestSupport.migrate(db);
  }

  @AfterEach
  void closeClients() {
    clients.forEach(LeaseClient::close);
  }

  @Test
  void anInterruptEndsTheWaitForARelease() throws Exception {
    client("holder-a").tryAcquire("interrupted-wait", LONG).orElseThrow();
    LeaseClient waiter = client("waiter-b", "waiter-b");
    CompletableFuture<Boolean> stillInterrupted = new CompletableFuture<>();
    CompletableFuture<Throwable> thrown = new CompletableFuture<>();
    Thread t =
        new Thread(
            () -> {
              try {
                waiter.acquire("interrupted-wait", LONG, LONG).close();
                thrown.complete(null);
              } catch (Throwable e) {
                thrown.complete(e);
              }
              stillInterrupted.complete(Thread.currentThread().isInterrupted());
            });
    t.start();
    // its attempt ran and found the lease held: it waits (wherever it is now, the interrupt holds)
    await().atMost(FencingTestSupport.PATIENCE).until(() -> waiters("waiter-b") == 1);
    t.interrupt();

    Throwable e = thrown.get(FencingTestSupport.PATIENCE.toSeconds(), TimeUnit.SECONDS);
    assertThat(e)
        .isInstanceOf(SQLException.class)
        .hasMessageContaining("interrupted")
        .hasMessageContaining("\"interrupted-wait\"")
        .hasCauseInstanceOf(InterruptedException.class);
    assertThat(((SQLException) e).getSQLState()).isEqualTo("57014");
    assertThat(stillInterrupted.get(FencingTestSupport.PATIENCE.toSeconds(), TimeUnit.SECONDS))
        .as("the interrupt status is kept")
        .isTrue();
    assertThat(holder("interrupted-wait")).isEqualTo("holder-a");
  }

  @Test
  void anInterruptedThreadDoesNotStartWaiting() throws Exception {
    client("holder-a").tryAcquire("interrupted-before", LONG).orElseThrow();
    LeaseClient waiter = client("waiter-c");
    CompletableFuture<Throwable> thrown = new CompletableFuture<>();
    Thread t =
        new Thread(
            () -> {
              Thread.currentThread().interrupt();
              try {
                waiter.acquire("interrupted-before", LONG, LONG).close();
                thrown.complete(null);
              } catch (Throwable e) {
                thrown.complete(e);
              }
            });
    t.start();
    assertThat(thrown.get(FencingTestSupport.PATIENCE.toSeconds(), TimeUnit.SECONDS))
        .isInstanceOf(SQLException.class)
        .hasCauseInstanceOf(InterruptedException.class);
  }

  /**
   * {@link LeaseClient#close()} ends the waits under way: they throw, and the closed client
   * acquires nothing, also once the lease is released. Before, the wait went on, and a client
   * closed at shutdown took the lease minutes later.
   */
  @Test
  void closingTheClientEndsItsWaitAndAcquiresNothing() throws Exception {
    Lease held = client("holder-a").tryAcquire("closed-wait", LONG).orElseThrow();
    LeaseClient waiter = client("waiter-d", "waiter-d");
    CompletableFuture<Throwable> thrown = new CompletableFuture<>();
    Thread t =
        new Thread(
            () -> {
              try {
                waiter.acquire("closed-wait", LONG, LONG).close();
                thrown.complete(null);
              } catch (Throwable e) {
                thrown.complete(e);
              }
            });
    t.start();
    await().atMost(FencingTestSupport.PATIENCE).until(() -> waiters("waiter-d") == 1);
    waiter.close();

    assertThat(thrown.get(FencingTestSupport.PATIENCE.toSeconds(), TimeUnit.SECONDS))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed while waiting")
        .hasMessageContaining("\"closed-wait\"");
    held.close();
    assertThat(holder("closed-wait")).as("released, and not taken by the closed client").isNull();
  }

  /** The free lease is taken: an interrupt ends a wait, it does not refuse what needs none. */
  @Test
  void anInterruptedThreadStillTakesAFreeLease() throws Exception {
    LeaseClient client = client("taker");
    CompletableFuture<Object> result = new CompletableFuture<>();
    Thread t =
        new Thread(
            () -> {
              Thread.currentThread().interrupt();
              try {
                Lease lease = client.acquire("interrupted-free", LONG, LONG);
                result.complete(lease.token().value());
                lease.close();
              } catch (Throwable e) {
                result.complete(e);
              }
            });
    t.start();
    assertThat(result.get(FencingTestSupport.PATIENCE.toSeconds(), TimeUnit.SECONDS))
        .isInstanceOf(Long.class);
  }

  private LeaseClient client(String holder) {
    return client(holder, "lease-interrupt-test");
  }

  /** A client whose connections are named {@code applicationName} in pg_stat_activity. */
  private LeaseClient client(String holder, String applicationName) {
    PGSimpleDataSource named = new PGSimpleDataSource();
    named.setURL(db.jdbcUrl());
    named.setUser(db.user());
    named.setPassword(db.password());
    named.setApplicationName(applicationName);
    LeaseClient c = LeaseClient.builder(named).holder(holder).build();
    clients.add(c);
    return c;
  }

  /**
   * How many connections named {@code applicationName} are idle after their attempt's transaction
   * (pgjdbc sends its statements apart: the last one shown is its COMMIT, after the LISTEN).
   */
  private static long waiters(String applicationName) throws SQLException {
    return FencingTestSupport.queryLong(
        db.dataSource(),
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = ?"
            + " AND state = 'idle' AND trim(query) = 'COMMIT'",
        applicationName);
  }

  private static String holder(String resource) throws SQLException {
    return (String)
        FencingTestSupport.query(db.dataSource(), "SELECT holder FROM fencing.status(?)", resource);
  }
}
