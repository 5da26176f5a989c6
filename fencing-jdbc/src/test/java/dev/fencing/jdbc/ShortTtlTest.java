package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.PATIENCE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A TTL shorter than the acquisition's round trip: the lease runs out (by the client's reckoning,
 * which starts when the request was sent) before the reply that grants it arrives. Decided: not
 * refused (the TTL is the caller's, any from 1 ms is valid, and how long a round trip takes is not
 * known in advance), but handled: the lease comes back already {@linkplain Lease#isLost() lost}, so
 * no write carrying it is let through by the client, and with keep-alive the listener is told at
 * once, with no renewal tried (it would renew a lease the database may have given away). The round
 * trip is made to last two TTLs by the lease clock (the test's): the first reading, taken before
 * the request, stays; every later one is two TTLs on.
 */
class ShortTtlTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final Duration TTL = Duration.ofSeconds(1);

  @BeforeAll
  static void migrate() {
    FencingTestSupport.migrate(db);
  }

  @Test
  void aLeaseThatRanOutBeforeItsReplyArrivedIsLostAtOnceAndTheListenerIsTold() throws Exception {
    long start = System.nanoTime();
    AtomicBoolean sent = new AtomicBoolean();
    CompletableFuture<Throwable> told = new CompletableFuture<>();
    try (LeaseClient client =
        LeaseClient.builder(db.dataSource())
            .holder("short-ttl")
            .keepAlive(true)
            .listener(
                (lease, cause) -> told.complete(cause == null ? new Throwable("none") : cause))
            .nanoTime(() -> sent.getAndSet(true) ? start + 2 * TTL.toNanos() : start)
            .build()) {
      Lease lease = client.tryAcquire("short-ttl", TTL).orElseThrow();

      assertThat(lease.isLost()).as("lost when handed out").isTrue();
      assertThat(told.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
          .as("the listener, told without a renewal tried")
          .hasMessage("none");
      assertThat(lease.toString()).contains("lost");
      lease.close();
    }
  }

  /** The same without keep-alive: the lease is lost when handed out, and closing it is quiet. */
  @Test
  void withoutKeepAliveTheLeaseIsLostWhenHandedOut() throws Exception {
    long start = System.nanoTime();
    AtomicBoolean sent = new AtomicBoolean();
    try (LeaseClient client =
        LeaseClient.builder(db.dataSource())
            .holder("short-ttl-2")
            .nanoTime(() -> sent.getAndSet(true) ? start + 2 * TTL.toNanos() : start)
            .build()) {
      Lease lease = client.tryAcquire("short-ttl-2", TTL).orElseThrow();
      assertThat(lease.isLost()).isTrue();
      lease.close();
      lease.close(); // twice: nothing more
      assertThat(lease.isLost()).isTrue();
    }
  }
}
