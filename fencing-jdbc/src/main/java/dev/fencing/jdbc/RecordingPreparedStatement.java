package dev.fencing.jdbc;

import java.io.InputStream;
import java.io.Reader;
import java.lang.reflect.Method;
import java.math.BigDecimal;
import java.net.URL;
import java.sql.Array;
import java.sql.Blob;
import java.sql.Clob;
import java.sql.Date;
import java.sql.NClob;
import java.sql.PreparedStatement;
import java.sql.Ref;
import java.sql.RowId;
import java.sql.SQLException;
import java.sql.SQLType;
import java.sql.SQLXML;
import java.sql.Time;
import java.sql.Timestamp;
import java.util.Calendar;
import org.jspecify.annotations.Nullable;

/**
 * A {@link PreparedStatement} whose parameter setters (every JDBC 4.3 method {@code set*(int,
 * ...)}) hand the call to the driver's statement and then, once the driver accepted it, record it
 * for the replay of a carried check ({@link CarriedCheck}, {@link RecordedParameters}): the setters
 * called most by kind and value, any other by its {@code Method} and arguments. Nothing is recorded
 * for a statement that can never carry ({@link #carrier} null). {@code DelegatingTest} fails if a
 * setter is missing here or handed to another.
 */
abstract class RecordingPreparedStatement extends DelegatingPreparedStatement<PreparedStatement> {
  private static final Method SET_ARRAY_ARRAY = setter("setArray", Array.class);
  private static final Method SET_ASCII_STREAM_INPUTSTREAM =
      setter("setAsciiStream", InputStream.class);
  private static final Method SET_ASCII_STREAM_INPUTSTREAM_INT =
      setter("setAsciiStream", InputStream.class, int.class);
  private static final Method SET_ASCII_STREAM_INPUTSTREAM_LONG =
      setter("setAsciiStream", InputStream.class, long.class);
  private static final Method SET_BIG_DECIMAL_BIGDECIMAL =
      setter("setBigDecimal", BigDecimal.class);
  private static final Method SET_BINARY_STREAM_INPUTSTREAM =
      setter("setBinaryStream", InputStream.class);
  private static final Method SET_BINARY_STREAM_INPUTSTREAM_INT =
      setter("setBinaryStream", InputStream.class, int.class);
  private static final Method SET_BINARY_STREAM_INPUTSTREAM_LONG =
      setter("setBinaryStream", InputStream.class, long.class);
  private static final Method SET_BLOB_BLOB = setter("setBlob", Blob.class);
  private static final Method SET_BLOB_INPUTSTREAM = setter("setBlob", InputStream.class);
  private static final Method SET_BLOB_INPUTSTREAM_LONG =
      setter("setBlob", InputStream.class, long.class);
  private static final Method SET_BOOLEAN_BOOLEAN = setter("setBoolean", boolean.class);
  private static final Method SET_BYTE_BYTE = setter("setByte", byte.class);
  private static final Method SET_BYTES_BYTES = setter("setBytes", byte[].class);
  private static final Method SET_CHARACTER_STREAM_READER =
      setter("setCharacterStream", Reader.class);
  private static final Method SET_CHARACTER_STREAM_READER_INT =
      setter("setCharacterStream", Reader.class, int.class);
  private static final Method SET_CHARACTER_STREAM_READER_LONG =
      setter("setCharacterStream", Reader.class, long.class);
  private static final Method SET_CLOB_CLOB = setter("setClob", Clob.class);
  private static final Method SET_CLOB_READER = setter("setClob", Reader.class);
  private static final Method SET_CLOB_READER_LONG = setter("setClob", Reader.class, long.class);
  private static final Method SET_DATE_DATE = setter("setDate", Date.class);
  private static final Method SET_DATE_DATE_CALENDAR =
      setter("setDate", Date.class, Calendar.class);
  private static final Method SET_DOUBLE_DOUBLE = setter("setDouble", double.class);
  private static final Method SET_FLOAT_FLOAT = setter("setFloat", float.class);
  private static final Method SET_N_CHARACTER_STREAM_READER =
      setter("setNCharacterStream", Reader.class);
  private static final Method SET_N_CHARACTER_STREAM_READER_LONG =
      setter("setNCharacterStream", Reader.class, long.class);
  private static final Method SET_N_CLOB_NCLOB = setter("setNClob", NClob.class);
  private static final Method SET_N_CLOB_READER = setter("setNClob", Reader.class);
  private static final Method SET_N_CLOB_READER_LONG = setter("setNClob", Reader.class, long.class);
  private static final Method SET_N_STRING_STRING = setter("setNString", String.class);
  private static final Method SET_NULL_INT_STRING = setter("setNull", int.class, String.class);
  private static final Method SET_OBJECT_OBJECT_SQLTYPE =
      setter("setObject", Object.class, SQLType.class);
  private static final Method SET_OBJECT_OBJECT_SQLTYPE_INT =
      setter("setObject", Object.class, SQLType.class, int.class);
  private static final Method SET_OBJECT_OBJECT_INT = setter("setObject", Object.class, int.class);
  private static final Method SET_OBJECT_OBJECT_INT_INT =
      setter("setObject", Object.class, int.class, int.class);
  private static final Method SET_REF_REF = setter("setRef", Ref.class);
  private static final Method SET_ROW_ID_ROWID = setter("setRowId", RowId.class);
  private static final Method SET_S_Q_L_X_M_L_SQLXML = setter("setSQLXML", SQLXML.class);
  private static final Method SET_SHORT_SHORT = setter("setShort", short.class);
  private static final Method SET_TIME_TIME = setter("setTime", Time.class);
  private static final Method SET_TIME_TIME_CALENDAR =
      setter("setTime", Time.class, Calendar.class);
  private static final Method SET_TIMESTAMP_TIMESTAMP = setter("setTimestamp", Timestamp.class);
  private static final Method SET_TIMESTAMP_TIMESTAMP_CALENDAR =
      setter("setTimestamp", Timestamp.class, Calendar.class);
  private static final Method SET_U_R_L_URL = setter("setURL", URL.class);
  private static final Method SET_UNICODE_STREAM_INPUTSTREAM_INT =
      setter("setUnicodeStream", InputStream.class, int.class);

