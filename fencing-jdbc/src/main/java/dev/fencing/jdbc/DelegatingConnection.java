package dev.fencing.jdbc;

import java.sql.Array;
import java.sql.Blob;
import java.sql.CallableStatement;
import java.sql.Clob;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.NClob;
import java.sql.PreparedStatement;
import java.sql.SQLClientInfoException;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.SQLXML;
import java.sql.Savepoint;
import java.sql.ShardingKey;
import java.sql.Statement;
import java.sql.Struct;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Executor;

/**
 * A {@link Connection} that hands every method, the default ones too, to the driver's object {@link
 * #raw}, unchanged: what a subclass does not override is the driver's. Written out in full (every
 * method of JDBC 4.3's {@code Connection}, from reflection over Java 17's {@code java.sql}) so that
 * a call costs a virtual call, not a proxy's {@code Method.invoke}; {@code DelegatingTest} fails if
 * a method is missing or handed to another.
 */
abstract class DelegatingConnection implements Connection {
  /** The driver's object, which every method not overridden is handed to. */
  final Connection raw;

  DelegatingConnection(Connection raw) {
    this.raw = raw;
  }

  @Override
  public void abort(Executor p1) throws SQLException {
    raw.abort(p1);
  }

  @Override
  public void beginRequest() throws SQLException {
    raw.beginRequest();
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
  public void commit() throws SQLException {
    raw.commit();
  }

  @Override
  public Array createArrayOf(String p1, Object[] p2) throws SQLException {
    return raw.createArrayOf(p1, p2);
  }

  @Override
  public Blob createBlob() throws SQLException {
    return raw.createBlob();
  }

  @Override
  public Clob createClob() throws SQLException {
    return raw.createClob();
  }

  @Override
  public NClob createNClob() throws SQLException {
    return raw.createNClob();
  }

  @Override
  public SQLXML createSQLXML() throws SQLException {
    return raw.createSQLXML();
  }

  @Override
  public Statement createStatement() throws SQLException {
    return raw.createStatement();
  }

  @Override
  public Statement createStatement(int p1, int p2, int p3) throws SQLException {
    return raw.createStatement(p1, p2, p3);
  }

  @Override
  public Statement createStatement(int p1, int p2) throws SQLException {
    return raw.createStatement(p1, p2);
  }

  @Override
  public Struct createStruct(String p1, Object[] p2) throws SQLException {
    return raw.createStruct(p1, p2);
  }

  @Override
  public void endRequest() throws SQLException {
    raw.endRequest();
  }

  @Override
  public boolean getAutoCommit() throws SQLException {
    return raw.getAutoCommit();
  }

  @Override
  public String getCatalog() throws SQLException {
    return raw.getCatalog();
  }

  @Override
  public Properties getClientInfo() throws SQLException {
    return raw.getClientInfo();
  }

  @Override
  public String getClientInfo(String p1) throws SQLException {
    return raw.getClientInfo(p1);
  }

  @Override
  public int getHoldability() throws SQLException {
    return raw.getHoldability();
  }

  @Override
  public DatabaseMetaData getMetaData() throws SQLException {
    return raw.getMetaData();
  }

  @Override
  public int getNetworkTimeout() throws SQLException {
    return raw.getNetworkTimeout();
  }

  @Override
  public String getSchema() throws SQLException {
    return raw.getSchema();
  }

  @Override
  public int getTransactionIsolation() throws SQLException {
    return raw.getTransactionIsolation();
  }

  @Override
  public Map<String, Class<?>> getTypeMap() throws SQLException {
    return raw.getTypeMap();
  }

  @Override
  public SQLWarning getWarnings() throws SQLException {
    return raw.getWarnings();
  }

  @Override
  public boolean isClosed() throws SQLException {
    return raw.isClosed();
  }

  @Override
  public boolean isReadOnly() throws SQLException {
    return raw.isReadOnly();
  }

  @Override
  public boolean isValid(int p1) throws SQLException {
    return raw.isValid(p1);
  }

  @Override
  public boolean isWrapperFor(Class<?> p1) throws SQLException {
    return raw.isWrapperFor(p1);
  }

  @Override
  public String nativeSQL(String p1) throws SQLException {
    return raw.nativeSQL(p1);
  }

  @Override
  public CallableStatement prepareCall(String p1, int p2, int p3, int p4) throws SQLException {
    return raw.prepareCall(p1, p2, p3, p4);
  }

  @Override
  public CallableStatement prepareCall(String p1, int p2, int p3) throws SQLException {
    return raw.prepareCall(p1, p2, p3);
  }

  @Override
  public CallableStatement prepareCall(String p1) throws SQLException {
    return raw.prepareCall(p1);
  }

  @Override
  public PreparedStatement prepareStatement(String p1, int[] p2) throws SQLException {
    return raw.prepareStatement(p1, p2);
  }

  @Override
  public PreparedStatement prepareStatement(String p1, String[] p2) throws SQLException {
    return raw.prepareStatement(p1, p2);
  }

  @Override
  public PreparedStatement prepareStatement(String p1, int p2, int p3, int p4) throws SQLException {
    return raw.prepareStatement(p1, p2, p3, p4);
  }

  @Override
  public PreparedStatement prepareStatement(String p1, int p2, int p3) throws SQLException {
    return raw.prepareStatement(p1, p2, p3);
  }

  @Override
  public PreparedStatement prepareStatement(String p1, int p2) throws SQLException {
    return raw.prepareStatement(p1, p2);
  }

  @Override
  public PreparedStatement prepareStatement(String p1) throws SQLException {
    return raw.prepareStatement(p1);
  }

  @Override
  public void releaseSavepoint(Savepoint p1) throws SQLException {
    raw.releaseSavepoint(p1);
  }

  @Override
  public void rollback() throws SQLException {
    raw.rollback();
  }

  @Override
  public void rollback(Savepoint p1) throws SQLException {
    raw.rollback(p1);
  }

  @Override
  public void setAutoCommit(boolean p1) throws SQLException {
    raw.setAutoCommit(p1);
  }

  @Override
  public void setCatalog(String p1) throws SQLException {
    raw.setCatalog(p1);
  }

  @Override
  public void setClientInfo(String p1, String p2) throws SQLClientInfoException {
    raw.setClientInfo(p1, p2);
  }

  @Override
  public void setClientInfo(Properties p1) throws SQLClientInfoException {
    raw.setClientInfo(p1);
  }

  @Override
  public void setHoldability(int p1) throws SQLException {
    raw.setHoldability(p1);
  }

  @Override
  public void setNetworkTimeout(Executor p1, int p2) throws SQLException {
    raw.setNetworkTimeout(p1, p2);
  }

  @Override
  public void setReadOnly(boolean p1) throws SQLException {
    raw.setReadOnly(p1);
  }

  @Override
  public Savepoint setSavepoint() throws SQLException {
    return raw.setSavepoint();
  }

  @Override
  public Savepoint setSavepoint(String p1) throws SQLException {
    return raw.setSavepoint(p1);
  }

  @Override
  public void setSchema(String p1) throws SQLException {
    raw.setSchema(p1);
  }

  @Override
  public boolean setShardingKeyIfValid(ShardingKey p1, int p2) throws SQLException {
    return raw.setShardingKeyIfValid(p1, p2);
  }

  @Override
  public boolean setShardingKeyIfValid(ShardingKey p1, ShardingKey p2, int p3) throws SQLException {
    return raw.setShardingKeyIfValid(p1, p2, p3);
  }

  @Override
  public void setShardingKey(ShardingKey p1, ShardingKey p2) throws SQLException {
    raw.setShardingKey(p1, p2);
  }

  @Override
  public void setShardingKey(ShardingKey p1) throws SQLException {
    raw.setShardingKey(p1);
  }

  @Override
  public void setTransactionIsolation(int p1) throws SQLException {
    raw.setTransactionIsolation(p1);
  }

  @Override
  public void setTypeMap(Map<String, Class<?>> p1) throws SQLException {
    raw.setTypeMap(p1);
  }

  @Override
  public <T> T unwrap(Class<T> p1) throws SQLException {
    return raw.unwrap(p1);
  }
}
