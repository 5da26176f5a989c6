package dev.fencing.jdbc;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A statement of a {@link FencedConnection}: hands every {@code execute*} (including batches) to
 * the connection with the SQL it will run; everything else goes straight to the driver.
 */
final class FencedStatement implements InvocationHandler {
  private final FencedConnection connection;
  private final Statement raw;
  private final @Nullable String preparedSql;
  private final List<String> batch = new ArrayList<>();

  private FencedStatement(
      FencedConnection connection, Statement raw, @Nullable String preparedSql) {
    this.connection = connection;
    this.raw = raw;
    this.preparedSql = preparedSql;
  }

  static Object wrap(
      FencedConnection connection,
      Statement raw,
      Class<? extends Statement> type,
      @Nullable String preparedSql) {
    return Proxy.newProxyInstance(
        FencedStatement.class.getClassLoader(),
        new Class<?>[] {type},
        new FencedStatement(connection, raw, preparedSql));
  }

  @Override
  public @Nullable Object invoke(Object self, Method method, Object @Nullable [] args)
      throws Throwable {
    String name = method.getName();
    if (name.startsWith("execute")) {
      boolean isBatch = name.endsWith("Batch");
      String sql = sqlOf(args, isBatch);
      try {
        return FencedChild.fence(
            connection, connection.execute(sql, () -> Delegation.invoke(raw, method, args)), self);
      } finally {
        if (isBatch) {
          batch.clear();
        }
      }
    }
    switch (name) {
      case "addBatch":
        if (args != null && args.length == 1 && args[0] instanceof String sql) {
          batch.add(sql);
        }
        return Delegation.invoke(raw, method, args);
      case "clearBatch":
        batch.clear();
        return Delegation.invoke(raw, method, args);
      case "getConnection":
        return connection.proxy();
      case "unwrap":
        Class<?> iface = (Class<?>) args[0];
        return iface.isInstance(self) ? self : raw.unwrap(iface);
      default:
        Object common = Delegation.common(self, raw, method, args);
        return common != Delegation.NOT_COMMON
            ? common
            : FencedChild.fence(connection, Delegation.invoke(raw, method, args), self);
    }
  }

  private String sqlOf(Object @Nullable [] args, boolean isBatch) {
    if (args != null && args.length > 0 && args[0] instanceof String sql) {
      return sql;
    }
    if (isBatch && preparedSql == null) {
      return String.join(";\n", batch);
    }
    // A prepared statement whose SQL we somehow lack is treated as a write.
    return preparedSql != null ? preparedSql : "UNKNOWN";
  }
}
