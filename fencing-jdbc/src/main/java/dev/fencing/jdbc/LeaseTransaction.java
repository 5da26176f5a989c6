package dev.fencing.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import org.jspecify.annotations.Nullable;
import org.postgresql.util.PSQLWarning;
import org.postgresql.util.ServerErrorMessage;

/**
 * Issue, seen from Java: the transaction each lease operation runs in. Its own READ COMMITTED
 * transaction with an explicit commit, so that a commit that PostgreSQL says "might not have been
 * replicated" is noticed (such a token does not count as issued).
 *
 * <p>Two round trips per operation: the statement (with {@code BEGIN} and the isolation level sent
 * ahead of it in the same message flush) and the {@code COMMIT}. The isolation level is set for the
 * transaction only ({@link #READ_COMMITTED} in front of every lease statement), so the session's
 * default is neither read nor changed: no extra round trips, nothing to restore.
 */
final class LeaseTransaction {
  private static final String NOT_REPLICATED = "might not have been replicated";

  /**
   * Goes in front of every lease statement: READ COMMITTED for this transaction, whatever the
   * session's default; pgjdbc sends it with the statement, in one round trip.
   */
  static final String READ_COMMITTED = "SET TRANSACTION ISOLATION LEVEL READ COMMITTED; ";

  private LeaseTransaction() {}

  @FunctionalInterface
  interface SqlWork<T> {
    T run(Connection c) throws SQLException;
  }

  /** A committed result, and the commit's not-replicated warning if there was one. */
  record Committed<T>(T result, @Nullable SQLWarning notReplicated) {}

  /**
   * Runs {@code work} in its own transaction with an explicit commit, then gives the connection
   * back its previous autocommit: it may be a pooled one. {@code work} must send its statement with
   * {@link #prepare} (READ COMMITTED) and read it with {@link #resultOf}.
   */
  static <T> Committed<T> run(Connection c, SqlWork<T> work) throws SQLException {
    boolean autoCommit = c.getAutoCommit();
    Committed<T> committed;
    try {
      committed = commit(c, work);
    } catch (SQLException | RuntimeException e) {
      try {
        restore(c, autoCommit);
      } catch (SQLException | RuntimeException restoreFailure) {
        e.addSuppressed(restoreFailure);
      }
      throw e;
    }
    restore(c, autoCommit);
    return committed;
  }

  /** Prepares a lease statement, the transaction's first, behind {@link #READ_COMMITTED}. */
  static PreparedStatement prepare(Connection c, String sql) throws SQLException {
    return c.prepareStatement(READ_COMMITTED + sql);
  }

  /** Executes a statement from {@link #prepare} and returns the lease statement's rows. */
  static ResultSet resultOf(PreparedStatement ps) throws SQLException {
    ps.execute(); // the SET TRANSACTION's result comes first
    if (!ps.getMoreResults()) {
      throw new SQLException("the lease statement returned no rows");
    }
    return ps.getResultSet();
  }

  private static <T> Committed<T> commit(Connection c, SqlWork<T> work) throws SQLException {
    c.setAutoCommit(false);
    c.clearWarnings(); // only this commit's warnings may count
    try {
      T result = work.run(c);
      c.commit();
      return new Committed<>(result, notReplicated(c.getWarnings()));
    } catch (SQLException | RuntimeException e) {
      try {
        c.rollback();
      } catch (SQLException | RuntimeException rollbackFailure) {
        e.addSuppressed(rollbackFailure);
      }
      throw e;
    }
  }

  private static void restore(Connection c, boolean autoCommit) throws SQLException {
    if (autoCommit) {
      c.setAutoCommit(true);
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
