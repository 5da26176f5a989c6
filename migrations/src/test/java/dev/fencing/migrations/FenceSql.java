package dev.fencing.migrations;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;

/**
 * Small JDBC helpers for the migration tests (beside {@link Fence}): parameterised one-value
 * queries, the fence's status and a snapshot of everything the fence writes. Test code only.
 */
final class FenceSql {
  private FenceSql() {}

  /** What {@code fencing.status(resource)} reports. */
  record Status(
      String resource,
      long maxSeen,
      long lastIssued,
      @Nullable String holder,
      long leaseToken,
      @Nullable Instant expiresAt,
      boolean leaseValid) {}

  /** Row counts of the fence's tables and the token sequence's state. */
  record Snapshot(
      long resources,
      long leases,
      long issuances,
      long rejections,
      long sequenceLastValue,
      boolean sequenceCalled) {}

  /**
   * The outcome of try_acquire, read column by column ({@code token} is NULL when the lease was not
   * granted; {@code holder} and {@code expiresAt} then describe the current lease, if any).
   */
  record Attempt(
      boolean acquired,
      @Nullable Long token,
      @Nullable String holder,
      @Nullable Instant expiresAt) {}

  static Attempt tryAcquire(Connection c, String resource, String holder, Duration ttl)
      throws SQLException {
    try (PreparedStatement ps =
            prepare(
                c,
                "SELECT acquired, token, holder, expires_at"
                    + " FROM fencing.try_acquire(?, ?, make_interval(secs => ?))",
                resource,
                holder,
                ttl.toNanos() / 1e9);
        ResultSet rs = ps.executeQuery()) {
      if (!rs.next()) {
        throw new SQLException("try_acquire returned no row");
      }
      Timestamp expires = rs.getTimestamp(4);
      return new Attempt(
          rs.getBoolean(1),
          rs.getObject(2, Long.class),
          rs.getString(3),
          expires == null ? null : expires.toInstant());
    }
  }

  /** A lower-case name that is unique enough for roles and resources of one test run. */
  static String unique(String prefix) {
    return prefix + "_" + String.format(Locale.ROOT, "%08x", ThreadLocalRandom.current().nextInt());
  }

  static PreparedStatement prepare(Connection c, String sql, @Nullable Object... args)
      throws SQLException {
    PreparedStatement ps = c.prepareStatement(sql);
    try {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
    } catch (SQLException | RuntimeException e) {
      ps.close();
      throw e;
    }
    return ps;
  }

  /** The first column of the single row {@code sql} returns, as a long (0 for NULL). */
  static long longValue(Connection c, String sql, @Nullable Object... args) throws SQLException {
    try (PreparedStatement ps = prepare(c, sql, args);
        ResultSet rs = ps.executeQuery()) {
      if (!rs.next()) {
        throw new SQLException("no row from " + sql);
      }
      return rs.getLong(1);
    }
  }

  /**
   * How often the current transaction has called the fence's function {@code function} (the
   * database must track functions: {@code track_functions = 'all'}).
   */
  static long calls(Connection c, String function) throws SQLException {
    return longValue(
        c,
        "SELECT coalesce(sum(calls), 0) FROM pg_stat_xact_user_functions"
            + " WHERE schemaname = 'fencing' AND funcname = ?",
        function);
  }

  /** The first column of the single row {@code sql} returns, as a string. */
  static @Nullable String string(Connection c, String sql, @Nullable Object... args)
      throws SQLException {
    try (PreparedStatement ps = prepare(c, sql, args);
        ResultSet rs = ps.executeQuery()) {
      if (!rs.next()) {
        throw new SQLException("no row from " + sql);
      }
      return rs.getString(1);
    }
  }

  /** The first column of every row, as strings. */
  static List<String> strings(Connection c, String sql, @Nullable Object... args)
      throws SQLException {
    List<String> values = new ArrayList<>();
    try (PreparedStatement ps = prepare(c, sql, args);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        values.add(String.valueOf(rs.getString(1)));
      }
    }
    return values;
  }

  /** The first column of every row, as longs. */
  static List<Long> longs(Connection c, String sql, @Nullable Object... args) throws SQLException {
    List<Long> values = new ArrayList<>();
    try (PreparedStatement ps = prepare(c, sql, args);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        values.add(rs.getLong(1));
      }
    }
    return values;
  }

  /** Runs a statement that returns nothing of interest (DDL, DML, or a SELECT of a function). */
  static void run(Connection c, String sql, @Nullable Object... args) throws SQLException {
    try (PreparedStatement ps = prepare(c, sql, args)) {
      ps.execute();
    }
  }

  static Status status(Connection c, String resource) throws SQLException {
    return status(c, "fencing", resource);
  }

  static Status status(Connection c, String schema, String resource) throws SQLException {
    try (PreparedStatement ps =
            prepare(
                c,
                "SELECT resource, max_seen, last_issued, holder, lease_token, expires_at,"
                    + " lease_valid FROM "
                    + schema
                    + ".status(?)",
                resource);
        ResultSet rs = ps.executeQuery()) {
      if (!rs.next()) {
        throw new SQLException("status() returned no row for " + resource);
      }
      Timestamp expires = rs.getTimestamp(6);
      return new Status(
          rs.getString(1),
          rs.getLong(2),
          rs.getLong(3),
          rs.getString(4),
          rs.getLong(5),
          expires == null ? null : expires.toInstant(),
          rs.getBoolean(7));
    }
  }

  /** Needs a role that may read the fence's tables (the superuser of the test database). */
  static Snapshot snapshot(Connection c) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT (SELECT count(*) FROM fencing.resource),"
                    + " (SELECT count(*) FROM fencing.lease),"
                    + " (SELECT count(*) FROM fencing.issuance),"
                    + " (SELECT count(*) FROM fencing.rejection),"
                    + " last_value, is_called FROM fencing.token_seq")) {
      rs.next();
      return new Snapshot(
          rs.getLong(1),
          rs.getLong(2),
          rs.getLong(3),
          rs.getLong(4),
          rs.getLong(5),
          rs.getBoolean(6));
    }
  }

  static String quoteIdentifier(String identifier) {
    return '"' + identifier.replace("\"", "\"\"") + '"';
  }
}
