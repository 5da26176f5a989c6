package dev.fencing.jdbc;

import java.lang.reflect.Field;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.jspecify.annotations.Nullable;
import org.postgresql.core.BaseStatement;
import org.postgresql.jdbc.ResultWrapper;

/**
 * The check carried by a plain {@code Statement}'s execution with generated keys ({@code execute},
 * {@code executeUpdate}, {@code executeLargeUpdate} with {@code RETURN_GENERATED_KEYS} or column
 * names; {@link CarriedStatement}). pgjdbc appends {@code RETURNING <columns>} only to a query of
 * one statement, so the carrier appends pgjdbc's own clause ({@link CarriedKeys#appended}, only
 * where pgjdbc appends one) and runs {@code <the literal check>;<sql> RETURNING <columns>} on the
 * driver's statement, told to report each statement's rows and then its count as it does for
 * generated keys. The driver's statement is then left as pgjdbc leaves it unfenced ({@code
 * PgStatement.executeInternal}): its generated keys the statement's {@code RETURNING} rows, its
 * current result the count after them, the check's row and count read, closed and dropped.
 */
final class StatementKeys {
  private static final @Nullable Field RESULT = field("result");
  private static final @Nullable Field FIRST_UNCLOSED = field("firstUnclosedResult");
  private static final @Nullable Field KEYS = field("generatedKeys");

  private StatementKeys() {}

  /**
   * The columns {@code execute(sql, keys)} asks pgjdbc for: an empty array for none (as plain
   * {@code execute(sql)}: {@code NO_GENERATED_KEYS}, empty arrays), {@code *} for {@code
   * RETURN_GENERATED_KEYS}, the names given; null if not carried (column indexes, which pgjdbc
   * refuses, a value it refuses, or a null array).
   */
  static String @Nullable [] columns(@Nullable Object keys) {
    if (keys instanceof Integer k) {
      return k == Statement.NO_GENERATED_KEYS
          ? new String[0]
          : k == Statement.RETURN_GENERATED_KEYS ? new String[] {"*"} : null;
    }
    if (keys instanceof int[] indexes) {
      return indexes.length == 0 ? new String[0] : null;
    }
    return keys instanceof String[] names ? names.clone() : null;
  }

  /** Whether the driver's statement {@code raw} can be left as pgjdbc leaves it. */
  static boolean available(Statement raw) throws SQLException {
    return RESULT != null
        && FIRST_UNCLOSED != null
        && KEYS != null
        && raw.isWrapperFor(BaseStatement.class)
        && RESULT.getDeclaringClass().isInstance(raw.unwrap(BaseStatement.class));
  }

  /**
   * Runs {@code text} (the literal check, then the statement with its {@code RETURNING}) on {@code
   * raw}, each statement's rows and count reported; leaves {@code raw} holding the statement's
   * results and keys only, and returns what the check returned.
   */
  static @Nullable Object run(Statement raw, String text) throws SQLException {
    if (!CarriedKeys.rowsAndCounts(raw, true)) {
      throw new SQLException("cannot ask the driver for rows and counts", "XX000");
    }
    try {
      raw.execute(text);
    } finally {
      CarriedKeys.rowsAndCounts(raw, false);
    }
    Object pg = raw.unwrap(BaseStatement.class);
    ResultWrapper checkRows = (ResultWrapper) get(KEYS, pg);
    ResultWrapper checkCount = (ResultWrapper) get(RESULT, pg);
    if (checkRows == null
        || checkRows.getResultSet() == null
        || checkRows.getNext() != checkCount
        || checkCount == null
        || checkCount.getResultSet() != null) {
      throw new SQLException("the check returned no row", "XX000");
    }
    Object advanced;
    try (ResultSet row = checkRows.getResultSet()) {
      advanced = row.next() ? row.getObject(1) : null;
    }
    // as PgStatement.executeInternal leaves it: keys the first result, the current one after them
    ResultWrapper keys = checkCount.getNext();
    set(KEYS, pg, keys);
    set(FIRST_UNCLOSED, pg, keys);
    set(RESULT, pg, keys == null ? null : keys.getNext());
    return advanced;
  }

  private static @Nullable Object get(@Nullable Field f, Object pg) throws SQLException {
    try {
      return f == null ? null : f.get(pg);
    } catch (IllegalAccessException e) {
      throw new SQLException("cannot read the driver's results", "XX000", e);
    }
  }

  private static void set(@Nullable Field f, Object pg, @Nullable Object value)
      throws SQLException {
    try {
      if (f != null) {
        f.set(pg, value);
      }
    } catch (IllegalAccessException e) {
      throw new SQLException("cannot leave the driver's results as unfenced", "XX000", e);
    }
  }

  private static @Nullable Field field(String name) {
    try {
      Field f = Class.forName("org.postgresql.jdbc.PgStatement").getDeclaredField(name);
      if (f.getType() != ResultWrapper.class) {
        return null;
      }
      f.setAccessible(true);
      return f;
    } catch (ClassNotFoundException | NoSuchFieldException | LinkageError | RuntimeException e) {
      return null;
    }
  }
}
