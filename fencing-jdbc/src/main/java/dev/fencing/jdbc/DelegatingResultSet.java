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
import java.sql.Ref;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.RowId;
import java.sql.SQLException;
import java.sql.SQLType;
import java.sql.SQLWarning;
import java.sql.SQLXML;
import java.sql.Statement;
import java.sql.Time;
import java.sql.Timestamp;
import java.util.Calendar;
import java.util.Map;

/**
 * A {@link ResultSet} that hands every method, the default ones too, to the driver's object {@link
 * #raw}, unchanged: what a subclass does not override is the driver's. Written out in full (every
 * method of JDBC 4.3's {@code ResultSet}, from reflection over Java 17's {@code java.sql}) so that
 * a call costs a virtual call, not a proxy's {@code Method.invoke}; {@code DelegatingTest} fails if
 * a method is missing or handed to another.
 */
abstract class DelegatingResultSet implements ResultSet {
  /** The driver's object, which every method not overridden is handed to. */
  final ResultSet raw;

  DelegatingResultSet(ResultSet raw) {
    this.raw = raw;
  }

  @Override
  public boolean absolute(int p1) throws SQLException {
    return raw.absolute(p1);
  }

  @Override
  public void afterLast() throws SQLException {
    raw.afterLast();
  }

  @Override
  public void beforeFirst() throws SQLException {
    raw.beforeFirst();
  }

