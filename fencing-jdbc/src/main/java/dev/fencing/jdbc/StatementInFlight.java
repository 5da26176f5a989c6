package dev.fencing.jdbc;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.jspecify.annotations.Nullable;

/**
 * What a fenced statement ({@link StatementFence}) has in flight, and how its {@code cancel()} and
 * query timeout reach it: the execution under way, which {@link #call()} makes on the driver's
 * statement once the fence has had its say, and the fencing check made for that execution (or for a
 * {@code getMetaData()} that pgjdbc runs as one) in a round trip of its own, on a statement of
 * {@link TokenChecker}'s, which {@link #cancel()} cancels too. One per statement: nothing made per
 * execution.
 *
 * <p>Not thread-safe, as the statement is not, except {@link #cancel()}, which another thread may
 * call while an execution is under way.
 */
final class StatementInFlight implements ConnectionFence.JdbcCall {
  private final FencedConnection connection;
  private final Statement raw;
  private final @Nullable CarriedCheck carrier;
  // the execution under way, which call() makes on the driver's statement (a statement executes
  // one thing at a time)
  private @Nullable StatementExecution executing;
  private Object @Nullable [] executingArgs;
  // The fencing check of the execution under way while it runs in a round trip of its own, on a
  // statement of TokenChecker's (not carried): cancel() cancels it too. Written by the executing
  // thread, read by the one that cancels.
  private volatile @Nullable Statement check;

  StatementInFlight(FencedConnection connection, Statement raw, @Nullable CarriedCheck carrier) {
    this.connection = connection;
    this.raw = raw;
    this.carrier = carrier;
  }

  /** {@code execution} with {@code args} (null for none) is under way, until {@link #ended()}. */
  void started(StatementExecution execution, Object @Nullable [] args) {
    executing = execution;
    executingArgs = args;
  }

  /** The execution under way ended. */
  void ended() {
    executing = null;
    executingArgs = null;
  }

  /**
   * The execution under way, on the driver's statement (not carrying the check): what {@link
   * ConnectionFence#execute} calls when the fence has had its say.
   */
  @Override
  public @Nullable Object call() throws Throwable {
    StatementExecution e = executing;
    if (e == null) {
      throw new IllegalStateException("no execution under way");
    }
    CarriedCheck c = carrier;
    if (c != null) {
      c.executingRaw();
    }
    // the fetch size matters only in the wrapper's transaction: read it only there
    int fetchSize = connection.fence().inWrapperTransaction() ? raw.getFetchSize() : 0;
    if (fetchSize == 0) {
      return e.run(raw, executingArgs);
    }
    // The caller is in autocommit, where pgjdbc ignores a fetch size and reads every row at once;
    // in the wrapper's transaction it would open a cursor that the wrapper's COMMIT closes before
    // the caller reads past the first fetch (34000 "portal does not exist", and of a query that
    // writes only the rows fetched so far committed). Read as in autocommit.
    raw.setFetchSize(0);
    Object result;
    try {
      result = e.run(raw, executingArgs);
    } finally {
      raw.setFetchSize(fetchSize);
    }
    ResultSet rs = raw.getResultSet();
    if (rs != null) {
      rs.setFetchSize(fetchSize); // as the driver's, made with the statement's fetch size
    }
    return result;
  }

  /**
   * The caller's query timeout in seconds (0: none), which a check run for its execution in a round
   * trip of its own takes over ({@link TokenChecker}): reading the driver's field, nothing sent.
   */
  int queryTimeout() throws SQLException {
    return raw.getQueryTimeout();
  }

  /**
   * {@code s} runs the fencing check of the execution under way in a round trip of its own, until
   * called again with null: {@link #cancel()} cancels it too.
   */
  void checking(@Nullable Statement s) {
    check = s;
  }

  /**
   * {@code cancel()}: the check of the execution under way if it runs on a statement of its own,
   * then the carrier's statements and the driver's. pgjdbc cancels only a statement still executing
   * and sends the cancel request before that statement's {@code execute} returns, so each cancel
   * reaches the check, or the caller's statement once it runs, never a later statement. A cancel
   * that comes after the check returned and before the caller's statement started is lost, as
   * pgjdbc loses one that comes before its own statement starts.
   */
  void cancel() throws SQLException {
    Statement s = check;
    if (s != null) {
      try {
        s.cancel();
      } catch (SQLException e) {
        if (check == s) {
          throw e;
        } // else the check ended (and its statement closed) meanwhile: nothing to cancel
      }
    }
    CarriedCheck c = carrier;
    if (c != null) {
      c.cancel();
    }
    raw.cancel();
  }
}
