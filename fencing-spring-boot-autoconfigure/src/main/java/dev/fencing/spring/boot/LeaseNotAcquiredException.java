package dev.fencing.spring.boot;

import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.CannotAcquireLockException;

/**
 * A {@link WithLease} method did not run because another holder has the lease on its resource. A
 * {@link CannotAcquireLockException}, so it is transient: calling again later may succeed.
 */
public class LeaseNotAcquiredException extends CannotAcquireLockException {
  private static final long serialVersionUID = 1L;

  /** The resource whose lease was held. */
  private final String resource;

  /** How long the call waited. */
  private final Duration waited;

  /**
   * Creates the exception.
   *
   * @param resource the leased resource
   * @param waited how long the call waited for the lease (zero: it did not wait)
   * @param cause the lease client's timeout, if any
   */
  public LeaseNotAcquiredException(String resource, Duration waited, @Nullable Throwable cause) {
    super(
        "lease on \""
            + resource
            + "\" is held by another holder"
            + (waited.isZero() ? "" : " (waited " + waited + ")")
            + (cause == null ? "" : ": " + cause.getMessage()),
        cause);
    this.resource = resource;
    this.waited = waited;
  }

  /**
   * The resource whose lease was held.
   *
   * @return the resource name
   */
  public String resource() {
    return resource;
  }

  /**
   * How long the call waited for the lease.
   *
   * @return the wait, zero when it did not wait
   */
  public Duration waited() {
    return waited;
  }
}