  @Override
  public void cancelRowUpdates() throws SQLException {
    raw.cancelRowUpdates();
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
  public void deleteRow() throws SQLException {
    raw.deleteRow();
  }

  @Override
  public int findColumn(String p1) throws SQLException {
    return raw.findColumn(p1);
  }

  @Override
  public boolean first() throws SQLException {
    return raw.first();
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
  public InputStream getAsciiStream(String p1) throws SQLException {
    return raw.getAsciiStream(p1);
  }

  @Override
  public InputStream getAsciiStream(int p1) throws SQLException {
    return raw.getAsciiStream(p1);
  }

  @Deprecated
  @Override
  public BigDecimal getBigDecimal(String p1, int p2) throws SQLException {
    return raw.getBigDecimal(p1, p2);
  }

  @Override
  public BigDecimal getBigDecimal(String p1) throws SQLException {
    return raw.getBigDecimal(p1);
  }

  @Deprecated
  @Override
  public BigDecimal getBigDecimal(int p1, int p2) throws SQLException {
    return raw.getBigDecimal(p1, p2);
  }

  @Override
  public BigDecimal getBigDecimal(int p1) throws SQLException {
    return raw.getBigDecimal(p1);
  }

  @Override
  public InputStream getBinaryStream(String p1) throws SQLException {
    return raw.getBinaryStream(p1);
  }

  @Override
  public InputStream getBinaryStream(int p1) throws SQLException {
    return raw.getBinaryStream(p1);
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
  public int getConcurrency() throws SQLException {
    return raw.getConcurrency();
  }

  @Override
  public String getCursorName() throws SQLException {
    return raw.getCursorName();
  }

  @Override
  public Date getDate(String p1, Calendar p2) throws SQLException {
    return raw.getDate(p1, p2);
  }

  @Override
  public Date getDate(String p1) throws SQLException {
    return raw.getDate(p1);
  }

  @Override
  public Date getDate(int p1, Calendar p2) throws SQLException {
    return raw.getDate(p1, p2);
  }

  @Override
  public Date getDate(int p1) throws SQLException {
    return raw.getDate(p1);
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
  public int getFetchDirection() throws SQLException {
    return raw.getFetchDirection();
  }

  @Override
  public int getFetchSize() throws SQLException {
    return raw.getFetchSize();
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
  public int getHoldability() throws SQLException {
    return raw.getHoldability();
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
  public ResultSetMetaData getMetaData() throws SQLException {
    return raw.getMetaData();
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
  public <T> T getObject(String p1, Class<T> p2) throws SQLException {
    return raw.getObject(p1, p2);
  }

  @Override
  public Object getObject(String p1, Map<String, Class<?>> p2) throws SQLException {
    return raw.getObject(p1, p2);
  }

  @Override
  public Object getObject(String p1) throws SQLException {
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
  public Object getObject(int p1) throws SQLException {
    return raw.getObject(p1);
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
  public int getRow() throws SQLException {
    return raw.getRow();
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
  public Statement getStatement() throws SQLException {
    return raw.getStatement();
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
  public Time getTime(String p1, Calendar p2) throws SQLException {
    return raw.getTime(p1, p2);
  }

  @Override
  public Time getTime(String p1) throws SQLException {
    return raw.getTime(p1);
  }

  @Override
  public Time getTime(int p1, Calendar p2) throws SQLException {
    return raw.getTime(p1, p2);
  }

  @Override
  public Time getTime(int p1) throws SQLException {
    return raw.getTime(p1);
  }

  @Override
  public Timestamp getTimestamp(String p1, Calendar p2) throws SQLException {
    return raw.getTimestamp(p1, p2);
  }

  @Override
  public Timestamp getTimestamp(String p1) throws SQLException {
    return raw.getTimestamp(p1);
  }

  @Override
  public Timestamp getTimestamp(int p1, Calendar p2) throws SQLException {
    return raw.getTimestamp(p1, p2);
  }

  @Override
  public Timestamp getTimestamp(int p1) throws SQLException {
    return raw.getTimestamp(p1);
  }

  @Override
  public int getType() throws SQLException {
    return raw.getType();
  }

  @Override
  public URL getURL(String p1) throws SQLException {
    return raw.getURL(p1);
  }

  @Override
  public URL getURL(int p1) throws SQLException {
    return raw.getURL(p1);
  }

  @Deprecated
  @Override
  public InputStream getUnicodeStream(String p1) throws SQLException {
    return raw.getUnicodeStream(p1);
  }

  @Deprecated
  @Override
  public InputStream getUnicodeStream(int p1) throws SQLException {
    return raw.getUnicodeStream(p1);
  }

  @Override
  public SQLWarning getWarnings() throws SQLException {
    return raw.getWarnings();
  }

  @Override
  public void insertRow() throws SQLException {
    raw.insertRow();
  }

  @Override
  public boolean isAfterLast() throws SQLException {
    return raw.isAfterLast();
  }

  @Override
  public boolean isBeforeFirst() throws SQLException {
    return raw.isBeforeFirst();
  }

  @Override
  public boolean isClosed() throws SQLException {
    return raw.isClosed();
  }

  @Override
  public boolean isFirst() throws SQLException {
    return raw.isFirst();
  }

  @Override
  public boolean isLast() throws SQLException {
    return raw.isLast();
  }

  @Override
  public boolean isWrapperFor(Class<?> p1) throws SQLException {
    return raw.isWrapperFor(p1);
  }

  @Override
  public boolean last() throws SQLException {
    return raw.last();
  }

  @Override
  public void moveToCurrentRow() throws SQLException {
    raw.moveToCurrentRow();
  }

  @Override
  public void moveToInsertRow() throws SQLException {
    raw.moveToInsertRow();
  }

  @Override
  public boolean next() throws SQLException {
    return raw.next();
  }

  @Override
  public boolean previous() throws SQLException {
    return raw.previous();
  }

  @Override
  public void refreshRow() throws SQLException {
    raw.refreshRow();
  }

  @Override
  public boolean relative(int p1) throws SQLException {
    return raw.relative(p1);
  }

  @Override
  public boolean rowDeleted() throws SQLException {
    return raw.rowDeleted();
  }

  @Override
  public boolean rowInserted() throws SQLException {
    return raw.rowInserted();
  }

  @Override
  public boolean rowUpdated() throws SQLException {
    return raw.rowUpdated();
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
  public <T> T unwrap(Class<T> p1) throws SQLException {
    return raw.unwrap(p1);
  }

  @Override
  public void updateArray(String p1, Array p2) throws SQLException {
    raw.updateArray(p1, p2);
  }

  @Override
  public void updateArray(int p1, Array p2) throws SQLException {
    raw.updateArray(p1, p2);
  }

  @Override
  public void updateAsciiStream(String p1, InputStream p2, int p3) throws SQLException {
    raw.updateAsciiStream(p1, p2, p3);
  }

  @Override
  public void updateAsciiStream(String p1, InputStream p2, long p3) throws SQLException {
    raw.updateAsciiStream(p1, p2, p3);
  }

  @Override
  public void updateAsciiStream(String p1, InputStream p2) throws SQLException {
    raw.updateAsciiStream(p1, p2);
  }

  @Override
  public void updateAsciiStream(int p1, InputStream p2, int p3) throws SQLException {
    raw.updateAsciiStream(p1, p2, p3);
  }

  @Override
  public void updateAsciiStream(int p1, InputStream p2, long p3) throws SQLException {
    raw.updateAsciiStream(p1, p2, p3);
  }

  @Override
  public void updateAsciiStream(int p1, InputStream p2) throws SQLException {
    raw.updateAsciiStream(p1, p2);
  }

  @Override
  public void updateBigDecimal(String p1, BigDecimal p2) throws SQLException {
    raw.updateBigDecimal(p1, p2);
  }

  @Override
  public void updateBigDecimal(int p1, BigDecimal p2) throws SQLException {
    raw.updateBigDecimal(p1, p2);
  }

  @Override
  public void updateBinaryStream(String p1, InputStream p2, int p3) throws SQLException {
    raw.updateBinaryStream(p1, p2, p3);
  }

  @Override
  public void updateBinaryStream(String p1, InputStream p2, long p3) throws SQLException {
    raw.updateBinaryStream(p1, p2, p3);
  }

  @Override
  public void updateBinaryStream(String p1, InputStream p2) throws SQLException {
    raw.updateBinaryStream(p1, p2);
  }

  @Override
  public void updateBinaryStream(int p1, InputStream p2, int p3) throws SQLException {
    raw.updateBinaryStream(p1, p2, p3);
  }

  @Override
  public void updateBinaryStream(int p1, InputStream p2, long p3) throws SQLException {
    raw.updateBinaryStream(p1, p2, p3);
  }

  @Override
  public void updateBinaryStream(int p1, InputStream p2) throws SQLException {
    raw.updateBinaryStream(p1, p2);
  }

  @Override
  public void updateBlob(String p1, InputStream p2, long p3) throws SQLException {
    raw.updateBlob(p1, p2, p3);
  }

  @Override
  public void updateBlob(String p1, InputStream p2) throws SQLException {
    raw.updateBlob(p1, p2);
  }

  @Override
  public void updateBlob(String p1, Blob p2) throws SQLException {
    raw.updateBlob(p1, p2);
  }

  @Override
  public void updateBlob(int p1, InputStream p2, long p3) throws SQLException {
    raw.updateBlob(p1, p2, p3);
  }

  @Override
  public void updateBlob(int p1, InputStream p2) throws SQLException {
    raw.updateBlob(p1, p2);
  }

  @Override
  public void updateBlob(int p1, Blob p2) throws SQLException {
    raw.updateBlob(p1, p2);
  }

  @Override
  public void updateBoolean(String p1, boolean p2) throws SQLException {
    raw.updateBoolean(p1, p2);
  }

  @Override
  public void updateBoolean(int p1, boolean p2) throws SQLException {
    raw.updateBoolean(p1, p2);
  }

  @Override
  public void updateByte(String p1, byte p2) throws SQLException {
    raw.updateByte(p1, p2);
  }

  @Override
  public void updateByte(int p1, byte p2) throws SQLException {
    raw.updateByte(p1, p2);
  }

  @Override
  public void updateBytes(String p1, byte[] p2) throws SQLException {
    raw.updateBytes(p1, p2);
  }

  @Override
  public void updateBytes(int p1, byte[] p2) throws SQLException {
    raw.updateBytes(p1, p2);
  }

  @Override
  public void updateCharacterStream(String p1, Reader p2, int p3) throws SQLException {
    raw.updateCharacterStream(p1, p2, p3);
  }

  @Override
  public void updateCharacterStream(String p1, Reader p2, long p3) throws SQLException {
    raw.updateCharacterStream(p1, p2, p3);
  }

  @Override
  public void updateCharacterStream(String p1, Reader p2) throws SQLException {
    raw.updateCharacterStream(p1, p2);
  }

  @Override
  public void updateCharacterStream(int p1, Reader p2, int p3) throws SQLException {
    raw.updateCharacterStream(p1, p2, p3);
  }

  @Override
  public void updateCharacterStream(int p1, Reader p2, long p3) throws SQLException {
    raw.updateCharacterStream(p1, p2, p3);
  }

  @Override
  public void updateCharacterStream(int p1, Reader p2) throws SQLException {
    raw.updateCharacterStream(p1, p2);
  }

  @Override
  public void updateClob(String p1, Reader p2, long p3) throws SQLException {
    raw.updateClob(p1, p2, p3);
  }

  @Override
  public void updateClob(String p1, Reader p2) throws SQLException {
    raw.updateClob(p1, p2);
  }

  @Override
  public void updateClob(String p1, Clob p2) throws SQLException {
    raw.updateClob(p1, p2);
  }

  @Override
  public void updateClob(int p1, Reader p2, long p3) throws SQLException {
    raw.updateClob(p1, p2, p3);
  }

  @Override
  public void updateClob(int p1, Reader p2) throws SQLException {
    raw.updateClob(p1, p2);
  }

  @Override
  public void updateClob(int p1, Clob p2) throws SQLException {
    raw.updateClob(p1, p2);
  }

  @Override
  public void updateDate(String p1, Date p2) throws SQLException {
    raw.updateDate(p1, p2);
  }

  @Override
  public void updateDate(int p1, Date p2) throws SQLException {
    raw.updateDate(p1, p2);
  }

  @Override
  public void updateDouble(String p1, double p2) throws SQLException {
    raw.updateDouble(p1, p2);
  }

  @Override
  public void updateDouble(int p1, double p2) throws SQLException {
    raw.updateDouble(p1, p2);
  }

  @Override
  public void updateFloat(String p1, float p2) throws SQLException {
    raw.updateFloat(p1, p2);
  }

  @Override
  public void updateFloat(int p1, float p2) throws SQLException {
    raw.updateFloat(p1, p2);
  }

  @Override
  public void updateInt(String p1, int p2) throws SQLException {
    raw.updateInt(p1, p2);
  }

  @Override
  public void updateInt(int p1, int p2) throws SQLException {
    raw.updateInt(p1, p2);
  }

  @Override
  public void updateLong(String p1, long p2) throws SQLException {
    raw.updateLong(p1, p2);
  }

  @Override
  public void updateLong(int p1, long p2) throws SQLException {
    raw.updateLong(p1, p2);
  }

  @Override
  public void updateNCharacterStream(String p1, Reader p2, long p3) throws SQLException {
    raw.updateNCharacterStream(p1, p2, p3);
  }

  @Override
  public void updateNCharacterStream(String p1, Reader p2) throws SQLException {
    raw.updateNCharacterStream(p1, p2);
  }

  @Override
  public void updateNCharacterStream(int p1, Reader p2, long p3) throws SQLException {
    raw.updateNCharacterStream(p1, p2, p3);
  }

  @Override
  public void updateNCharacterStream(int p1, Reader p2) throws SQLException {
    raw.updateNCharacterStream(p1, p2);
  }

  @Override
  public void updateNClob(String p1, Reader p2, long p3) throws SQLException {
    raw.updateNClob(p1, p2, p3);
  }

  @Override
  public void updateNClob(String p1, Reader p2) throws SQLException {
    raw.updateNClob(p1, p2);
  }

  @Override
  public void updateNClob(String p1, NClob p2) throws SQLException {
    raw.updateNClob(p1, p2);
  }

  @Override
  public void updateNClob(int p1, Reader p2, long p3) throws SQLException {
    raw.updateNClob(p1, p2, p3);
  }

  @Override
  public void updateNClob(int p1, Reader p2) throws SQLException {
    raw.updateNClob(p1, p2);
  }

  @Override
  public void updateNClob(int p1, NClob p2) throws SQLException {
    raw.updateNClob(p1, p2);
  }

  @Override
  public void updateNString(String p1, String p2) throws SQLException {
    raw.updateNString(p1, p2);
  }

  @Override
  public void updateNString(int p1, String p2) throws SQLException {
    raw.updateNString(p1, p2);
  }

  @Override
  public void updateNull(String p1) throws SQLException {
    raw.updateNull(p1);
  }

  @Override
  public void updateNull(int p1) throws SQLException {
    raw.updateNull(p1);
  }

  @Override
  public void updateObject(String p1, Object p2, int p3) throws SQLException {
    raw.updateObject(p1, p2, p3);
  }

  @Override
  public void updateObject(String p1, Object p2, SQLType p3, int p4) throws SQLException {
    raw.updateObject(p1, p2, p3, p4);
  }

  @Override
  public void updateObject(String p1, Object p2, SQLType p3) throws SQLException {
    raw.updateObject(p1, p2, p3);
  }

  @Override
  public void updateObject(String p1, Object p2) throws SQLException {
    raw.updateObject(p1, p2);
  }

  @Override
  public void updateObject(int p1, Object p2, int p3) throws SQLException {
    raw.updateObject(p1, p2, p3);
  }

  @Override
  public void updateObject(int p1, Object p2, SQLType p3, int p4) throws SQLException {
    raw.updateObject(p1, p2, p3, p4);
  }

  @Override
  public void updateObject(int p1, Object p2, SQLType p3) throws SQLException {
    raw.updateObject(p1, p2, p3);
  }

  @Override
  public void updateObject(int p1, Object p2) throws SQLException {
    raw.updateObject(p1, p2);
  }

  @Override
  public void updateRef(String p1, Ref p2) throws SQLException {
    raw.updateRef(p1, p2);
  }

  @Override
  public void updateRef(int p1, Ref p2) throws SQLException {
    raw.updateRef(p1, p2);
  }

  @Override
  public void updateRowId(String p1, RowId p2) throws SQLException {
    raw.updateRowId(p1, p2);
  }

  @Override
  public void updateRowId(int p1, RowId p2) throws SQLException {
    raw.updateRowId(p1, p2);
  }

  @Override
  public void updateRow() throws SQLException {
    raw.updateRow();
  }

  @Override
  public void updateSQLXML(String p1, SQLXML p2) throws SQLException {
    raw.updateSQLXML(p1, p2);
  }

  @Override
  public void updateSQLXML(int p1, SQLXML p2) throws SQLException {
    raw.updateSQLXML(p1, p2);
  }

  @Override
  public void updateShort(String p1, short p2) throws SQLException {
    raw.updateShort(p1, p2);
  }

  @Override
  public void updateShort(int p1, short p2) throws SQLException {
    raw.updateShort(p1, p2);
  }

  @Override
  public void updateString(String p1, String p2) throws SQLException {
    raw.updateString(p1, p2);
  }

  @Override
  public void updateString(int p1, String p2) throws SQLException {
    raw.updateString(p1, p2);
  }

  @Override
  public void updateTime(String p1, Time p2) throws SQLException {
    raw.updateTime(p1, p2);
  }

  @Override
  public void updateTime(int p1, Time p2) throws SQLException {
    raw.updateTime(p1, p2);
  }

  @Override
  public void updateTimestamp(String p1, Timestamp p2) throws SQLException {
    raw.updateTimestamp(p1, p2);
  }

  @Override
  public void updateTimestamp(int p1, Timestamp p2) throws SQLException {
    raw.updateTimestamp(p1, p2);
  }

  @Override
  public boolean wasNull() throws SQLException {
    return raw.wasNull();
  }
}
