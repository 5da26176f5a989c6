package dev.fencing.jdbc;

import java.io.InputStream;
import java.io.Reader;
import java.math.BigDecimal;
import java.net.URL;
import java.sql.Blob;
import java.sql.CallableStatement;
import java.sql.Clob;
import java.sql.Date;
import java.sql.NClob;
import java.sql.RowId;
import java.sql.SQLException;
import java.sql.SQLType;
import java.sql.SQLXML;
import java.sql.Time;
import java.sql.Timestamp;
import java.util.Calendar;

/**
 * A {@link CallableStatement} that hands every method, the default ones too, to the driver's object
 * {@link #raw}, unchanged: those of {@code PreparedStatement} as {@link
 * DelegatingPreparedStatement}, the out parameters' as {@link DelegatingCallableOutput}, and here
 * the setters by parameter name that {@code CallableStatement} adds in JDBC 4.3 (from reflection
 * over Java 17's {@code java.sql}), so that a call costs a virtual call, not a proxy's {@code
 * Method.invoke}; {@code DelegatingTest} fails if a method is missing or handed to another.
 */
abstract class DelegatingCallableStatement extends DelegatingCallableOutput {
  DelegatingCallableStatement(CallableStatement raw) {
    super(raw);
  }

  @Override
  public void setAsciiStream(String p1, InputStream p2) throws SQLException {
    raw.setAsciiStream(p1, p2);
  }

  @Override
  public void setAsciiStream(String p1, InputStream p2, int p3) throws SQLException {
    raw.setAsciiStream(p1, p2, p3);
  }

  @Override
  public void setAsciiStream(String p1, InputStream p2, long p3) throws SQLException {
    raw.setAsciiStream(p1, p2, p3);
  }

  @Override
  public void setBigDecimal(String p1, BigDecimal p2) throws SQLException {
    raw.setBigDecimal(p1, p2);
  }

  @Override
  public void setBinaryStream(String p1, InputStream p2) throws SQLException {
    raw.setBinaryStream(p1, p2);
  }

  @Override
  public void setBinaryStream(String p1, InputStream p2, int p3) throws SQLException {
    raw.setBinaryStream(p1, p2, p3);
  }

  @Override
  public void setBinaryStream(String p1, InputStream p2, long p3) throws SQLException {
    raw.setBinaryStream(p1, p2, p3);
  }

  @Override
  public void setBlob(String p1, Blob p2) throws SQLException {
    raw.setBlob(p1, p2);
  }

  @Override
  public void setBlob(String p1, InputStream p2) throws SQLException {
    raw.setBlob(p1, p2);
  }

  @Override
  public void setBlob(String p1, InputStream p2, long p3) throws SQLException {
    raw.setBlob(p1, p2, p3);
  }

  @Override
  public void setBoolean(String p1, boolean p2) throws SQLException {
    raw.setBoolean(p1, p2);
  }

  @Override
  public void setByte(String p1, byte p2) throws SQLException {
    raw.setByte(p1, p2);
  }

  @Override
  public void setBytes(String p1, byte[] p2) throws SQLException {
    raw.setBytes(p1, p2);
  }

  @Override
  public void setCharacterStream(String p1, Reader p2) throws SQLException {
    raw.setCharacterStream(p1, p2);
  }

  @Override
  public void setCharacterStream(String p1, Reader p2, int p3) throws SQLException {
    raw.setCharacterStream(p1, p2, p3);
  }

  @Override
  public void setCharacterStream(String p1, Reader p2, long p3) throws SQLException {
    raw.setCharacterStream(p1, p2, p3);
  }

  @Override
  public void setClob(String p1, Clob p2) throws SQLException {
    raw.setClob(p1, p2);
  }

  @Override
  public void setClob(String p1, Reader p2) throws SQLException {
    raw.setClob(p1, p2);
  }

  @Override
  public void setClob(String p1, Reader p2, long p3) throws SQLException {
    raw.setClob(p1, p2, p3);
  }

  @Override
  public void setDate(String p1, Date p2) throws SQLException {
    raw.setDate(p1, p2);
  }

  @Override
  public void setDate(String p1, Date p2, Calendar p3) throws SQLException {
    raw.setDate(p1, p2, p3);
  }

  @Override
  public void setDouble(String p1, double p2) throws SQLException {
    raw.setDouble(p1, p2);
  }

  @Override
  public void setFloat(String p1, float p2) throws SQLException {
    raw.setFloat(p1, p2);
  }

  @Override
  public void setInt(String p1, int p2) throws SQLException {
    raw.setInt(p1, p2);
  }

  @Override
  public void setLong(String p1, long p2) throws SQLException {
    raw.setLong(p1, p2);
  }

  @Override
  public void setNCharacterStream(String p1, Reader p2) throws SQLException {
    raw.setNCharacterStream(p1, p2);
  }

  @Override
  public void setNCharacterStream(String p1, Reader p2, long p3) throws SQLException {
    raw.setNCharacterStream(p1, p2, p3);
  }

  @Override
  public void setNClob(String p1, NClob p2) throws SQLException {
    raw.setNClob(p1, p2);
  }

  @Override
  public void setNClob(String p1, Reader p2) throws SQLException {
    raw.setNClob(p1, p2);
  }

  @Override
  public void setNClob(String p1, Reader p2, long p3) throws SQLException {
    raw.setNClob(p1, p2, p3);
  }

  @Override
  public void setNString(String p1, String p2) throws SQLException {
    raw.setNString(p1, p2);
  }

  @Override
  public void setNull(String p1, int p2) throws SQLException {
    raw.setNull(p1, p2);
  }

  @Override
  public void setNull(String p1, int p2, String p3) throws SQLException {
    raw.setNull(p1, p2, p3);
  }

  @Override
  public void setObject(String p1, Object p2) throws SQLException {
    raw.setObject(p1, p2);
  }

  @Override
  public void setObject(String p1, Object p2, SQLType p3) throws SQLException {
    raw.setObject(p1, p2, p3);
  }

  @Override
  public void setObject(String p1, Object p2, SQLType p3, int p4) throws SQLException {
    raw.setObject(p1, p2, p3, p4);
  }

  @Override
  public void setObject(String p1, Object p2, int p3) throws SQLException {
    raw.setObject(p1, p2, p3);
  }

  @Override
  public void setObject(String p1, Object p2, int p3, int p4) throws SQLException {
    raw.setObject(p1, p2, p3, p4);
  }

  @Override
  public void setRowId(String p1, RowId p2) throws SQLException {
    raw.setRowId(p1, p2);
  }

  @Override
  public void setSQLXML(String p1, SQLXML p2) throws SQLException {
    raw.setSQLXML(p1, p2);
  }

  @Override
  public void setShort(String p1, short p2) throws SQLException {
    raw.setShort(p1, p2);
  }

  @Override
  public void setString(String p1, String p2) throws SQLException {
    raw.setString(p1, p2);
  }

  @Override
  public void setTime(String p1, Time p2) throws SQLException {
    raw.setTime(p1, p2);
  }

  @Override
  public void setTime(String p1, Time p2, Calendar p3) throws SQLException {
    raw.setTime(p1, p2, p3);
  }

  @Override
  public void setTimestamp(String p1, Timestamp p2) throws SQLException {
    raw.setTimestamp(p1, p2);
  }

  @Override
  public void setTimestamp(String p1, Timestamp p2, Calendar p3) throws SQLException {
    raw.setTimestamp(p1, p2, p3);
  }

  @Override
  public void setURL(String p1, URL p2) throws SQLException {
    raw.setURL(p1, p2);
  }
}
