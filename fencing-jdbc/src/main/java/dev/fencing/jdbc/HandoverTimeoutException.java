package dev.fencing.jdbc;

import java.sql.SQLTimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * An acquisition found the lease free but timed out waiting for the previous holder's fenced
 * transactions to end: the handover (SQLSTATE {@code ZF007}). Nothing was acquired or changed, and
 * the previous holder's token is still the newest, so its open transactions may still commit.
 *
 * <p><b>Not a refusal.</b> A {@link FencingRefusedException} means "a newer holder exists: stop,
 * never retry"; this means "the resource is still in use by the previous holder: try again later".
 * So it is an {@link SQLTimeoutException} (transient: the same call may succeed when retried), not
 * a {@link FencingRefusedException}, and {@link FencingExceptions#find(Throwable)} does not report
 * it; {@link FencingExceptions#findHandoverTimeout(Throwable)} does.
 *
 * <p>Where it comes from: {@link LeaseClient#acquire} keeps trying within its own timeout and
 * throws this only when that timeout runs out during a handover; {@link LeaseClient#tryAcquire}
 * reports a handover timeout as "not acquired" (empty). A previous holder whose transactions stay
 * open for long is usually a stuck or paused process: its transactions end when it resumes, or when
 * an operator ends them ({@code pg_terminate_backend}).
 */
public final class HandoverTimeoutException extends SQLTimeoutException {
  private static final long serialVersionUID = 1L;

  private final String resource;
  private final @Nullable Long maxSeen;

  HandoverTimeoutException(
      String message, String resource, @Nullable Long maxSeen, @Nullable Throwable cause) {
    super(message, FencingSqlState.HANDOVER_TIMEOUT.code(), cause);
    this.resource = resource;
    this.maxSeen = maxSeen;
  }

  /** The resource whose handover timed out. */
  public String resource() {
    return resource;
  }

  /**
   * The previous holder's token, whose fenced transactions were still open (the resource's {@code
   * max_seen}), or null if not known.
   */
  public @Nullable Long maxSeen() {
    return maxSeen;
  }
}
