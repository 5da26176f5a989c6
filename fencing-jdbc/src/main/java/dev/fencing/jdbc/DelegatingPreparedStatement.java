package dev.fencing.jdbc;

import java.io.InputStream;
import java.io.Reader;
import java.math.BigDecimal;
import java.net.URL;
import java.sql.Array;
import java.sql.Blob;
import java.sql.Clob;
import java.sql.Date;
import java.sql.NClob;
import java.sql.ParameterMetaData;
import java.sql.PreparedStatement;
import java.sql.Ref;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.RowId;
import java.sql.SQLException;
import java.sql.SQLType;
import java.sql.SQLXML;
import java.sql.Time;
import java.sql.Timestamp;
import java.util.Calendar;

/**
 * A {@link PreparedStatement} that hands every method, the default ones too, to the driver's object
 * {@link #raw}, unchanged: {@code Statement}'s methods as {@link DelegatingStatement}, and here
 * every method {@code PreparedStatement} adds in JDBC 4.3 (from reflection over Java 17's {@code
 * java.sql}), so that a call costs a virtual call, not a proxy's {@code Method.invoke}; {@code
 * DelegatingTest} fails if a method is missing or handed to another.
 */
abstract class DelegatingPreparedStatement<S extends PreparedStatement>
    extends DelegatingStatement<S> implements PreparedStatement {
  DelegatingPreparedStatement(S raw) {
    super(raw);
  }

  @Override
  public void addBatch() throws SQLException {
    raw.addBatch();
  }

  @Override
  public void clearParameters() throws SQLException {
    raw.clearParameters();
  }

  @Override
  public boolean execute() throws SQLException {
    return raw.execute();
  }

  @Override
  public long executeLargeUpdate() throws SQLException {
    return raw.executeLargeUpdate();
  }

  @Override
  public ResultSet executeQuery() throws SQLException {
    return raw.executeQuery();
  }

  @Override
  public int executeUpdate() throws SQLException {
    return raw.executeUpdate();
  }

  @Override
  public ResultSetMetaData getMetaData() throws SQLException {
    return raw.getMetaData();
  }

  @Override
  public ParameterMetaData getParameterMetaData() throws SQLException {
    return raw.getParameterMetaData();
  }

  @Override
  public void setArray(int p1, Array p2) throws SQLException {
    raw.setArray(p1, p2);
  }

  @Override
  public void setAsciiStream(int p1, InputStream p2) throws SQLException {
    raw.setAsciiStream(p1, p2);
  }

  @Override
  public void setAsciiStream(int p1, InputStream p2, int p3) throws SQLException {
    raw.setAsciiStream(p1, p2, p3);
  }

  @Override
  public void setAsciiStream(int p1, InputStream p2, long p3) throws SQLException {
    raw.setAsciiStream(p1, p2, p3);
  }

  @Override
  public void setBigDecimal(int p1, BigDecimal p2) throws SQLException {
    raw.setBigDecimal(p1, p2);
  }

  @Override
  public void setBinaryStream(int p1, InputStream p2) throws SQLException {
    raw.setBinaryStream(p1, p2);
  }

  @Override
  public void setBinaryStream(int p1, InputStream p2, int p3) throws SQLException {
    raw.setBinaryStream(p1, p2, p3);
  }

  @Override
  public void setBinaryStream(int p1, InputStream p2, long p3) throws SQLException {
    raw.setBinaryStream(p1, p2, p3);
  }

  @Override
  public void setBlob(int p1, Blob p2) throws SQLException {
    raw.setBlob(p1, p2);
  }

  @Override
  public void setBlob(int p1, InputStream p2) throws SQLException {
    raw.setBlob(p1, p2);
  }

  @Override
  public void setBlob(int p1, InputStream p2, long p3) throws SQLException {
    raw.setBlob(p1, p2, p3);
  }

  @Override
  public void setBoolean(int p1, boolean p2) throws SQLException {
    raw.setBoolean(p1, p2);
  }

  @Override
  public void setByte(int p1, byte p2) throws SQLException {
    raw.setByte(p1, p2);
  }

  @Override
  public void setBytes(int p1, byte[] p2) throws SQLException {
    raw.setBytes(p1, p2);
  }

  @Override
  public void setCharacterStream(int p1, Reader p2) throws SQLException {
    raw.setCharacterStream(p1, p2);
  }

  @Override
  public void setCharacterStream(int p1, Reader p2, int p3) throws SQLException {
    raw.setCharacterStream(p1, p2, p3);
  }

  @Override
  public void setCharacterStream(int p1, Reader p2, long p3) throws SQLException {
    raw.setCharacterStream(p1, p2, p3);
  }

  @Override
  public void setClob(int p1, Clob p2) throws SQLException {
    raw.setClob(p1, p2);
  }

  @Override
  public void setClob(int p1, Reader p2) throws SQLException {
    raw.setClob(p1, p2);
  }

  @Override
  public void setClob(int p1, Reader p2, long p3) throws SQLException {
    raw.setClob(p1, p2, p3);
  }

  @Override
  public void setDate(int p1, Date p2) throws SQLException {
    raw.setDate(p1, p2);
  }

  @Override
  public void setDate(int p1, Date p2, Calendar p3) throws SQLException {
    raw.setDate(p1, p2, p3);
  }

  @Override
  public void setDouble(int p1, double p2) throws SQLException {
    raw.setDouble(p1, p2);
  }

  @Override
  public void setFloat(int p1, float p2) throws SQLException {
    raw.setFloat(p1, p2);
  }

  @Override
  public void setInt(int p1, int p2) throws SQLException {
    raw.setInt(p1, p2);
  }

  @Override
  public void setLong(int p1, long p2) throws SQLException {
    raw.setLong(p1, p2);
  }

  @Override
  public void setNCharacterStream(int p1, Reader p2) throws SQLException {
    raw.setNCharacterStream(p1, p2);
  }

  @Override
  public void setNCharacterStream(int p1, Reader p2, long p3) throws SQLException {
    raw.setNCharacterStream(p1, p2, p3);
  }

  @Override
  public void setNClob(int p1, NClob p2) throws SQLException {
    raw.setNClob(p1, p2);
  }

  @Override
  public void setNClob(int p1, Reader p2) throws SQLException {
    raw.setNClob(p1, p2);
  }

  @Override
  public void setNClob(int p1, Reader p2, long p3) throws SQLException {
    raw.setNClob(p1, p2, p3);
  }

  @Override
  public void setNString(int p1, String p2) throws SQLException {
    raw.setNString(p1, p2);
  }

  @Override
  public void setNull(int p1, int p2) throws SQLException {
    raw.setNull(p1, p2);
  }

  @Override
  public void setNull(int p1, int p2, String p3) throws SQLException {
    raw.setNull(p1, p2, p3);
  }

  @Override
  public void setObject(int p1, Object p2) throws SQLException {
    raw.setObject(p1, p2);
  }

  @Override
  public void setObject(int p1, Object p2, SQLType p3) throws SQLException {
    raw.setObject(p1, p2, p3);
  }

  @Override
  public void setObject(int p1, Object p2, SQLType p3, int p4) throws SQLException {
    raw.setObject(p1, p2, p3, p4);
  }

  @Override
  public void setObject(int p1, Object p2, int p3) throws SQLException {
    raw.setObject(p1, p2, p3);
  }

  @Override
  public void setObject(int p1, Object p2, int p3, int p4) throws SQLException {
    raw.setObject(p1, p2, p3, p4);
  }

  @Override
  public void setRef(int p1, Ref p2) throws SQLException {
    raw.setRef(p1, p2);
  }

  @Override
  public void setRowId(int p1, RowId p2) throws SQLException {
    raw.setRowId(p1, p2);
  }

  @Override
  public void setSQLXML(int p1, SQLXML p2) throws SQLException {
    raw.setSQLXML(p1, p2);
  }

  @Override
  public void setShort(int p1, short p2) throws SQLException {
    raw.setShort(p1, p2);
  }

  @Override
  public void setString(int p1, String p2) throws SQLException {
    raw.setString(p1, p2);
  }

  @Override
  public void setTime(int p1, Time p2) throws SQLException {
    raw.setTime(p1, p2);
  }

  @Override
  public void setTime(int p1, Time p2, Calendar p3) throws SQLException {
    raw.setTime(p1, p2, p3);
  }

  @Override
  public void setTimestamp(int p1, Timestamp p2) throws SQLException {
    raw.setTimestamp(p1, p2);
  }

  @Override
  public void setTimestamp(int p1, Timestamp p2, Calendar p3) throws SQLException {
    raw.setTimestamp(p1, p2, p3);
  }

  @Override
  public void setURL(int p1, URL p2) throws SQLException {
    raw.setURL(p1, p2);
  }

  @Deprecated
  @Override
  public void setUnicodeStream(int p1, InputStream p2, int p3) throws SQLException {
    raw.setUnicodeStream(p1, p2, p3);
  }
}
