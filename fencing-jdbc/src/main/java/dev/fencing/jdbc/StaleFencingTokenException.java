package dev.fencing.jdbc;

import org.jspecify.annotations.Nullable;

/**
 * A newer token exists for the resource (or, for a strict resource, this token already admitted a
 * transaction): the writer no longer holds the lease. SQLSTATE {@code ZF001}.
 */
public final class StaleFencingTokenException extends FencingRefusedException {
  private static final long serialVersionUID = 1L;

  StaleFencingTokenException(
      String message,
      String sqlState,
      String resource,
      @Nullable Long presentedToken,
      @Nullable Long maxSeen,
      @Nullable Throwable cause) {
    super(message, sqlState, resource, presentedToken, maxSeen, cause);
  }
}
