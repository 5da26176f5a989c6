package dev.fencing.jdbc;

import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A result set of a {@link FencedDataSource} connection: {@code getStatement()} is the fenced
 * statement, a result set {@code getObject} returns (a refcursor) is fenced too, and an updatable
 * result set's row writes are fenced writes; everything else is the driver's.
 *
 * <p>Public, like the JDK proxy it replaced and the drivers' own result set classes, so that a JDBC
 * method found through the runtime class can be called; its API is {@link java.sql.ResultSet}'s and
 * nothing more: only the library makes one.
 */
public final class FencedResultSet extends DelegatingResultSet {
  private final FencedConnection connection;
  private final @Nullable Object statement;

  FencedResultSet(FencedConnection connection, ResultSet raw, @Nullable Object statement) {
    super(raw);
    this.connection = connection;
    this.statement = statement;
  }

  @Override
  public @Nullable Statement getStatement() throws SQLException {
    if (statement != null) {
      return (Statement) statement;
    }
    Statement rawStatement = raw.getStatement();
    return rawStatement == null ? null : new FencedStatement(connection, rawStatement);
  }

  // An updatable result set writes through the driver's own statement: fence it as a write.

  @Override
  public void updateRow() throws SQLException {
    write(
        () -> {
          raw.updateRow();
          return null;
        });
  }

  @Override
  public void insertRow() throws SQLException {
    write(
        () -> {
          raw.insertRow();
          return null;
        });
  }

  @Override
  public void deleteRow() throws SQLException {
    write(
        () -> {
          raw.deleteRow();
          return null;
        });
  }

  private void write(ConnectionFence.JdbcCall call) throws SQLException {
    try {
      connection.fence().execute(ConnectionFence.WRITE, call);
    } catch (Throwable e) {
      throw Delegation.rethrown(e);
    }
  }

  // A result set among the values (a refcursor's, an array's) leads back to the fenced connection
  // too.

  @Override
  public @Nullable Array getArray(int p1) throws SQLException {
    return (Array) fence(raw.getArray(p1));
  }

  @Override
  public @Nullable Array getArray(String p1) throws SQLException {
    return (Array) fence(raw.getArray(p1));
  }

  @Override
  public @Nullable Object getObject(int p1) throws SQLException {
    return fence(raw.getObject(p1));
  }

  @Override
  public @Nullable Object getObject(String p1) throws SQLException {
    return fence(raw.getObject(p1));
  }

  @Override
  public @Nullable Object getObject(int p1, Map<String, Class<?>> p2) throws SQLException {
    return fence(raw.getObject(p1, p2));
  }

  @Override
  public @Nullable Object getObject(String p1, Map<String, Class<?>> p2) throws SQLException {
    return fence(raw.getObject(p1, p2));
  }

  @Override
  @SuppressWarnings("unchecked")
  public <T> @Nullable T getObject(int p1, Class<T> p2) throws SQLException {
    return (T) fence(raw.getObject(p1, p2));
  }

  @Override
  @SuppressWarnings("unchecked")
  public <T> @Nullable T getObject(String p1, Class<T> p2) throws SQLException {
    return (T) fence(raw.getObject(p1, p2));
  }

  private @Nullable Object fence(@Nullable Object value) {
    return FencedChild.fence(connection, value, null);
  }

  @Override
  @SuppressWarnings("unchecked")
  public <T> T unwrap(Class<T> p1) throws SQLException {
    return p1.isInstance(this) ? (T) this : raw.unwrap(p1);
  }

  @Override
  public boolean isWrapperFor(Class<?> p1) throws SQLException {
    return p1.isInstance(this) || raw.isWrapperFor(p1);
  }

  @Override
  public String toString() {
    return "Fenced[" + raw + "]";
  }
}
