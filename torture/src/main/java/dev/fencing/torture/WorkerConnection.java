package dev.fencing.torture;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * A worker route's one long-lived connection (autocommit off): opened on first use, closed when it
 * broke and opened again by the next write. {@link FencedRoute} and {@link ProtectedRoute} each
 * keep one, over the fenced and the plain data source.
 */
final class WorkerConnection {
  private final DataSource source;
  private @Nullable Connection connection;

  WorkerConnection(DataSource source) {
    this.source = source;
  }

  /** The open connection, opened (autocommit off) if there is none. */
  Connection get() throws SQLException {
    Connection c = connection;
    if (c == null) {
      c = source.getConnection();
      c.setAutoCommit(false);
      connection = c;
    }
    return c;
  }

  /** Closes the connection, if open; the next {@link #get()} opens another. */
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
