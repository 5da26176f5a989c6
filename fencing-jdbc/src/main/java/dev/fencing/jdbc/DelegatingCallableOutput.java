package dev.fencing.jdbc;

import java.io.Reader;
import java.math.BigDecimal;
import java.net.URL;
import java.sql.Array;
import java.sql.Blob;
import java.sql.CallableStatement;
import java.sql.Clob;
import java.sql.Date;
import java.sql.NClob;
import java.sql.Ref;
import java.sql.RowId;
import java.sql.SQLException;
import java.sql.SQLType;
import java.sql.SQLXML;
import java.sql.Time;
import java.sql.Timestamp;
import java.util.Calendar;
import java.util.Map;

/**
 * The first half of {@link DelegatingCallableStatement}: the methods {@code CallableStatement} adds
 * in JDBC 4.3 for out parameters ({@code registerOutParameter}, the getters, {@code wasNull}), each
 * handed to the driver's object {@link #raw} unchanged (from reflection over Java 17's {@code
 * java.sql}), so that a call costs a virtual call, not a proxy's {@code Method.invoke}; {@code
 * DelegatingTest} fails if a method is missing or handed to another.
 */
abstract class DelegatingCallableOutput extends DelegatingPreparedStatement<CallableStatement>
    implements CallableStatement {
  DelegatingCallableOutput(CallableStatement raw) {
    super(raw);
  }

  @Override
  public Array getArray(String p1) throws SQLException {
    return raw.getArray(p1);
  }

  @Override
  public Array getArray(int p1) throws SQLException {
    return raw.getArray(p1);
  }

  @Override
  public BigDecimal getBigDecimal(String p1) throws SQLException {
    return raw.getBigDecimal(p1);
  }

  @Override
  public BigDecimal getBigDecimal(int p1) throws SQLException {
    return raw.getBigDecimal(p1);
  }

  @Deprecated
  @Override
  public BigDecimal getBigDecimal(int p1, int p2) throws SQLException {
    return raw.getBigDecimal(p1, p2);
  }

  @Override
  public Blob getBlob(String p1) throws SQLException {
    return raw.getBlob(p1);
  }

  @Override
  public Blob getBlob(int p1) throws SQLException {
    return raw.getBlob(p1);
  }

  @Override
  public boolean getBoolean(String p1) throws SQLException {
    return raw.getBoolean(p1);
  }

  @Override
  public boolean getBoolean(int p1) throws SQLException {
    return raw.getBoolean(p1);
  }

  @Override
  public byte getByte(String p1) throws SQLException {
    return raw.getByte(p1);
  }

  @Override
  public byte getByte(int p1) throws SQLException {
    return raw.getByte(p1);
  }

  @Override
  public byte[] getBytes(String p1) throws SQLException {
    return raw.getBytes(p1);
  }

  @Override
  public byte[] getBytes(int p1) throws SQLException {
    return raw.getBytes(p1);
  }

  @Override
  public Reader getCharacterStream(String p1) throws SQLException {
    return raw.getCharacterStream(p1);
  }

  @Override
  public Reader getCharacterStream(int p1) throws SQLException {
    return raw.getCharacterStream(p1);
  }

  @Override
  public Clob getClob(String p1) throws SQLException {
    return raw.getClob(p1);
  }

  @Override
  public Clob getClob(int p1) throws SQLException {
    return raw.getClob(p1);
  }

  @Override
  public Date getDate(String p1) throws SQLException {
    return raw.getDate(p1);
  }

  @Override
  public Date getDate(String p1, Calendar p2) throws SQLException {
    return raw.getDate(p1, p2);
  }

  @Override
  public Date getDate(int p1) throws SQLException {
    return raw.getDate(p1);
  }

  @Override
  public Date getDate(int p1, Calendar p2) throws SQLException {
    return raw.getDate(p1, p2);
  }

  @Override
  public double getDouble(String p1) throws SQLException {
    return raw.getDouble(p1);
  }

  @Override
  public double getDouble(int p1) throws SQLException {
    return raw.getDouble(p1);
  }

  @Override
  public float getFloat(String p1) throws SQLException {
    return raw.getFloat(p1);
  }

  @Override
  public float getFloat(int p1) throws SQLException {
    return raw.getFloat(p1);
  }

  @Override
  public int getInt(String p1) throws SQLException {
    return raw.getInt(p1);
  }

  @Override
  public int getInt(int p1) throws SQLException {
    return raw.getInt(p1);
  }

  @Override
  public long getLong(String p1) throws SQLException {
    return raw.getLong(p1);
  }

  @Override
  public long getLong(int p1) throws SQLException {
    return raw.getLong(p1);
  }

  @Override
  public Reader getNCharacterStream(String p1) throws SQLException {
    return raw.getNCharacterStream(p1);
  }

  @Override
  public Reader getNCharacterStream(int p1) throws SQLException {
    return raw.getNCharacterStream(p1);
  }

  @Override
  public NClob getNClob(String p1) throws SQLException {
    return raw.getNClob(p1);
  }

  @Override
  public NClob getNClob(int p1) throws SQLException {
    return raw.getNClob(p1);
  }

  @Override
  public String getNString(String p1) throws SQLException {
    return raw.getNString(p1);
  }

  @Override
  public String getNString(int p1) throws SQLException {
    return raw.getNString(p1);
  }

  @Override
  public Object getObject(String p1) throws SQLException {
    return raw.getObject(p1);
  }

  @Override
  public <T> T getObject(String p1, Class<T> p2) throws SQLException {
    return raw.getObject(p1, p2);
  }

  @Override
  public Object getObject(String p1, Map<String, Class<?>> p2) throws SQLException {
    return raw.getObject(p1, p2);
  }

  @Override
  public Object getObject(int p1) throws SQLException {
    return raw.getObject(p1);
  }

  @Override
  public <T> T getObject(int p1, Class<T> p2) throws SQLException {
    return raw.getObject(p1, p2);
  }

  @Override
  public Object getObject(int p1, Map<String, Class<?>> p2) throws SQLException {
    return raw.getObject(p1, p2);
  }

  @Override
  public Ref getRef(String p1) throws SQLException {
    return raw.getRef(p1);
  }

  @Override
  public Ref getRef(int p1) throws SQLException {
    return raw.getRef(p1);
  }

  @Override
  public RowId getRowId(String p1) throws SQLException {
    return raw.getRowId(p1);
  }

  @Override
  public RowId getRowId(int p1) throws SQLException {
    return raw.getRowId(p1);
  }

  @Override
  public SQLXML getSQLXML(String p1) throws SQLException {
    return raw.getSQLXML(p1);
  }

  @Override
  public SQLXML getSQLXML(int p1) throws SQLException {
    return raw.getSQLXML(p1);
  }

  @Override
  public short getShort(String p1) throws SQLException {
    return raw.getShort(p1);
  }

  @Override
  public short getShort(int p1) throws SQLException {
    return raw.getShort(p1);
  }

  @Override
  public String getString(String p1) throws SQLException {
    return raw.getString(p1);
  }

  @Override
  public String getString(int p1) throws SQLException {
    return raw.getString(p1);
  }

  @Override
  public Time getTime(String p1) throws SQLException {
    return raw.getTime(p1);
  }

  @Override
  public Time getTime(String p1, Calendar p2) throws SQLException {
    return raw.getTime(p1, p2);
  }

  @Override
  public Time getTime(int p1) throws SQLException {
    return raw.getTime(p1);
  }

  @Override
  public Time getTime(int p1, Calendar p2) throws SQLException {
    return raw.getTime(p1, p2);
  }

  @Override
  public Timestamp getTimestamp(String p1) throws SQLException {
    return raw.getTimestamp(p1);
  }

  @Override
  public Timestamp getTimestamp(String p1, Calendar p2) throws SQLException {
    return raw.getTimestamp(p1, p2);
  }

  @Override
  public Timestamp getTimestamp(int p1) throws SQLException {
    return raw.getTimestamp(p1);
  }

  @Override
  public Timestamp getTimestamp(int p1, Calendar p2) throws SQLException {
    return raw.getTimestamp(p1, p2);
  }

  @Override
  public URL getURL(String p1) throws SQLException {
    return raw.getURL(p1);
  }

  @Override
  public URL getURL(int p1) throws SQLException {
    return raw.getURL(p1);
  }

  @Override
  public void registerOutParameter(String p1, SQLType p2) throws SQLException {
    raw.registerOutParameter(p1, p2);
  }

  @Override
  public void registerOutParameter(String p1, SQLType p2, String p3) throws SQLException {
    raw.registerOutParameter(p1, p2, p3);
  }

  @Override
  public void registerOutParameter(String p1, SQLType p2, int p3) throws SQLException {
    raw.registerOutParameter(p1, p2, p3);
  }

  @Override
  public void registerOutParameter(String p1, int p2) throws SQLException {
    raw.registerOutParameter(p1, p2);
  }

  @Override
  public void registerOutParameter(String p1, int p2, String p3) throws SQLException {
    raw.registerOutParameter(p1, p2, p3);
  }

  @Override
  public void registerOutParameter(String p1, int p2, int p3) throws SQLException {
    raw.registerOutParameter(p1, p2, p3);
  }

  @Override
  public void registerOutParameter(int p1, SQLType p2) throws SQLException {
    raw.registerOutParameter(p1, p2);
  }

  @Override
  public void registerOutParameter(int p1, SQLType p2, String p3) throws SQLException {
    raw.registerOutParameter(p1, p2, p3);
  }

  @Override
  public void registerOutParameter(int p1, SQLType p2, int p3) throws SQLException {
    raw.registerOutParameter(p1, p2, p3);
  }

  @Override
  public void registerOutParameter(int p1, int p2) throws SQLException {
    raw.registerOutParameter(p1, p2);
  }

  @Override
  public void registerOutParameter(int p1, int p2, String p3) throws SQLException {
    raw.registerOutParameter(p1, p2, p3);
  }

  @Override
  public void registerOutParameter(int p1, int p2, int p3) throws SQLException {
    raw.registerOutParameter(p1, p2, p3);
  }

  @Override
  public boolean wasNull() throws SQLException {
    return raw.wasNull();
  }
}
