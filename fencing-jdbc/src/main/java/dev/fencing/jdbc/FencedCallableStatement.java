package dev.fencing.jdbc;

import java.sql.Array;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.ParameterMetaData;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.util.Map;

/**
 * A callable statement of a {@link FencedConnection} ({@code prepareCall}): as a {@link
 * FencedStatement} (the check in a round trip of its own: a call never carries it), and a result
 * set among its out parameters (a refcursor) is fenced too; everything else is the driver's.
 *
 * <p>Public, like the JDK proxy it replaced and the drivers' own statement classes, so that a JDBC
 * method found through the runtime class can be called; its API is {@link
 * java.sql.CallableStatement}'s and nothing more: only the library makes one. Not thread-safe (the
 * execution under way, the batch, the parameters recorded), as JDBC allows and pgjdbc's statements
 * are not: use a statement on one thread at a time.
 */
public final class FencedCallableStatement extends DelegatingCallableStatement {
  private final StatementFence fence;

  FencedCallableStatement(
      FencedConnection connection, CallableStatement raw, Object[] prepareArgs) {
    super(raw);
    this.fence = StatementFence.of(connection, raw, CallableStatement.class, prepareArgs);
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

  // PreparedStatement's own executions, batch rows, parameters cleared, descriptions

  @Override
  public boolean execute() throws SQLException {
    return (Boolean) fence.execute(this, StatementExecution.EXECUTE, null);
  }

  @Override
  public ResultSet executeQuery() throws SQLException {
    return (ResultSet) fence.execute(this, StatementExecution.EXECUTE_QUERY, null);
  }

  @Override
  public int executeUpdate() throws SQLException {
    return (Integer) fence.execute(this, StatementExecution.EXECUTE_UPDATE, null);
  }

  @Override
  public long executeLargeUpdate() throws SQLException {
    return (Long) fence.execute(this, StatementExecution.EXECUTE_LARGE_UPDATE, null);
  }

  @Override
  public void addBatch() throws SQLException {
    fence.addBatch();
  }

  @Override
  public void clearParameters() throws SQLException {
    fence.clearParameters();
  }

  @Override
  public ResultSetMetaData getMetaData() throws SQLException {
    return fence.getMetaData();
  }

  @Override
  public ParameterMetaData getParameterMetaData() throws SQLException {
    return fence.getParameterMetaData();
  }

  // an out parameter's result set (a refcursor, an array's) leads back to this statement too

  @Override
  public Array getArray(int p1) throws SQLException {
    return fence.fence(raw.getArray(p1), this);
  }

  @Override
  public Array getArray(String p1) throws SQLException {
    return fence.fence(raw.getArray(p1), this);
  }

  @Override
  public Object getObject(int p1) throws SQLException {
    return fence.fence(raw.getObject(p1), this);
  }

  @Override
  public Object getObject(String p1) throws SQLException {
    return fence.fence(raw.getObject(p1), this);
  }

  @Override
  public Object getObject(int p1, Map<String, Class<?>> p2) throws SQLException {
    return fence.fence(raw.getObject(p1, p2), this);
  }

  @Override
  public Object getObject(String p1, Map<String, Class<?>> p2) throws SQLException {
    return fence.fence(raw.getObject(p1, p2), this);
  }

  @Override
  public <T> T getObject(int p1, Class<T> p2) throws SQLException {
    return fence.fence(raw.getObject(p1, p2), this);
  }

  @Override
  public <T> T getObject(String p1, Class<T> p2) throws SQLException {
    return fence.fence(raw.getObject(p1, p2), this);
  }
}
