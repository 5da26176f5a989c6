package dev.fencing.jdbc;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.sql.Array;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import org.jspecify.annotations.Nullable;

/**
 * The result sets and database metadata of a fenced connection, so that their way back ({@code
 * getStatement()}, {@code getConnection()}) leads to the fenced connection and statements, never to
 * the driver's unfenced objects. A result set is a {@link FencedResultSet}; the metadata, rarely
 * asked for, a proxy whose handler is this.
 */
final class FencedChild implements InvocationHandler {
  private final FencedConnection connection;
  private final DatabaseMetaData raw;

  private FencedChild(FencedConnection connection, DatabaseMetaData raw) {
    this.connection = connection;
    this.raw = raw;
  }

  /** {@code raw} as a result set of {@code statement} (a fenced statement, or null if unknown). */
  static ResultSet resultSet(
      FencedConnection connection, ResultSet raw, @Nullable Object statement) {
    return new FencedResultSet(connection, raw, statement);
  }

  static DatabaseMetaData metaData(FencedConnection connection, DatabaseMetaData raw) {
    return Delegation.proxy(DatabaseMetaData.class, new FencedChild(connection, raw));
  }

  /**
   * {@code result} of a call on a fenced object, with a result set or an array made fenced too
   * unless it is already.
   */
  static @Nullable Object fence(
      FencedConnection connection, @Nullable Object result, @Nullable Object statement) {
    if (result instanceof Array array) {
      return FencedArray.of(connection, array);
    }
    return result instanceof ResultSet rs && !(rs instanceof FencedResultSet)
        ? resultSet(connection, rs, statement)
        : result;
  }

  @Override
  public @Nullable Object invoke(Object self, Method method, Object @Nullable [] args)
      throws Throwable {
    switch (method.getName()) {
      case "getConnection":
        return connection.proxy();
      case "unwrap":
        Class<?> iface = (Class<?>) args[0];
        return iface.isInstance(self) ? self : Delegation.invoke(raw, method, args);
      default:
        Object common = Delegation.common(self, raw, method, args);
        return common != Delegation.NOT_COMMON
            ? common
            : fence(connection, Delegation.invoke(raw, method, args), null);
    }
  }
}
