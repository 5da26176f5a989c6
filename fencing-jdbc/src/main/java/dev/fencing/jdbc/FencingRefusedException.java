package dev.fencing.jdbc;

import java.sql.SQLNonTransientException;
import org.jspecify.annotations.Nullable;

/**
 * The fence refused a write: nothing of the transaction was written and it was rolled back. Never
 * retry the transaction with the same token. Extends {@link SQLNonTransientException} so JDBC, JPA
 * and Spring translation treat it as a permanent failure; {@link #getSQLState()} is the server's.
 *
 * <p>Find it in whatever wraps it (Hibernate, Spring) with {@link
 * FencingExceptions#find(Throwable)}. Not a refusal: {@link HandoverTimeoutException} (try again
 * later).
 */
public abstract sealed class FencingRefusedException extends SQLNonTransientException
    permits StaleFencingTokenException,
        MissingFencingTokenException,
        FencingTokenNeverIssuedException,
        LeaseLostException {
  private static final long serialVersionUID = 1L;

  private final String resource;
  private final @Nullable Long presentedToken;
  private final @Nullable Long maxSeen;

  FencingRefusedException(
      String message,
      String sqlState,
      String resource,
      @Nullable Long presentedToken,
      @Nullable Long maxSeen,
      @Nullable Throwable cause) {
    super(message, sqlState, cause);
    this.resource = resource;
    this.presentedToken = presentedToken;
    this.maxSeen = maxSeen;
  }

  /** The fenced resource. */
  public String resource() {
    return resource;
  }

  /** The token the write presented, or null if it presented none. */
  public @Nullable Long presentedToken() {
    return presentedToken;
  }

  /** The highest token the resource had seen when it refused, or null if not known. */
  public @Nullable Long maxSeen() {
    return maxSeen;
  }
}
