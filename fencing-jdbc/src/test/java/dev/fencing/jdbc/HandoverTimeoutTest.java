package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.LONG_TTL;
import static dev.fencing.jdbc.FencingTestSupport.PATIENCE;
import static dev.fencing.jdbc.FencingTestSupport.insert;
import static dev.fencing.jdbc.FencingTestSupport.maxSeen;
import static dev.fencing.jdbc.FencingTestSupport.nextBlock;
import static dev.fencing.jdbc.FencingTestSupport.present;
import static dev.fencing.jdbc.FencingTestSupport.query;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 12, item 5: the handover timeout (SQLSTATE ZF007) — the lease is free, but the previous
 * holder's checked transaction is still open, holding the share lock on the resource. {@link
 * LeaseClient#acquire} keeps trying within its own timeout, {@link LeaseClient#tryAcquire} reports
 * "not acquired", and what reaches the caller is a {@link HandoverTimeoutException}, which the
 * exception helpers know and which is not a refusal. The open transaction is a real one of the
 * previous holder, through {@link FencedDataSource}, at each isolation level.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class HandoverTimeoutTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final AtomicInteger NAMES = new AtomicInteger();

  private static DataSource plain;
  private static FencedDataSource fenced;
  private static ExecutorService threads;

  private final List<LeaseClient> clients = new ArrayList<>();

  @BeforeAll
  static void setUp() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = FencingTestSupport.plain(db, ds -> ds);
    FencingTestSupport.createTestSchema(plain);
    fenced = FencedDataSource.wrap(plain);
    threads = Executors.newCachedThreadPool();
  }

  @AfterAll
  static void stopThreads() {
    threads.shutdownNow();
  }

  @AfterEach
  void closeClients() {
    clients.forEach(LeaseClient::close);
  }

  /**
   * The previous holder: acquires, writes in a transaction it keeps open (its check holds the share
   * lock on the resource), and releases the lease meanwhile, so the lease is free but the handover
   * must wait for the transaction.
   */
  private final class PreviousHolder implements AutoCloseable {
    final Lease lease;
    final Connection connection;
    final int row = nextBlock();

    PreviousHolder(String resource, Isolation iso) throws SQLException {
      lease =
          client("previous", Duration.ofSeconds(5), plain)
              .tryAcquire(resource, LONG_TTL)
              .orElseThrow();
      connection = fenced.getConnection();
      connection.setAutoCommit(false);
      connection.setTransactionIsolation(iso.level);
      try (FencingScope scope = Fencing.bind(lease)) {
        insert(connection, row); // checked: the share lock is held until the transaction ends
      }
      lease.close();
      assertThat(FencingTestSupport.leaseValid(plain, resource)).isFalse();
    }

    void commit() throws SQLException {
      connection.commit();
    }

    @Override
    public void close() throws SQLException {
      connection.close();
    }
  }

  @ParameterizedTest
  @EnumSource(Isolation.class)
  void acquireKeepsTryingWithinItsTimeoutUntilTheHandoverIsDone(Isolation iso) throws Exception {
    String resource = resource("acquire", iso);
    String application = "handover-acquirer-" + NAMES.incrementAndGet();
    LeaseClient next =
        client(
            "next",
            Duration.ofMillis(200),
            FencingTestSupport.plain(
                db,
                ds -> {
                  ds.setApplicationName(application);
                  return ds;
                }));
    try (PreviousHolder previous = new PreviousHolder(resource, iso)) {
      Future<Lease> acquired = threads.submit(() -> next.acquire(resource, LONG_TTL, PATIENCE));

      // its first attempt waits for the open transaction, times out after 200 ms (ZF007), and a
      // second attempt (another transaction) waits again: acquire did not give up
      String first = awaitAttemptWaiting(application, null);
      awaitAttemptWaiting(application, first);
      assertThat(acquired).isNotDone();

      previous.commit(); // the handover can be done now
      Lease lease = acquired.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      assertThat(lease.token().value()).isGreaterThan(previous.lease.token().value());
      assertThat(maxSeen(plain, resource)).isEqualTo(lease.token().value());
      assertThat(present(plain, previous.row)).as("the previous holder's write").isTrue();
    }
  }

  @ParameterizedTest
  @EnumSource(Isolation.class)
  void tryAcquireReportsAHandoverTimeoutAsNotAcquired(Isolation iso) throws Exception {
    String resource = resource("try", iso);
    LeaseClient next = client("next", Duration.ofMillis(200), plain);
    try (PreviousHolder previous = new PreviousHolder(resource, iso)) {
      assertThat(next.tryAcquire(resource, LONG_TTL)).isEmpty();
      assertThat(maxSeen(plain, resource)).isEqualTo(previous.lease.token().value());

      previous.commit();
      assertThat(next.tryAcquire(resource, LONG_TTL)).isPresent();
    }
  }

  @ParameterizedTest
  @EnumSource(Isolation.class)
  void whenAcquiresOwnTimeoutRunsOutDuringAHandoverItThrowsHandoverTimeoutException(Isolation iso)
      throws Exception {
    String resource = resource("timeout", iso);
    // a handover timeout far longer than the test: each attempt must stop at acquire's timeout
    LeaseClient next = client("next", Duration.ofHours(1), plain);
    try (PreviousHolder previous = new PreviousHolder(resource, iso)) {
      Throwable thrown =
          assertTimeoutPreemptively(
              PATIENCE,
              () -> catchThrowable(() -> next.acquire(resource, LONG_TTL, Duration.ofMillis(300))));

      assertThat(thrown)
          .isInstanceOf(HandoverTimeoutException.class)
          .isInstanceOf(SQLTimeoutException.class)
          .isNotInstanceOf(FencingRefusedException.class)
          .hasMessageContaining("handover of \"" + resource + "\" timed out");
      HandoverTimeoutException timedOut = (HandoverTimeoutException) thrown;
      assertThat(timedOut.getSQLState()).isEqualTo("ZF007");
      assertThat(timedOut.resource()).isEqualTo(resource);
      assertThat(timedOut.maxSeen()).isEqualTo(previous.lease.token().value());

      RuntimeException wrapped = new RuntimeException("as a framework wraps it", thrown);
      assertThat(FencingExceptions.findHandoverTimeout(wrapped)).containsSame(timedOut);
      assertThat(FencingExceptions.find(wrapped)).as("not a refusal").isEmpty();
      assertThat(maxSeen(plain, resource)).isEqualTo(previous.lease.token().value());
    }
  }

  @Test
  void theHelpersTranslateARawHandoverTimeoutFromTheDriver() throws Exception {
    String resource = resource("raw", Isolation.READ_COMMITTED);
    try (PreviousHolder previous = new PreviousHolder(resource, Isolation.READ_COMMITTED)) {
      Throwable raw = catchThrowable(() -> FencingTestSupport.probeAcquire(plain, resource));
      assertThat(raw)
          .isInstanceOf(SQLException.class)
          .isNotInstanceOf(HandoverTimeoutException.class);

      assertThat(FencingExceptions.findHandoverTimeout(new IllegalStateException(raw)))
          .hasValueSatisfying(
              e -> {
                assertThat(e.resource()).isEqualTo(resource);
                assertThat(e.maxSeen()).isEqualTo(previous.lease.token().value());
                assertThat(e.getCause()).isSameAs(raw);
              });
      assertThat(FencingExceptions.find(raw)).isEmpty();
      assertThat(FencingExceptions.findHandoverTimeout(new SQLException("other", "ZF001")))
          .isEmpty();
    }
  }

  // ---------------------------------------------------------------------------------------------

  private LeaseClient client(String holder, Duration handoverTimeout, DataSource ds) {
    LeaseClient c = LeaseClient.builder(ds).holder(holder).handoverTimeout(handoverTimeout).build();
    clients.add(c);
    return c;
  }

  private static String resource(String hint, Isolation iso) {
    return "handover-timeout-"
        + hint
        + "-"
        + iso.name().toLowerCase(Locale.ROOT)
        + "-"
        + NAMES.incrementAndGet();
  }

  /**
   * Waits until the backend of {@code application} waits for a lock in a transaction other than the
   * one that started at {@code after}; returns that transaction's start.
   */
  private static String awaitAttemptWaiting(String application, @Nullable String after) {
    return await()
        .atMost(PATIENCE)
        .until(
            () ->
                (String)
                    query(
                        plain,
                        "SELECT xact_start::text FROM pg_stat_activity WHERE application_name = ?"
                            + " AND wait_event_type = 'Lock'",
                        application),
            start -> start != null && !start.equals(after));
  }
}
