package dev.fencing.jdbc;

import org.jspecify.annotations.Nullable;

/**
 * The token is greater than any token the database issued for the resource: forged or from another
 * database. SQLSTATE {@code ZF003}.
 */
public final class FencingTokenNeverIssuedException extends FencingRefusedException {
  private static final long serialVersionUID = 1L;

  FencingTokenNeverIssuedException(
      String message,
      String sqlState,
      String resource,
      @Nullable Long presentedToken,
      @Nullable Long maxSeen,
      @Nullable Throwable cause) {
    super(message, sqlState, resource, presentedToken, maxSeen, cause);
  }
}
