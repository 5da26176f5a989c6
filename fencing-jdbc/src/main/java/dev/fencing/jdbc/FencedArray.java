package dev.fencing.jdbc;

import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * An array of a {@link FencedDataSource} connection ({@code createArrayOf}, {@code getArray}, an
 * array {@code getObject} returns): its result sets are fenced, so that their {@code
 * getStatement().getConnection()} leads back to the fenced connection. The driver's array makes
 * them on a statement of the driver's connection, whose writes in autocommit were unfenced.
 * Everything else, {@code toString()} included (what the driver sends for an array parameter that
 * is not its own), is the driver's array's.
 */
final class FencedArray implements Array {
  private final FencedConnection connection;
  private final Array raw;

  private FencedArray(FencedConnection connection, Array raw) {
    this.connection = connection;
    this.raw = raw;
  }

  /** {@code raw}, fenced unless it is already. */
  static Array of(FencedConnection connection, Array raw) {
    return raw instanceof FencedArray ? raw : new FencedArray(connection, raw);
  }

  /**
   * The driver's array behind {@code value} (what a parameter setter hands the driver, which sends
   * its own arrays in their binary form), or {@code value} itself.
   */
  static @Nullable Array driverOf(@Nullable Array value) {
    return value instanceof FencedArray f ? f.raw : value;
  }

  @Override
  public String getBaseTypeName() throws SQLException {
    return raw.getBaseTypeName();
  }

  @Override
  public int getBaseType() throws SQLException {
    return raw.getBaseType();
  }

  @Override
  public Object getArray() throws SQLException {
    return raw.getArray();
  }

  @Override
  public Object getArray(Map<String, Class<?>> map) throws SQLException {
    return raw.getArray(map);
  }

  @Override
  public Object getArray(long index, int count) throws SQLException {
    return raw.getArray(index, count);
  }

  @Override
  public Object getArray(long index, int count, Map<String, Class<?>> map) throws SQLException {
    return raw.getArray(index, count, map);
  }

  @Override
  public ResultSet getResultSet() throws SQLException {
    return fenced(raw.getResultSet());
  }

  @Override
  public ResultSet getResultSet(Map<String, Class<?>> map) throws SQLException {
    return fenced(raw.getResultSet(map));
  }

  @Override
  public ResultSet getResultSet(long index, int count) throws SQLException {
    return fenced(raw.getResultSet(index, count));
  }

  @Override
  public ResultSet getResultSet(long index, int count, Map<String, Class<?>> map)
      throws SQLException {
    return fenced(raw.getResultSet(index, count, map));
  }

  @Override
  public void free() throws SQLException {
    raw.free();
  }

  @Override
  public String toString() {
    return raw.toString();
  }

  private ResultSet fenced(ResultSet rs) {
    return FencedChild.resultSet(connection, rs, null);
  }
}
