package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.LONG_TTL;
import static dev.fencing.jdbc.FencingTestSupport.PATIENCE;
import static dev.fencing.jdbc.FencingTestSupport.insert;
import static dev.fencing.jdbc.FencingTestSupport.maxSeen;
import static dev.fencing.jdbc.FencingTestSupport.nextBlock;
import static dev.fencing.jdbc.FencingTestSupport.query;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * An interrupt ends the handover wait of an acquisition (the wait inside {@code try_acquire} for
 * the previous holder's open fenced transactions): {@link LeaseClient#tryAcquire} and an attempt of
 * {@link LeaseClient#acquire} throw {@code 57014} caused by an {@link InterruptedException}, keep
 * the thread's interrupt status and acquire nothing. Before, the attempt ran on in the database
 * until the handover timeout (an hour here) or the previous holder's commit, and tryAcquire then
 * took the lease for the interrupted thread. The previous holder's open transaction is a real one
 * through {@link FencedDataSource}, at each isolation level; the waiting is seen in
 * pg_stat_activity (no sleeps).
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class HandoverInterruptTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final AtomicInteger NAMES = new AtomicInteger();

  /** How soon the interrupted call must return: the interrupt is read every 100 ms. */
  private static final Duration PROMPTLY = Duration.ofSeconds(20);

  private static DataSource plain;
  private static FencedDataSource fenced;

  private final List<LeaseClient> clients = new ArrayList<>();

  /** Which acquisition waits for the handover. */
  enum Call {
    TRY_ACQUIRE,
    ACQUIRE,
    /** tryAcquire on a thread interrupted before the call: it does not start waiting. */
    TRY_ACQUIRE_INTERRUPTED_BEFORE
  }

  @BeforeAll
  static void setUp() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = FencingTestSupport.plain(db, ds -> ds);
    FencingTestSupport.createTestSchema(plain);
    fenced = FencedDataSource.wrap(plain);
  }

  @AfterEach
  void closeClients() {
    clients.forEach(LeaseClient::close);
  }

  @ParameterizedTest
  @EnumSource(Isolation.class)
  void anInterruptEndsTryAcquiresHandoverWait(Isolation iso) throws Exception {
    interruptTheHandover(iso, Call.TRY_ACQUIRE);
  }

  @ParameterizedTest
  @EnumSource(Isolation.class)
  void anInterruptEndsTheHandoverAttemptOfAcquire(Isolation iso) throws Exception {
    interruptTheHandover(iso, Call.ACQUIRE);
  }

  @ParameterizedTest
  @EnumSource(Isolation.class)
  void aThreadInterruptedBeforeTryAcquireDoesNotWaitForTheHandover(Isolation iso) throws Exception {
    interruptTheHandover(iso, Call.TRY_ACQUIRE_INTERRUPTED_BEFORE);
  }

  private void interruptTheHandover(Isolation iso, Call call) throws Exception {
    String resource =
        "handover-interrupt-"
            + call.name().toLowerCase(Locale.ROOT)
            + "-"
            + iso.name().toLowerCase(Locale.ROOT)
            + "-"
            + NAMES.incrementAndGet();
    String application = "handover-interrupted-" + NAMES.incrementAndGet();
    // a handover timeout far longer than the test: only the interrupt can end the wait in time
    LeaseClient next =
        client(
            FencingTestSupport.plain(
                db,
                ds -> {
                  ds.setApplicationName(application);
                  return ds;
                }));
    Lease previous = client(plain).tryAcquire(resource, LONG_TTL).orElseThrow();
    try (Connection open = fenced.getConnection()) {
      open.setAutoCommit(false);
      open.setTransactionIsolation(iso.level);
      try (FencingScope scope = Fencing.bind(previous)) {
        insert(open, nextBlock()); // checked: the share lock is held until the transaction ends
      }
      previous.close(); // free, but the handover must wait for the open transaction

      CompletableFuture<Object> outcome = new CompletableFuture<>();
      CompletableFuture<Boolean> stillInterrupted = new CompletableFuture<>();
      Thread t =
          new Thread(
              () -> {
                if (call == Call.TRY_ACQUIRE_INTERRUPTED_BEFORE) {
                  Thread.currentThread().interrupt();
                }
                try {
                  Object result =
                      call == Call.ACQUIRE
                          ? next.acquire(resource, LONG_TTL, Duration.ofHours(1))
                          : next.tryAcquire(resource, LONG_TTL);
                  outcome.complete(result);
                } catch (Throwable e) {
                  outcome.complete(e);
                }
                stillInterrupted.complete(Thread.currentThread().isInterrupted());
              });
      t.start();
      if (call != Call.TRY_ACQUIRE_INTERRUPTED_BEFORE) {
        await()
            .atMost(PATIENCE)
            .until(
                () ->
                    query(
                            plain,
                            "SELECT 1 FROM pg_stat_activity WHERE application_name = ?"
                                + " AND wait_event_type = 'Lock'",
                            application)
                        != null);
        t.interrupt();
      }

      Object result = outcome.get(PROMPTLY.toSeconds(), TimeUnit.SECONDS);
      assertThat(result)
          .isInstanceOf(SQLException.class)
          .asInstanceOf(
              org.assertj.core.api.InstanceOfAssertFactories.throwable(SQLException.class))
          .hasMessageContaining("interrupted")
          .hasMessageContaining("\"" + resource + "\"")
          .hasCauseInstanceOf(InterruptedException.class);
      assertThat(((SQLException) result).getSQLState()).isEqualTo("57014");
      assertThat(stillInterrupted.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
          .as("the interrupt status is kept")
          .isTrue();
      assertThat(maxSeen(plain, resource)).as("nothing issued").isEqualTo(previous.token().value());
      assertThat(
              query(
                  plain,
                  "SELECT count(*) FROM pg_stat_activity WHERE application_name = ?"
                      + " AND state <> 'idle'",
                  application))
          .as("the attempt's transaction ended")
          .isEqualTo(0L);
      open.commit();
    }
    assertThat(query(plain, "SELECT holder FROM fencing.status(?)", resource))
        .as("not taken for the interrupted thread")
        .isNull();
  }

  private LeaseClient client(DataSource ds) {
    LeaseClient c =
        LeaseClient.builder(ds)
            .holder("holder-" + NAMES.incrementAndGet())
            .handoverTimeout(Duration.ofHours(1))
            .build();
    clients.add(c);
    return c;
  }
}
