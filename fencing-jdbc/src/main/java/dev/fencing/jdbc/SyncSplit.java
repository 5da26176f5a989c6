package dev.fencing.jdbc;

import java.lang.reflect.Field;
import java.sql.SQLException;
import java.sql.Statement;
import org.jspecify.annotations.Nullable;
import org.postgresql.core.BaseStatement;
import org.postgresql.core.CachedQuery;
import org.postgresql.core.Query;

/**
 * Whether pgjdbc may send a Sync between the check and the statement of a carried execution under
 * the extended protocol. It does, to keep the receive buffer from filling, when the estimated
 * response of the statements sent so far reaches 64 kB, and it estimates the unbounded (a text
 * column, say) for a statement it has described ({@code QueryExecutorImpl.flushIfDeadlockRisk}): a
 * query described because its parameters' types were unknown once it became a named statement
 * ({@code stringtype=unspecified}, {@code setNull} with {@code Types.OTHER}, ...), or by forced
 * binary transfer ({@code prepareThreshold=-1}, {@code forceBinary}), which describes before it
 * executes. In autocommit such a Sync ends the implicit transaction with the check: the statement
 * would run after the check's transaction committed, outside the fence. So the carried check uses
 * the implicit transaction only where no such Sync can come; elsewhere the wrapper's transaction.
 * Anything not known counts as possible.
 */
final class SyncSplit {
  private SyncSplit() {}

  /**
   * Whether the driver's statement {@code s} executing {@code query} (null if not at hand: a plain
   * statement's query is made at its execution) may Sync between its statements.
   */
  static boolean possible(Statement s, @Nullable Query query) {
    try {
      if (!s.isWrapperFor(BaseStatement.class)) {
        return true;
      }
      Object pg = s.unwrap(BaseStatement.class);
      Field force = field(pg.getClass(), "forceBinaryTransfers");
      if (force == null || force.getType() != boolean.class || force.getBoolean(pg)) {
        return true;
      }
      if (query == null) {
        return false;
      }
      Query[] parts = query.getSubqueries();
      if (parts == null) {
        return query.isStatementDescribed();
      }
      for (Query part : parts) {
        if (part.isStatementDescribed()) {
          return true;
        }
      }
      return false;
    } catch (SQLException | IllegalAccessException | RuntimeException e) {
      return true;
    }
  }

  /** The query of pgjdbc's prepared statement {@code s}, or null if not at hand. */
  static @Nullable Query preparedQuery(Statement s) {
    try {
      Object pg = s.unwrap(BaseStatement.class);
      Field f = field(pg.getClass(), "preparedQuery");
      return f != null && f.get(pg) instanceof CachedQuery cached ? cached.query : null;
    } catch (SQLException | IllegalAccessException | RuntimeException e) {
      return null;
    }
  }

  private static @Nullable Field field(Class<?> type, String name) {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      try {
        Field f = c.getDeclaredField(name);
        f.setAccessible(true);
        return f;
      } catch (NoSuchFieldException e) {
        // in a superclass
      }
    }
    return null;
  }
}
