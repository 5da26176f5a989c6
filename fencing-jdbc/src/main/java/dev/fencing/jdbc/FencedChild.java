package dev.fencing.jdbc;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.Statement;
import org.jspecify.annotations.Nullable;

/**
 * A result set or database metadata of a fenced connection, so that its way back ({@code
 * getStatement()}, {@code getConnection()}) leads to the fenced proxies, never to the driver's
 * unfenced objects.
 */
final class FencedChild implements InvocationHandler {
  private final FencedConnection connection;
  private final Object raw;
  private final @Nullable Object statement;

  private FencedChild(FencedConnection connection, Object raw, @Nullable Object statement) {
    this.connection = connection;
    this.raw = raw;
    this.statement = statement;
  }

  /** {@code raw} as a result set of {@code statement} (a fenced proxy, or null if unknown). */
  static ResultSet resultSet(
      FencedConnection connection, ResultSet raw, @Nullable Object statement) {
    return Delegation.proxy(ResultSet.class, new FencedChild(connection, raw, statement));
  }

  static DatabaseMetaData metaData(FencedConnection connection, DatabaseMetaData raw) {
    return Delegation.proxy(DatabaseMetaData.class, new FencedChild(connection, raw, null));
  }

  /** {@code result} of a call on a fenced object, with any result set made fenced too. */
  static @Nullable Object fence(
      FencedConnection connection, @Nullable Object result, @Nullable Object statement) {
    return result instanceof ResultSet rs && !Delegation.isProxyClass(rs.getClass())
        ? resultSet(connection, rs, statement)
        : result;
  }

  @Override
  public @Nullable Object invoke(Object self, Method method, Object @Nullable [] args)
      throws Throwable {
    switch (method.getName()) {
      case "getStatement":
        if (statement != null) {
          return statement;
        }
        Statement rawStatement = ((ResultSet) raw).getStatement();
        return rawStatement == null
            ? null
            : FencedStatement.wrap(connection, rawStatement, Statement.class, null);
      case "getConnection":
        return connection.proxy();
      case "updateRow":
      case "insertRow":
      case "deleteRow":
        // an updatable result set writes through the driver's own statement: fence it as a write
        return connection.execute(
            FencedConnection.WRITE, () -> Delegation.invoke(raw, method, args));
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
