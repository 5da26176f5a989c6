package dev.fencing.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;

/**
 * A statement of a {@link FencedConnection} ({@code createStatement}): every {@code execute*}
 * (batches too) is handed to the connection with the SQL it will run, carrying the check where it
 * can ({@link CarriedStatement}, {@link CarriedBatch}); its results' result sets and {@code
 * getConnection()} lead back to the fenced objects ({@link StatementFence}); everything else is the
 * driver's.
 *
 * <p>Public, like the JDK proxy it replaced and the drivers' own statement classes, so that a JDBC
 * method found through the runtime class can be called; its API is {@link java.sql.Statement}'s and
 * nothing more: only the library makes one. Not thread-safe (the execution under way, the batch,
 * the parameters recorded), as JDBC allows and pgjdbc's statements are not: use a statement on one
 * thread at a time.
 */
public final class FencedStatement extends DelegatingStatement<Statement> {
  private final StatementFence fence;

  FencedStatement(FencedConnection connection, Statement raw) {
    super(raw);
    this.fence = StatementFence.of(connection, raw, Statement.class, null);
  }

  // Statement's executions and their results, fenced (StatementFence)

  @Override
  public boolean execute(String p1) throws SQLException {
    return (Boolean) fence.execute(this, StatementExecution.EXECUTE_SQL, new Object[] {p1});
  }

  @Override
  public boolean execute(String p1, int p2) throws SQLException {
    return (Boolean)
        fence.execute(this, StatementExecution.EXECUTE_SQL_KEYS, new Object[] {p1, p2});
  }

  @Override
  public boolean execute(String p1, int[] p2) throws SQLException {
    return (Boolean)
        fence.execute(this, StatementExecution.EXECUTE_SQL_INDEXES, new Object[] {p1, p2});
  }

  @Override
  public boolean execute(String p1, String[] p2) throws SQLException {
    return (Boolean)
        fence.execute(this, StatementExecution.EXECUTE_SQL_NAMES, new Object[] {p1, p2});
  }

  @Override
  public ResultSet executeQuery(String p1) throws SQLException {
    return (ResultSet) fence.execute(this, StatementExecution.EXECUTE_QUERY_SQL, new Object[] {p1});
  }

  @Override
  public int executeUpdate(String p1) throws SQLException {
    return (Integer) fence.execute(this, StatementExecution.EXECUTE_UPDATE_SQL, new Object[] {p1});
  }

  @Override
  public int executeUpdate(String p1, int p2) throws SQLException {
    return (Integer)
        fence.execute(this, StatementExecution.EXECUTE_UPDATE_SQL_KEYS, new Object[] {p1, p2});
  }

  @Override
  public int executeUpdate(String p1, int[] p2) throws SQLException {
    return (Integer)
        fence.execute(this, StatementExecution.EXECUTE_UPDATE_SQL_INDEXES, new Object[] {p1, p2});
  }

  @Override
  public int executeUpdate(String p1, String[] p2) throws SQLException {
    return (Integer)
        fence.execute(this, StatementExecution.EXECUTE_UPDATE_SQL_NAMES, new Object[] {p1, p2});
  }

  @Override
  public long executeLargeUpdate(String p1) throws SQLException {
    return (Long)
        fence.execute(this, StatementExecution.EXECUTE_LARGE_UPDATE_SQL, new Object[] {p1});
  }

  @Override
  public long executeLargeUpdate(String p1, int p2) throws SQLException {
    return (Long)
        fence.execute(
            this, StatementExecution.EXECUTE_LARGE_UPDATE_SQL_KEYS, new Object[] {p1, p2});
  }

  @Override
  public long executeLargeUpdate(String p1, int[] p2) throws SQLException {
    return (Long)
        fence.execute(
            this, StatementExecution.EXECUTE_LARGE_UPDATE_SQL_INDEXES, new Object[] {p1, p2});
  }

  @Override
  public long executeLargeUpdate(String p1, String[] p2) throws SQLException {
    return (Long)
        fence.execute(
            this, StatementExecution.EXECUTE_LARGE_UPDATE_SQL_NAMES, new Object[] {p1, p2});
  }

  @Override
  public int[] executeBatch() throws SQLException {
    return (int[]) fence.execute(this, StatementExecution.EXECUTE_BATCH, null);
  }

  @Override
  public long[] executeLargeBatch() throws SQLException {
    return (long[]) fence.execute(this, StatementExecution.EXECUTE_LARGE_BATCH, null);
  }

  @Override
  public void addBatch(String p1) throws SQLException {
    fence.addBatch(p1);
  }

  @Override
  public void clearBatch() throws SQLException {
    fence.clearBatchOfRaw();
  }

  @Override
  public ResultSet getResultSet() throws SQLException {
    return fence.getResultSet(this);
  }

  @Override
  public int getUpdateCount() throws SQLException {
    return fence.getUpdateCount();
  }

  @Override
  public long getLargeUpdateCount() throws SQLException {
    return fence.getLargeUpdateCount();
  }

  @Override
  public boolean getMoreResults() throws SQLException {
    return fence.getMoreResults();
  }

  @Override
  public boolean getMoreResults(int p1) throws SQLException {
    return fence.getMoreResults(p1);
  }

  @Override
  public SQLWarning getWarnings() throws SQLException {
    return fence.getWarnings();
  }

  @Override
  public void clearWarnings() throws SQLException {
    fence.clearWarnings();
  }

  @Override
  public ResultSet getGeneratedKeys() throws SQLException {
    return fence.getGeneratedKeys(this);
  }

  @Override
  public void closeOnCompletion() throws SQLException {
    fence.closeOnCompletion();
  }

  @Override
  public void cancel() throws SQLException {
    fence.cancel();
  }

  @Override
  public void close() throws SQLException {
    fence.close();
  }

  @Override
  public Connection getConnection() throws SQLException {
    return fence.getConnection();
  }

  @Override
  public <T> T unwrap(Class<T> p1) throws SQLException {
    return fence.unwrap(this, p1);
  }

  @Override
  public boolean isWrapperFor(Class<?> p1) throws SQLException {
    return fence.isWrapperFor(this, p1);
  }

  @Override
  public String toString() {
    return fence.toString();
  }
}
