package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.jdbc.FencingToken;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.LeaseClient;
import java.sql.SQLException;
import java.time.Duration;

/**
 * A zombie's token: a lease of {@code resource} taken and released, then a newer lease of the same
 * resource held until {@link #close()}. Writes with {@link #stale()} bound must be refused.
 */
final class Superseded implements AutoCloseable {
  private final FencingToken stale;
  private final Lease newer;

  private Superseded(FencingToken stale, Lease newer) {
    this.stale = stale;
    this.newer = newer;
  }

  /** Takes and releases a lease of {@code resource}, then takes the next one. */
  static Superseded take(LeaseClient leases, String resource) throws SQLException {
    FencingToken stale;
    try (Lease first = leases.tryAcquire(resource, Duration.ofSeconds(30)).orElseThrow()) {
      stale = first.token();
    }
    return new Superseded(stale, leases.tryAcquire(resource, Duration.ofSeconds(30)).orElseThrow());
  }

  /** The superseded token. */
  FencingToken stale() {
    return stale;
  }

  /** Releases the newer lease. */
  @Override
  public void close() {
    newer.close();
  }
}
