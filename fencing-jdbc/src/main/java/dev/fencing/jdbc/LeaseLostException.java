package dev.fencing.jdbc;

import org.jspecify.annotations.Nullable;

/**
 * The lease behind a bound token is known to be lost (released, expired or taken over), so the
 * client refused to carry it; or a renewal found it gone. SQLSTATE {@code ZF005}.
 */
public final class LeaseLostException extends FencingRefusedException {
  private static final long serialVersionUID = 1L;

  LeaseLostException(
      String message,
      String sqlState,
      String resource,
      @Nullable Long presentedToken,
      @Nullable Long maxSeen,
      @Nullable Throwable cause) {
    super(message, sqlState, resource, presentedToken, maxSeen, cause);
  }
}
