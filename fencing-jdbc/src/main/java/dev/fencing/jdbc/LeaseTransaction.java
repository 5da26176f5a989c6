package dev.fencing.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import org.jspecify.annotations.Nullable;
import org.postgresql.util.PSQLWarning;
import org.postgresql.util.ServerErrorMessage;

/**
 * Issue, seen from Java: the transaction each lease operation runs in. Its own READ COMMITTED
 * transaction with an explicit commit, so that a commit that PostgreSQL says "might not have been
 * replicated" is noticed (such a token does not count as issued).
 *
 * <p>One round trip per operation: {@code BEGIN ISOLATION LEVEL READ COMMITTED}, the statement and
 * {@code COMMIT} are one query string, which pgjdbc sends in autocommit mode as one message flush
 * with one Sync, and the commit's warnings come back with the statement's results. The isolation
 * level is the transaction's own, so the session's default is neither read nor changed. If the
 * statement fails, the transaction is left aborted until the Sync, and a {@code ROLLBACK} (a second
 * round trip, on the error path only) ends it.
 */
final class LeaseTransaction {
  private static final String NOT_REPLICATED = "might not have been replicated";

  private static final String BEGIN = "BEGIN ISOLATION LEVEL READ COMMITTED; ";
  private static final String COMMIT = "; COMMIT";

  private LeaseTransaction() {}

  /** Binds the parameters of a lease statement. */
  @FunctionalInterface
  interface Binder {
    void bind(PreparedStatement ps) throws SQLException;
  }

  /** Reads the rows of a lease statement. */
  @FunctionalInterface
  interface RowReader<T> {
    T read(ResultSet rs) throws SQLException;
  }

  /** A committed result, and the commit's not-replicated warning if there was one. */
  record Committed<T>(T result, @Nullable SQLWarning notReplicated) {}

  /**
   * Runs {@code sql} (one statement that returns rows) in a transaction of its own, in one round
   * trip, then gives the connection back its previous autocommit: it may be a pooled one. A
   * borrowed connection has no transaction open, so switching autocommit sends nothing.
   */
  static <T> Committed<T> run(Connection c, String sql, Binder binder, RowReader<T> reader)
      throws SQLException {
    return run(c, sql, binder, reader, false);
  }

  /**
   * As {@link #run(Connection, String, Binder, RowReader)}; if {@code interruptible}, an interrupt
   * of the calling thread while the statement runs cancels it ({@link InterruptWatch}): the
   * transaction is rolled back and this throws {@link #interrupted} (SQLState {@code 57014}, an
   * {@link InterruptedException} as cause), the thread's interrupt status kept.
   */
  static <T> Committed<T> run(
      Connection c, String sql, Binder binder, RowReader<T> reader, boolean interruptible)
      throws SQLException {
    boolean autoCommit = c.getAutoCommit();
    if (!autoCommit) {
      c.setAutoCommit(true);
    }
    try {
      return oneRoundTrip(c, sql, binder, reader, interruptible);
    } finally {
      if (!autoCommit) {
        c.setAutoCommit(false);
      }
    }
  }

  private static <T> Committed<T> oneRoundTrip(
      Connection c, String sql, Binder binder, RowReader<T> reader, boolean interruptible)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(BEGIN + sql + COMMIT)) {
      binder.bind(ps);
      @Nullable InterruptWatch watch = interruptible ? InterruptWatch.start(ps) : null;
      try {
        ps.execute(); // BEGIN's result comes first; the statement's rows and COMMIT arrived with it
      } catch (SQLException | RuntimeException e) {
        if (watch != null) {
          watch.close(); // no cancel after this: the rollback is not cancelled
        }
        rollback(c, e);
        if (watch != null && e instanceof SQLException failure && watch.interrupted(failure)) {
          SQLException interrupted = interrupted("the lease statement was cancelled");
          interrupted.addSuppressed(e);
          throw interrupted;
        }
        throw e;
      } finally {
        if (watch != null) {
          watch.close();
        }
      }
      if (!ps.getMoreResults()) {
        throw new SQLException("the lease statement returned no rows");
      }
      T result;
      try (ResultSet rs = ps.getResultSet()) {
        result = reader.read(rs);
      }
      return new Committed<>(result, notReplicated(ps.getWarnings()));
    }
  }

  /**
   * An operation ended by an interrupt of its thread: SQLState {@code 57014} (PostgreSQL's
   * query_canceled), an {@link InterruptedException} as cause; nothing was done.
   */
  static SQLException interrupted(String message) {
    return new SQLException(message, LeaseWait.INTERRUPTED, new InterruptedException());
  }

  /** Whether {@code e} is {@link #interrupted}'s. */
  static boolean isInterrupted(SQLException e) {
    return LeaseWait.INTERRUPTED.equals(e.getSQLState())
        && e.getCause() instanceof InterruptedException;
  }

  /** Ends the transaction a failed statement left aborted (BEGIN ran, COMMIT was skipped). */
  private static void rollback(Connection c, Exception failure) {
    try (Statement s = c.createStatement()) {
      s.execute("ROLLBACK");
    } catch (SQLException | RuntimeException rollbackFailure) {
      failure.addSuppressed(rollbackFailure);
    }
  }

  private static @Nullable SQLWarning notReplicated(@Nullable SQLWarning chain) {
    for (SQLWarning w = chain; w != null; w = w.getNextWarning()) {
      if (warningText(w).contains(NOT_REPLICATED)) {
        return w;
      }
    }
    return null;
  }

  /** Message and DETAIL: pgjdbc's getMessage() leaves out the DETAIL, where PostgreSQL says it. */
  static String warningText(SQLWarning w) {
    String text = String.valueOf(w.getMessage());
    if (w instanceof PSQLWarning psql) {
      ServerErrorMessage server = psql.getServerErrorMessage();
      if (server.getDetail() != null) {
        text += " (" + server.getDetail() + ")";
      }
    }
    return text;
  }
}
