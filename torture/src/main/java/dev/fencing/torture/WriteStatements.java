package dev.fencing.torture;

import dev.fencing.torture.Worker.HoldPoint;
import dev.fencing.torture.Worker.Route;
import dev.fencing.torture.Worker.Step;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.jspecify.annotations.Nullable;

/** The two statements of a worker's write, as each {@link Route} sends them. */
final class WriteStatements {
  private WriteStatements() {}

  /**
   * The whole write in {@code c}'s open transaction: {@link #count}, {@link #record} in {@code
   * table} and the commit, with {@code hold} run between the statements ({@link HoldPoint#MID}) or
   * before the commit ({@link HoldPoint#COMMIT}) as {@code at} says.
   *
   * @return the commit position the write took
   */
  static long commit(
      Connection c,
      Route route,
      String table,
      String resource,
      long token,
      int worker,
      long seq,
      @Nullable HoldPoint at,
      Step hold)
      throws SQLException {
    long n = count(c, route, resource);
    if (at == HoldPoint.MID) {
      hold.run();
    }
    record(c, route, table, resource, n, token, worker, seq);
    if (at == HoldPoint.COMMIT) {
      hold.run();
    }
    c.commit();
    return n;
  }

  /** Takes the resource's next commit position: the row lock on its counter orders its writes. */
  static long count(Connection c, Route route, String resource) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            route == Route.HIDDEN
                ? "SELECT * FROM generate_series(?::text)"
                : "UPDATE torture_counter SET n = n + 1 WHERE resource = ? RETURNING n")) {
      ps.setString(1, resource);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /** Records the write in {@code table}, with the {@code max_seen} its transaction sees now. */
  static void record(
      Connection c,
      Route route,
      String table,
      String resource,
      long n,
      long token,
      int worker,
      long seq)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            route == Route.HIDDEN
                ? "SELECT * FROM generate_series(?::text, ?::bigint, ?::bigint, ?::int, ?::bigint)"
                : "INSERT INTO "
                    + table
                    + " (resource, n, token, worker, seq, max_seen)"
                    + " SELECT ?, ?, ?, ?, ?, s.max_seen FROM fencing.status(?) s")) {
      ps.setString(1, resource);
      ps.setLong(2, n);
      ps.setLong(3, token);
      ps.setInt(4, worker);
      ps.setLong(5, seq);
      if (route != Route.HIDDEN) {
        ps.setString(6, resource);
      }
      ps.execute();
    }
  }
}
