package dev.fencing.jdbc;

import org.jspecify.annotations.Nullable;

/** A write that must be fenced carried no token. SQLSTATE {@code ZF002}. */
public final class MissingFencingTokenException extends FencingRefusedException {
  private static final long serialVersionUID = 1L;

  MissingFencingTokenException(
      String message,
      String sqlState,
      String resource,
      @Nullable Long presentedToken,
      @Nullable Long maxSeen,
      @Nullable Throwable cause) {
    super(message, sqlState, resource, presentedToken, maxSeen, cause);
  }
}
