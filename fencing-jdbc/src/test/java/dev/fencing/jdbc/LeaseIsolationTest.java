package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 14: a lease operation is one round trip, and runs at READ COMMITTED whatever the session's
 * default ({@code BEGIN ISOLATION LEVEL READ COMMITTED; <statement>; COMMIT}). Its statement alone
 * in autocommit would save two Bind/Execute pairs but run at the session's default: at REPEATABLE
 * READ or SERIALIZABLE a row changed after the statement's snapshot raises 40001 where READ
 * COMMITTED reads it. Forced here: another transaction creates the resource and takes its lease,
 * the client's acquisition waits for it on the resource's unique index (pg_stat_activity), the
 * other transaction commits; the client sees the lease held, never a 40001.
 */
class LeaseIsolationTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final ExecutorService THREADS = Executors.newCachedThreadPool();

  @BeforeAll
  static void migrate() {
    FencingTestSupport.migrate(db);
  }

  @AfterAll
  static void stopThreads() {
    THREADS.shutdownNow();
  }

  @ParameterizedTest
  @ValueSource(strings = {"READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"})
  void aConcurrentAcquisitionAtTheSessionsIsolationIsContentionNotAnError(String isolation)
      throws Exception {
    String resource = "isolation/" + isolation.replace(' ', '-');
    DataSource plain = db.dataSource();
    try (Connection first = db.connect();
        Connection second = db.connect()) {
      FencingTestSupport.exec(
          second, "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL " + isolation);
      LeaseClient client =
          LeaseClient.builder(new LeaseRoundTripTest.OneConnection(second))
              .holder("second")
              .build();
      try {
        first.setAutoCommit(false);
        assertThat(
                FencingTestSupport.query(
                    first,
                    "SELECT acquired FROM fencing.try_acquire(?, 'first', interval '60 seconds')",
                    resource))
            .isEqualTo(true);

        Future<Optional<Lease>> attempt =
            THREADS.submit(() -> client.tryAcquire(resource, FencingTestSupport.LONG_TTL));
        FencingTestSupport.awaitWaitingOnLock(plain, "try_acquire", 1);
        first.commit();

        assertThat(attempt.get(FencingTestSupport.PATIENCE.toSeconds(), TimeUnit.SECONDS))
            .as("the second acquisition, the first holder's lease committed meanwhile")
            .isEmpty();

        first.setAutoCommit(true);
        assertThat(
                FencingTestSupport.query(
                    first,
                    "SELECT fencing.release(?, (SELECT s.lease_token FROM fencing.status(?) s))",
                    resource,
                    resource))
            .isEqualTo(true);
        Lease lease = client.tryAcquire(resource, FencingTestSupport.LONG_TTL).orElseThrow();
        assertThat(lease.token().value()).isEqualTo(FencingTestSupport.maxSeen(plain, resource));
        lease.close();
        assertThat(FencingTestSupport.leaseValid(plain, resource)).as("released").isFalse();
      } finally {
        client.close();
      }
      assertThat(
              FencingTestSupport.query(
                  second, "SELECT pg_catalog.current_setting('transaction_isolation')"))
          .as("the session's isolation is untouched")
          .isEqualTo(isolation.toLowerCase(Locale.ROOT));
    }
  }
}
