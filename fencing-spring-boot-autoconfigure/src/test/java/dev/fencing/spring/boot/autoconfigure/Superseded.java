package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.LeaseClient;
import java.sql.SQLException;
import java.time.Duration;
import org.assertj.core.api.Assertions;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.jspecify.annotations.Nullable;

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

  /** The newer lease, held until {@link #close()}: the current holder's. */
  Lease newer() {
    return newer;
  }

  /**
   * Runs {@code write} with the superseded token bound; what it threw (the refusal), null if it
   * threw nothing.
   */
  @Nullable Throwable attempt(ThrowingCallable write) {
    return Assertions.catchThrowable(
        () -> {
          try (FencingScope scope = Fencing.bind(stale)) {
            write.call();
          }
        });
  }

  /** Releases the newer lease. */
  @Override
  public void close() {
    newer.close();
  }
}
