package dev.fencing.torture;

import dev.fencing.torture.Worker.HoldPoint;
import dev.fencing.torture.Worker.Route;
import dev.fencing.torture.Worker.Step;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.postgresql.util.PSQLException;

/**
 * A worker's writes on {@link Route#PROTECTED}, {@link Route#TABLE} and {@link Route#MARKED}:
 * through its plain connection (no {@code FencedDataSource}) into a protected table. The first two
 * carry the token with {@code fencing.carry}, not checked, so only the table's trigger judges it
 * (per row on {@code torture_protected}, per statement on the resource's {@code
 * torture_table_<i>}); the third checks it with {@code fencing.check_token} and the statement
 * trigger accepts the write on the marker the check left, which the route keeps for {@link
 * HoldPoint#REPLAY}: a later write under the same lease that sets that marker again instead of
 * checking. A refusal is rolled back and recorded with {@code fencing.record_rejection}, as any
 * client of the one-call recipe would.
 */
final class ProtectedRoute {
  /** The marker a committed {@link Route#MARKED} write read after its check ("" unfenced). */
  private record Marker(String resource, long token, String text) {}

  private final WorkerConnection connection;
  private final boolean fenced;
  private final int worker;
  private final List<String> resources;
  private final WorkerLog log;
  private @Nullable Marker marker;

  ProtectedRoute(
      DataSource plain, boolean fenced, int worker, List<String> resources, WorkerLog log) {
    this.connection = new WorkerConnection(plain);
    this.fenced = fenced;
    this.worker = worker;
    this.resources = resources;
    this.log = log;
  }

  /** Whether a {@link Route#MARKED} write with this token committed: its marker can be replayed. */
  boolean hasMarker(String resource, long token) {
    Marker m = marker;
    return m != null && m.resource().equals(resource) && m.token() == token;
  }

  /**
   * One write on {@code route}; {@code hold} runs at {@code at} ({@link HoldPoint#MID} or {@link
   * HoldPoint#COMMIT}; the caller holds before the write itself). At {@link HoldPoint#REPLAY} (a
   * {@link Route#MARKED} write) it sets the kept marker instead of checking the token.
   *
   * @return {@code ACK}, {@code REFUSED} or {@code ERROR}
   */
  String write(
      Route route,
      String resource,
      long token,
      long seq,
      @Nullable HoldPoint at,
      Step hold,
      Step pause)
      throws IOException {
    Connection c = null;
    String table =
        route == Route.PROTECTED
            ? "torture_protected"
            : TortureTables.tableOf(resources.indexOf(resource));
    try {
      c = connection.get();
      String checked = "";
      if (fenced) {
        checked = prove(c, route, resource, token, at);
      }
      long n = WriteStatements.commit(c, route, table, resource, token, worker, seq, at, hold);
      log.acknowledged(resource, token, seq, n);
      if (route == Route.MARKED && at != HoldPoint.REPLAY) {
        marker = new Marker(resource, token, checked);
      }
      return "ACK";
    } catch (SQLException e) {
      String state = e.getSQLState();
      if (fenced && state != null && state.startsWith("ZF") && c != null) {
        return refused(c, e, resource, token, seq) ? "REFUSED" : "ERROR";
      }
      log.error(seq, e);
      close();
      pause.run();
      return "ERROR";
    }
  }

  /**
   * What the write presents to the table's trigger: the token carried ({@link Route#PROTECTED},
   * {@link Route#TABLE}), or checked ({@link Route#MARKED}; the marker it left is returned), or, at
   * {@link HoldPoint#REPLAY}, the kept marker of an earlier transaction set again.
   */
  private String prove(
      Connection c, Route route, String resource, long token, @Nullable HoldPoint at)
      throws SQLException {
    if (at == HoldPoint.REPLAY && marker != null) {
      try (PreparedStatement ps =
          c.prepareStatement("SELECT set_config('fencing.checked', ?, true)")) {
        ps.setString(1, marker.text());
        ps.execute();
      }
      return marker.text();
    }
    if (route != Route.MARKED) {
      try (PreparedStatement ps = c.prepareStatement("SELECT fencing.carry(?, ?)")) {
        ps.setString(1, resource);
        ps.setLong(2, token);
        ps.execute();
      }
      return "";
    }
    try (PreparedStatement ps = c.prepareStatement("SELECT fencing.check_token(?, ?)")) {
      ps.setString(1, resource);
      ps.setLong(2, token);
      ps.execute();
    }
    try (PreparedStatement ps =
            c.prepareStatement("SELECT coalesce(current_setting('fencing.checked', true), '')");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getString(1);
    }
  }

  /**
   * A refusal by the protected table's trigger (or by {@code check_token}): rolls back, records it
   * with {@code fencing.record_rejection} and its DETAIL (the receipt), then logs it. True if it
   * was logged as a refusal.
   */
  private boolean refused(Connection c, SQLException e, String resource, long token, long seq)
      throws IOException {
    String detail =
        e instanceof PSQLException p && p.getServerErrorMessage() != null
            ? p.getServerErrorMessage().getDetail()
            : null;
    try {
      c.rollback();
      if (detail == null) {
        log.error(seq, e);
        return false;
      }
      try (PreparedStatement ps = c.prepareStatement("SELECT fencing.record_rejection(?)")) {
        ps.setString(1, detail);
        ps.execute();
      }
      c.commit();
    } catch (SQLException failed) {
      // This client keeps no queue of refusals to record (FencedDataSource does): one whose
      // recording was cut off is logged as an error, not as a refusal the log must hold.
      log.error(seq, failed);
      close();
      return false;
    }
    log.refused(resource, token, seq, e.getSQLState());
    return true;
  }

  /** Closes the plain connection, if open. */
  void close() {
    connection.close();
  }
}
