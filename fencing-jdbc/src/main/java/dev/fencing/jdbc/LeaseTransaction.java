package dev.fencing.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLWarning;
import org.jspecify.annotations.Nullable;
import org.postgresql.util.PSQLWarning;
import org.postgresql.util.ServerErrorMessage;

/**
 * Issue, seen from Java: the transaction each lease operation runs in. Its own READ COMMITTED
 * transaction with an explicit commit, so that a commit that PostgreSQL says "might not have been
 * replicated" is noticed (such a token does not count as issued).
 */
final class LeaseTransaction {
  private static final String NOT_REPLICATED = "might not have been replicated";

  private LeaseTransaction() {}

  @FunctionalInterface
  interface SqlWork<T> {
    T run(Connection c) throws SQLException;
  }

  /** A committed result, and the commit's not-replicated warning if there was one. */
  record Committed<T>(T result, @Nullable SQLWarning notReplicated) {}

  /**
   * Runs {@code work} in its own READ COMMITTED transaction with an explicit commit, then gives the
   * connection back its previous autocommit and isolation: it may be a pooled one.
   */
  static <T> Committed<T> run(Connection c, SqlWork<T> work) throws SQLException {
    boolean autoCommit = c.getAutoCommit();
    int isolation = c.getTransactionIsolation();
    Committed<T> committed;
    try {
      committed = commit(c, work);
    } catch (SQLException | RuntimeException e) {
      try {
        restore(c, autoCommit, isolation);
      } catch (SQLException | RuntimeException restoreFailure) {
        e.addSuppressed(restoreFailure);
      }
      throw e;
    }
    restore(c, autoCommit, isolation);
    return committed;
  }

  private static <T> Committed<T> commit(Connection c, SqlWork<T> work) throws SQLException {
    c.setAutoCommit(false);
    c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
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

  private static void restore(Connection c, boolean autoCommit, int isolation) throws SQLException {
    if (isolation != Connection.TRANSACTION_READ_COMMITTED) {
      c.setTransactionIsolation(isolation);
    }
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