  /** The carrier that records the parameters set, or null if the statement never carries. */
  final @Nullable CarriedCheck carrier;

  RecordingPreparedStatement(PreparedStatement raw, @Nullable CarriedCheck carrier) {
    super(raw);
    this.carrier = carrier;
  }

  private static Method setter(String name, Class<?>... valueTypes) {
    Class<?>[] types = new Class<?>[valueTypes.length + 1];
    types[0] = int.class;
    System.arraycopy(valueTypes, 0, types, 1, valueTypes.length);
    try {
      return PreparedStatement.class.getMethod(name, types);
    } catch (NoSuchMethodException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Records {@code setter}, called with {@code args}, if the statement records. */
  private void recorded(Method setter, Object... args) {
    CarriedCheck c = carrier;
    if (c != null) {
      c.called(setter, args);
    }
  }

  @Override
  public void setArray(int p1, Array p2) throws SQLException {
    Array array = FencedArray.driverOf(p2);
    raw.setArray(p1, array);
    recorded(SET_ARRAY_ARRAY, p1, array);
  }

  @Override
  public void setAsciiStream(int p1, InputStream p2) throws SQLException {
    raw.setAsciiStream(p1, p2);
    recorded(SET_ASCII_STREAM_INPUTSTREAM, p1, p2);
  }

  @Override
  public void setAsciiStream(int p1, InputStream p2, int p3) throws SQLException {
    raw.setAsciiStream(p1, p2, p3);
    recorded(SET_ASCII_STREAM_INPUTSTREAM_INT, p1, p2, p3);
  }

  @Override
  public void setAsciiStream(int p1, InputStream p2, long p3) throws SQLException {
    raw.setAsciiStream(p1, p2, p3);
    recorded(SET_ASCII_STREAM_INPUTSTREAM_LONG, p1, p2, p3);
  }

  @Override
  public void setBigDecimal(int p1, BigDecimal p2) throws SQLException {
    raw.setBigDecimal(p1, p2);
    recorded(SET_BIG_DECIMAL_BIGDECIMAL, p1, p2);
  }

  @Override
  public void setBinaryStream(int p1, InputStream p2) throws SQLException {
    raw.setBinaryStream(p1, p2);
    recorded(SET_BINARY_STREAM_INPUTSTREAM, p1, p2);
  }

  @Override
  public void setBinaryStream(int p1, InputStream p2, int p3) throws SQLException {
    raw.setBinaryStream(p1, p2, p3);
    recorded(SET_BINARY_STREAM_INPUTSTREAM_INT, p1, p2, p3);
  }

  @Override
  public void setBinaryStream(int p1, InputStream p2, long p3) throws SQLException {
    raw.setBinaryStream(p1, p2, p3);
    recorded(SET_BINARY_STREAM_INPUTSTREAM_LONG, p1, p2, p3);
  }

  @Override
  public void setBlob(int p1, Blob p2) throws SQLException {
    raw.setBlob(p1, p2);
    recorded(SET_BLOB_BLOB, p1, p2);
  }

  @Override
  public void setBlob(int p1, InputStream p2) throws SQLException {
    raw.setBlob(p1, p2);
    recorded(SET_BLOB_INPUTSTREAM, p1, p2);
  }

  @Override
  public void setBlob(int p1, InputStream p2, long p3) throws SQLException {
    raw.setBlob(p1, p2, p3);
    recorded(SET_BLOB_INPUTSTREAM_LONG, p1, p2, p3);
  }

  @Override
  public void setBoolean(int p1, boolean p2) throws SQLException {
    raw.setBoolean(p1, p2);
    recorded(SET_BOOLEAN_BOOLEAN, p1, p2);
  }

  @Override
  public void setByte(int p1, byte p2) throws SQLException {
    raw.setByte(p1, p2);
    recorded(SET_BYTE_BYTE, p1, p2);
  }

  @Override
  public void setBytes(int p1, byte[] p2) throws SQLException {
    raw.setBytes(p1, p2);
    recorded(SET_BYTES_BYTES, p1, p2);
  }

  @Override
  public void setCharacterStream(int p1, Reader p2) throws SQLException {
    raw.setCharacterStream(p1, p2);
    recorded(SET_CHARACTER_STREAM_READER, p1, p2);
  }

  @Override
  public void setCharacterStream(int p1, Reader p2, int p3) throws SQLException {
    raw.setCharacterStream(p1, p2, p3);
    recorded(SET_CHARACTER_STREAM_READER_INT, p1, p2, p3);
  }

  @Override
  public void setCharacterStream(int p1, Reader p2, long p3) throws SQLException {
    raw.setCharacterStream(p1, p2, p3);
    recorded(SET_CHARACTER_STREAM_READER_LONG, p1, p2, p3);
  }

  @Override
  public void setClob(int p1, Clob p2) throws SQLException {
    raw.setClob(p1, p2);
    recorded(SET_CLOB_CLOB, p1, p2);
  }

  @Override
  public void setClob(int p1, Reader p2) throws SQLException {
    raw.setClob(p1, p2);
    recorded(SET_CLOB_READER, p1, p2);
  }

  @Override
  public void setClob(int p1, Reader p2, long p3) throws SQLException {
    raw.setClob(p1, p2, p3);
    recorded(SET_CLOB_READER_LONG, p1, p2, p3);
  }

  @Override
  public void setDate(int p1, Date p2) throws SQLException {
    raw.setDate(p1, p2);
    recorded(SET_DATE_DATE, p1, p2);
  }

  @Override
  public void setDate(int p1, Date p2, Calendar p3) throws SQLException {
    raw.setDate(p1, p2, p3);
    recorded(SET_DATE_DATE_CALENDAR, p1, p2, p3);
  }

  @Override
  public void setDouble(int p1, double p2) throws SQLException {
    raw.setDouble(p1, p2);
    recorded(SET_DOUBLE_DOUBLE, p1, p2);
  }

  @Override
  public void setFloat(int p1, float p2) throws SQLException {
    raw.setFloat(p1, p2);
    recorded(SET_FLOAT_FLOAT, p1, p2);
  }

  @Override
  public void setInt(int p1, int p2) throws SQLException {
    raw.setInt(p1, p2);
    CarriedCheck c = carrier;
    if (c != null) {
      c.parameters().setInt(p1, p2);
    }
  }

  @Override
  public void setLong(int p1, long p2) throws SQLException {
    raw.setLong(p1, p2);
    CarriedCheck c = carrier;
    if (c != null) {
      c.parameters().setLong(p1, p2);
    }
  }

  @Override
  public void setNCharacterStream(int p1, Reader p2) throws SQLException {
    raw.setNCharacterStream(p1, p2);
    recorded(SET_N_CHARACTER_STREAM_READER, p1, p2);
  }

  @Override
  public void setNCharacterStream(int p1, Reader p2, long p3) throws SQLException {
    raw.setNCharacterStream(p1, p2, p3);
    recorded(SET_N_CHARACTER_STREAM_READER_LONG, p1, p2, p3);
  }

  @Override
  public void setNClob(int p1, NClob p2) throws SQLException {
    raw.setNClob(p1, p2);
    recorded(SET_N_CLOB_NCLOB, p1, p2);
  }

  @Override
  public void setNClob(int p1, Reader p2) throws SQLException {
    raw.setNClob(p1, p2);
    recorded(SET_N_CLOB_READER, p1, p2);
  }

  @Override
  public void setNClob(int p1, Reader p2, long p3) throws SQLException {
    raw.setNClob(p1, p2, p3);
    recorded(SET_N_CLOB_READER_LONG, p1, p2, p3);
  }

  @Override
  public void setNString(int p1, String p2) throws SQLException {
    raw.setNString(p1, p2);
    recorded(SET_N_STRING_STRING, p1, p2);
  }

  @Override
  public void setNull(int p1, int p2) throws SQLException {
    raw.setNull(p1, p2);
    CarriedCheck c = carrier;
    if (c != null) {
      c.parameters().setNull(p1, p2);
    }
  }

  @Override
  public void setNull(int p1, int p2, String p3) throws SQLException {
    raw.setNull(p1, p2, p3);
    recorded(SET_NULL_INT_STRING, p1, p2, p3);
  }

  @Override
  public void setObject(int p1, Object p2) throws SQLException {
    raw.setObject(p1, p2);
    CarriedCheck c = carrier;
    if (c != null) {
      c.parameters().setObject(p1, p2);
    }
  }

  @Override
  public void setObject(int p1, Object p2, SQLType p3) throws SQLException {
    raw.setObject(p1, p2, p3);
    recorded(SET_OBJECT_OBJECT_SQLTYPE, p1, p2, p3);
  }

  @Override
  public void setObject(int p1, Object p2, SQLType p3, int p4) throws SQLException {
    raw.setObject(p1, p2, p3, p4);
    recorded(SET_OBJECT_OBJECT_SQLTYPE_INT, p1, p2, p3, p4);
  }

  @Override
  public void setObject(int p1, Object p2, int p3) throws SQLException {
    raw.setObject(p1, p2, p3);
    recorded(SET_OBJECT_OBJECT_INT, p1, p2, p3);
  }

  @Override
  public void setObject(int p1, Object p2, int p3, int p4) throws SQLException {
    raw.setObject(p1, p2, p3, p4);
    recorded(SET_OBJECT_OBJECT_INT_INT, p1, p2, p3, p4);
  }

  @Override
  public void setRef(int p1, Ref p2) throws SQLException {
    raw.setRef(p1, p2);
    recorded(SET_REF_REF, p1, p2);
  }

  @Override
  public void setRowId(int p1, RowId p2) throws SQLException {
    raw.setRowId(p1, p2);
    recorded(SET_ROW_ID_ROWID, p1, p2);
  }

  @Override
  public void setSQLXML(int p1, SQLXML p2) throws SQLException {
    raw.setSQLXML(p1, p2);
    recorded(SET_S_Q_L_X_M_L_SQLXML, p1, p2);
  }

  @Override
  public void setShort(int p1, short p2) throws SQLException {
    raw.setShort(p1, p2);
    recorded(SET_SHORT_SHORT, p1, p2);
  }

  @Override
  public void setString(int p1, String p2) throws SQLException {
    raw.setString(p1, p2);
    CarriedCheck c = carrier;
    if (c != null) {
      c.parameters().setString(p1, p2);
    }
  }

  @Override
  public void setTime(int p1, Time p2) throws SQLException {
    raw.setTime(p1, p2);
    recorded(SET_TIME_TIME, p1, p2);
  }

  @Override
  public void setTime(int p1, Time p2, Calendar p3) throws SQLException {
    raw.setTime(p1, p2, p3);
    recorded(SET_TIME_TIME_CALENDAR, p1, p2, p3);
  }

  @Override
  public void setTimestamp(int p1, Timestamp p2) throws SQLException {
    raw.setTimestamp(p1, p2);
    recorded(SET_TIMESTAMP_TIMESTAMP, p1, p2);
  }

  @Override
  public void setTimestamp(int p1, Timestamp p2, Calendar p3) throws SQLException {
    raw.setTimestamp(p1, p2, p3);
    recorded(SET_TIMESTAMP_TIMESTAMP_CALENDAR, p1, p2, p3);
  }

  @Override
  public void setURL(int p1, URL p2) throws SQLException {
    raw.setURL(p1, p2);
    recorded(SET_U_R_L_URL, p1, p2);
  }

  @Deprecated
  @Override
  public void setUnicodeStream(int p1, InputStream p2, int p3) throws SQLException {
    raw.setUnicodeStream(p1, p2, p3);
    recorded(SET_UNICODE_STREAM_INPUTSTREAM_INT, p1, p2, p3);
  }
}
