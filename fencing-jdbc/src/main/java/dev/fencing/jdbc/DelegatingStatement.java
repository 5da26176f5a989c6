package dev.fencing.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;

/**
 * A {@link Statement} that hands every method, the default ones too, to the driver's object {@link
 * #raw}, unchanged: what a subclass does not override is the driver's. Written out in full (every
 * method of JDBC 4.3's {@code Statement}, from reflection over Java 17's {@code java.sql}) so that
 * a call costs a virtual call, not a proxy's {@code Method.invoke}; {@code DelegatingTest} fails if
 * a method is missing or handed to another.
 */
abstract class DelegatingStatement<S extends Statement> implements Statement {
  /** The driver's object, which every method not overridden is handed to. */
  final S raw;

  DelegatingStatement(S raw) {
    this.raw = raw;
  }

  @Override
  public void addBatch(String p1) throws SQLException {
    raw.addBatch(p1);
  }

  @Override
  public void cancel() throws SQLException {
    raw.cancel();
  }

  @Override
  public void clearBatch() throws SQLException {
    raw.clearBatch();
  }

  @Override
  public void clearWarnings() throws SQLException {
    raw.clearWarnings();
  }

  @Override
  public void close() throws SQLException {
    raw.close();
  }

  @Override
  public void closeOnCompletion() throws SQLException {
    raw.closeOnCompletion();
  }

  @Override
  public String enquoteIdentifier(String p1, boolean p2) throws SQLException {
    return raw.enquoteIdentifier(p1, p2);
  }

  @Override
  public String enquoteLiteral(String p1) throws SQLException {
    return raw.enquoteLiteral(p1);
  }

  @Override
  public String enquoteNCharLiteral(String p1) throws SQLException {
    return raw.enquoteNCharLiteral(p1);
  }

  @Override
  public boolean execute(String p1) throws SQLException {
    return raw.execute(p1);
  }

  @Override
  public boolean execute(String p1, String[] p2) throws SQLException {
    return raw.execute(p1, p2);
  }

  @Override
  public boolean execute(String p1, int p2) throws SQLException {
    return raw.execute(p1, p2);
  }

  @Override
  public boolean execute(String p1, int[] p2) throws SQLException {
    return raw.execute(p1, p2);
  }

  @Override
  public int[] executeBatch() throws SQLException {
    return raw.executeBatch();
  }

  @Override
  public long[] executeLargeBatch() throws SQLException {
    return raw.executeLargeBatch();
  }

  @Override
  public long executeLargeUpdate(String p1) throws SQLException {
    return raw.executeLargeUpdate(p1);
  }

  @Override
  public long executeLargeUpdate(String p1, String[] p2) throws SQLException {
    return raw.executeLargeUpdate(p1, p2);
  }

  @Override
  public long executeLargeUpdate(String p1, int p2) throws SQLException {
    return raw.executeLargeUpdate(p1, p2);
  }

  @Override
  public long executeLargeUpdate(String p1, int[] p2) throws SQLException {
    return raw.executeLargeUpdate(p1, p2);
  }

  @Override
  public ResultSet executeQuery(String p1) throws SQLException {
    return raw.executeQuery(p1);
  }

  @Override
  public int executeUpdate(String p1) throws SQLException {
    return raw.executeUpdate(p1);
  }

  @Override
  public int executeUpdate(String p1, String[] p2) throws SQLException {
    return raw.executeUpdate(p1, p2);
  }

  @Override
  public int executeUpdate(String p1, int p2) throws SQLException {
    return raw.executeUpdate(p1, p2);
  }

  @Override
  public int executeUpdate(String p1, int[] p2) throws SQLException {
    return raw.executeUpdate(p1, p2);
  }

  @Override
  public Connection getConnection() throws SQLException {
    return raw.getConnection();
  }

  @Override
  public int getFetchDirection() throws SQLException {
    return raw.getFetchDirection();
  }

  @Override
  public int getFetchSize() throws SQLException {
    return raw.getFetchSize();
  }

  @Override
  public ResultSet getGeneratedKeys() throws SQLException {
    return raw.getGeneratedKeys();
  }

  @Override
  public long getLargeMaxRows() throws SQLException {
    return raw.getLargeMaxRows();
  }

  @Override
  public long getLargeUpdateCount() throws SQLException {
    return raw.getLargeUpdateCount();
  }

  @Override
  public int getMaxFieldSize() throws SQLException {
    return raw.getMaxFieldSize();
  }

  @Override
  public int getMaxRows() throws SQLException {
    return raw.getMaxRows();
  }

  @Override
  public boolean getMoreResults() throws SQLException {
    return raw.getMoreResults();
  }

  @Override
  public boolean getMoreResults(int p1) throws SQLException {
    return raw.getMoreResults(p1);
  }

  @Override
  public int getQueryTimeout() throws SQLException {
    return raw.getQueryTimeout();
  }

  @Override
  public ResultSet getResultSet() throws SQLException {
    return raw.getResultSet();
  }

  @Override
  public int getResultSetConcurrency() throws SQLException {
    return raw.getResultSetConcurrency();
  }

  @Override
  public int getResultSetHoldability() throws SQLException {
    return raw.getResultSetHoldability();
  }

  @Override
  public int getResultSetType() throws SQLException {
    return raw.getResultSetType();
  }

  @Override
  public int getUpdateCount() throws SQLException {
    return raw.getUpdateCount();
  }

  @Override
  public SQLWarning getWarnings() throws SQLException {
    return raw.getWarnings();
  }

  @Override
  public boolean isCloseOnCompletion() throws SQLException {
    return raw.isCloseOnCompletion();
  }

  @Override
  public boolean isClosed() throws SQLException {
    return raw.isClosed();
  }

  @Override
  public boolean isPoolable() throws SQLException {
    return raw.isPoolable();
  }

  @Override
  public boolean isSimpleIdentifier(String p1) throws SQLException {
    return raw.isSimpleIdentifier(p1);
  }

  @Override
  public boolean isWrapperFor(Class<?> p1) throws SQLException {
    return raw.isWrapperFor(p1);
  }

  @Override
  public void setCursorName(String p1) throws SQLException {
    raw.setCursorName(p1);
  }

  @Override
  public void setEscapeProcessing(boolean p1) throws SQLException {
    raw.setEscapeProcessing(p1);
  }

  @Override
  public void setFetchDirection(int p1) throws SQLException {
    raw.setFetchDirection(p1);
  }

  @Override
  public void setFetchSize(int p1) throws SQLException {
    raw.setFetchSize(p1);
  }

  @Override
  public void setLargeMaxRows(long p1) throws SQLException {
    raw.setLargeMaxRows(p1);
  }

  @Override
  public void setMaxFieldSize(int p1) throws SQLException {
    raw.setMaxFieldSize(p1);
  }

  @Override
  public void setMaxRows(int p1) throws SQLException {
    raw.setMaxRows(p1);
  }

  @Override
  public void setPoolable(boolean p1) throws SQLException {
    raw.setPoolable(p1);
  }

  @Override
  public void setQueryTimeout(int p1) throws SQLException {
    raw.setQueryTimeout(p1);
  }

  @Override
  public <T> T unwrap(Class<T> p1) throws SQLException {
    return raw.unwrap(p1);
  }
}
