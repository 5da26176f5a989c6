package dev.fencing.jdbc;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Issue, seen from Java: the statements of {@link LeaseClient} and {@link Lease} and what their
 * rows mean. Every time that decides anything is the database's: remaining times are computed by
 * the database, on its clock, in the same statement ({@code expires_at - clock_timestamp()}).
 */
final class LeaseQueries {
  private final String acquireSql;
  private final String renewSql;
  private final String releaseSql;
  private final String heldSql;

  LeaseQueries(String schema) {
    this.acquireSql =
        "SELECT a.acquired, a.token, a.holder, a.expires_at,"
            + " extract(epoch FROM a.expires_at - clock_timestamp())"
            + " FROM "
            + schema
            + ".try_acquire(?, ?, ? * interval '1 microsecond', ? * interval '1 microsecond') a";
    this.renewSql =
        "SELECT r.e, extract(epoch FROM r.e - clock_timestamp()) FROM "
            + schema
            + ".renew(?, ?, ? * interval '1 microsecond') AS r(e)";
    // A release need not be durable: if a crash loses it, the lease stays held until its expiry
    // (liveness, never safety), and the next acquisition's durable commit flushes it anyway. So
    // the release commit does not wait for the WAL flush: one flush per acquire+release, not two.
    this.releaseSql =
        "SELECT "
            + schema
            + ".release(?, ?), pg_catalog.set_config('synchronous_commit', 'off', true)";
    this.heldSql =
        "SELECT s.lease_valid AND s.lease_token = ?, s.expires_at,"
            + " extract(epoch FROM s.expires_at - clock_timestamp()) FROM "
            + schema
            + ".status(?) s";
  }

  /** One row of try_acquire; token and remaining time only when acquired. */
  record Acquired(
      boolean acquired,
      @Nullable Long token,
      @Nullable String holder,
      @Nullable Instant expiresAt,
      @Nullable Long remainingNanos) {}

  /** A renewal: the new expiry and the time left until it, by the database clock. */
  record Renewal(Instant expiresAt, long remainingNanos) {}

  /** Whether the database grants the lease now, and its expiry and the time left until it. */
  record Held(boolean held, @Nullable Instant expiresAt, @Nullable Long remainingNanos) {}

  /**
   * try_acquire in a lease transaction of its own ({@link LeaseTransaction}): one round trip. If
   * {@code interruptible}, an interrupt of the calling thread while it runs (waiting for the
   * handover) cancels it: {@link LeaseTransaction#interrupted}, nothing acquired.
   */
  LeaseTransaction.Committed<Acquired> acquire(
      Connection c,
      String resource,
      String holder,
      Duration ttl,
      Duration handoverTimeout,
      boolean interruptible)
      throws SQLException {
    return LeaseTransaction.run(
        c,
        acquireSql,
        ps -> {
          ps.setString(1, resource);
          ps.setString(2, holder);
          ps.setLong(3, micros(ttl));
          ps.setLong(4, micros(handoverTimeout));
        },
        rs -> {
          if (!rs.next()) {
            throw new SQLException("try_acquire returned no row for resource " + resource);
          }
          long token = rs.getLong(2);
          Long tokenOrNull = rs.wasNull() ? null : token;
          return new Acquired(
              rs.getBoolean(1), tokenOrNull, rs.getString(3), instant(rs, 4), nanos(rs, 5));
        },
        interruptible);
  }

  /** renew in a lease transaction of its own: one round trip. */
  LeaseTransaction.Committed<Renewal> renew(Connection c, FencingToken token, Duration ttl)
      throws SQLException {
    return LeaseTransaction.run(
        c,
        renewSql,
        ps -> {
          ps.setString(1, token.resource());
          ps.setLong(2, token.value());
          ps.setLong(3, micros(ttl));
        },
        rs -> {
          rs.next();
          return new Renewal(
              Objects.requireNonNull(instant(rs, 1)), Objects.requireNonNull(nanos(rs, 2)));
        });
  }

  /** release in a lease transaction of its own (one round trip); false if released already. */
  boolean release(Connection c, FencingToken token) throws SQLException {
    return LeaseTransaction.run(
            c,
            releaseSql,
            ps -> {
              ps.setString(1, token.resource());
              ps.setLong(2, token.value());
            },
            rs -> {
              rs.next();
              return rs.getBoolean(1);
            })
        .result();
  }

  /** One read-only statement, no transaction of its own: is the lease of {@code token} valid? */
  Held held(Connection c, FencingToken token) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(heldSql)) {
      ps.setLong(1, token.value());
      ps.setString(2, token.resource());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new Held(rs.getBoolean(1), instant(rs, 2), nanos(rs, 3));
      }
    }
  }

  private static @Nullable Instant instant(ResultSet rs, int column) throws SQLException {
    OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
    return t == null ? null : t.toInstant();
  }

  /** Seconds from the database as nanoseconds, rounded down (the cautious way). */
  private static @Nullable Long nanos(ResultSet rs, int column) throws SQLException {
    BigDecimal seconds = rs.getBigDecimal(column);
    return seconds == null
        ? null
        : seconds.movePointRight(9).setScale(0, RoundingMode.FLOOR).longValue();
  }

  static long micros(Duration d) {
    return TimeUnit.NANOSECONDS.toMicros(d.toNanos());
  }
}
