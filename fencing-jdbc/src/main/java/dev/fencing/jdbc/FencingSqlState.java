package dev.fencing.jdbc;

import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The SQLSTATEs the fence raises, class {@code ZF} (outside the ranges the SQL standard and
 * PostgreSQL use). They are defined once, in the migrations' SQL; this enum names them for Java.
 * Match exact codes: {@link #of(String)}.
 */
public enum FencingSqlState {
  /** A newer token exists for the resource, or a strict resource's token was already used. */
  STALE_TOKEN("ZF001"),
  /** No token was presented for a fenced write. */
  MISSING_TOKEN("ZF002"),
  /** The token is greater than any token this database issued for the resource (forged?). */
  TOKEN_NEVER_ISSUED("ZF003"),
  /** Malformed resource name, unknown resource, or the wrong kind of resource. */
  INVALID_RESOURCE("ZF004"),
  /** Renewing or using a lease that was released, expired or taken over. */
  LEASE_NOT_HELD("ZF005"),
  /** A token, holder, TTL or timeout out of range. */
  INVALID_ARGUMENT("ZF006"),
  /** The previous holder's fenced transactions did not end within the handover timeout. */
  HANDOVER_TIMEOUT("ZF007");

  private final String code;

  FencingSqlState(String code) {
    this.code = code;
  }

  /** The five-character SQLSTATE. */
  public String code() {
    return code;
  }

  /** The fence's state for an SQLSTATE, if it is one of ours. */
  public static Optional<FencingSqlState> of(@Nullable String sqlState) {
    for (FencingSqlState s : values()) {
      if (s.code.equals(sqlState)) {
        return Optional.of(s);
      }
    }
    return Optional.empty();
  }
}
