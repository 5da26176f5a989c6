package dev.fencing.benchmark.lease;

import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.LeaseClient;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import javax.sql.DataSource;

/** The fence's leases through the Java API: {@code LeaseClient.tryAcquire} and {@code close}. */
final class FenceLeases implements LockService {
  static final String NAME = "fencing lease (LeaseClient)";
  private static final Duration TTL = Duration.ofSeconds(30);

  private final DataSource pool;
  private final String prefix;

  FenceLeases(DataSource pool, String prefix) {
    this.pool = pool;
    this.prefix = prefix;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String slug() {
    return "fence";
  }

  @Override
  public Client client(int lock) {
    LeaseClient leases = LeaseClient.builder(pool).holder("bench-client-" + lock).build();
    String resource = prefix + lock;
    return () -> acquireRelease(leases, resource);
  }

  private static void acquireRelease(LeaseClient leases, String resource) throws SQLException {
    Optional<Lease> lease = leases.tryAcquire(resource, TTL);
    if (lease.isEmpty()) {
      throw new IllegalStateException("the uncontended lease on " + resource + " was not free");
    }
    // close() releases; a failed release would leave the lease held, and the next tryAcquire fails
    lease.get().close();
  }

  @Override
  public void close() {}
}
