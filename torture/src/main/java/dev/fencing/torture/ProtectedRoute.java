package dev.fencing.torture;

import dev.fencing.torture.Worker.HoldPoint;
import dev.fencing.torture.Worker.Route;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.postgresql.util.PSQLException;

/**
 * A worker's writes on {@link Route#PROTECTED}: through its plain connection (no {@code
 * FencedDataSource}), the token carried with {@code fencing.carry}, not checked, so only the
 * protected table's trigger judges it; a refusal is rolled back and recorded with {@code
 * fencing.record_rejection}, as any client of the one-call recipe would.
 */
final class ProtectedRoute {
  /** Where a held write waits, or the worker's pause after a failure. */
  @FunctionalInterface
  interface Step {
    void run();
  }

  private final DataSource plain;
  private final boolean fenced;
  private final int worker;
  private final WorkerLog log;
  private @Nullable Connection connection;

  ProtectedRoute(DataSource plain, boolean fenced, int worker, WorkerLog log) {
    this.plain = plain;
    this.fenced = fenced;
    this.worker = worker;
    this.log = log;
  }

  /**
   * One write; {@code hold} runs at {@code at} ({@link HoldPoint#MID} or {@link HoldPoint#COMMIT};
   * the caller holds before the write itself).
   *
   * @return {@code ACK}, {@code REFUSED} or {@code ERROR}
   */
  String write(String resource, long token, long seq, @Nullable HoldPoint at, Step hold, Step pause)
      throws IOException {
    Connection c = null;
    try {
      c = connection();
      if (fenced) {
        try (PreparedStatement ps = c.prepareStatement("SELECT fencing.carry(?, ?)")) {
          ps.setString(1, resource);
          ps.setLong(2, token);
          ps.execute();
        }
      }
      long n = WriteStatements.count(c, Route.PROTECTED, resource);
      if (at == HoldPoint.MID) {
        hold.run();
      }
      WriteStatements.record(
          c, Route.PROTECTED, "torture_protected", resource, n, token, worker, seq);
      if (at == HoldPoint.COMMIT) {
        hold.run();
      }
      c.commit();
      log.acknowledged(resource, token, seq, n);
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
   * A refusal by the protected table's trigger: rolls back, records it with {@code
   * fencing.record_rejection} and its DETAIL (the receipt), then logs it. True if it was logged as
   * a refusal.
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

  private Connection connection() throws SQLException {
    Connection c = connection;
    if (c == null) {
      c = plain.getConnection();
      c.setAutoCommit(false);
      connection = c;
    }
    return c;
  }

  /** Closes the plain connection, if open. */
  void close() {
    Connection c = connection;
    connection = null;
    if (c != null) {
      try {
        c.close();
      } catch (SQLException e) {
        // broken anyway
      }
    }
  }
}
