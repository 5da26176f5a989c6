package dev.fencing.jdbc;

import java.lang.reflect.Field;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.jspecify.annotations.Nullable;
import org.postgresql.core.BaseStatement;
import org.postgresql.jdbc.ResultWrapper;
import org.postgresql.util.GT;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;
import org.postgresql.util.ServerErrorMessage;

/**
 * A read in autocommit with tokens bound (issue 13), by a plain {@code Statement} ({@link
 * CarriedStatement}) or a {@code PreparedStatement} ({@link CarriedCheck}, which prepares the text
 * below as a statement of its own, the caller's parameters at their places): {@code execute} or
 * {@code executeQuery} of one query ({@code SELECT}, {@code WITH}, {@code VALUES}, {@code TABLE},
 * {@code SHOW}, {@code EXPLAIN}) runs as {@code <sql>\n;<the commit's check, literal>} ({@link
 * CheckLiteral#ifWritten}: {@code check_one} behind the test that the read wrote) in one round
 * trip: one query message, or statements before one Sync (the caller checked that no Sync can come
 * between them, {@link SyncSplit}). The server runs both as one implicit transaction, so a write
 * the query hides (a view, an operator, a function) is checked before that transaction commits, and
 * a refusal rolls the whole of it back, the read's hidden write included. A read that wrote nothing
 * checks nothing, as at a {@code COMMIT}.
 *
 * <p>The caller's statement comes first, so an error in it (position included) is the one it raises
 * unfenced, and the check never runs; a syntax error the server places at or after the end of the
 * caller's text (where unfenced it would say {@code at end of input}) is not the caller's message:
 * the read then runs again the long way (nothing of the failed message stayed). The check's row is
 * unlinked from the driver's chain of results and closed: the driver's statement then holds what it
 * holds unfenced (its result, {@code getMoreResults} false after it, warnings).
 */
final class CheckedRead {
  private static final @Nullable Field NEXT = field(ResultWrapper.class, "next");
  private static final @Nullable Field RESULT = pgStatementField("result");

  private CheckedRead() {}

  /** Whether {@code sql} starts, after comments and parentheses, with a word of a plain query. */
  static boolean query(String sql) {
    int i = 0;
    int n = sql.length();
    while (i < n) {
      char c = sql.charAt(i);
      if (Character.isWhitespace(c) || c == '(') {
        i++;
      } else if (sql.startsWith("--", i)) {
        int end = sql.indexOf('\n', i);
        if (end < 0) {
          return false;
        }
        i = end + 1;
      } else if (sql.startsWith("/*", i)) {
        int end = sql.indexOf("*/", i + 2);
        if (end < 0 || sql.substring(i + 2, end).contains("/*")) {
          return false; // nested: not worth lexing here
        }
        i = end + 2;
      } else {
        break;
      }
    }
    int start = i;
    while (i < n && Character.isLetter(sql.charAt(i))) {
      i++;
    }
    if (i < n && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '_')) {
      return false;
    }
    String word = sql.substring(start, i);
    for (String w : new String[] {"select", "with", "values", "table", "show", "explain"}) {
      if (word.equalsIgnoreCase(w)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Runs {@code raw.<name>(sql)} (a read, {@code execute} or {@code executeQuery}) with {@code
   * check} behind it; null if it sent nothing, or nothing the caller may see (run it the long way).
   */
  static Carrier.@Nullable Carried run(Statement raw, String name, String sql, String check)
      throws SQLException {
    if (!carries(raw, name, sql)) {
      return null;
    }
    String body = body(sql);
    try {
      raw.execute(text(sql, check));
    } catch (PSQLException e) {
      if (pastTheEnd(e, body)) {
        return null;
      }
      throw e;
    }
    return results(raw, name);
  }

  /** Whether {@code s} can run {@code name} of {@code sql} with the check behind it. */
  static boolean carries(Statement s, String name, String sql) throws SQLException {
    return NEXT != null
        && RESULT != null
        && (name.equals("execute") || name.equals("executeQuery"))
        && query(sql)
        && s.isWrapperFor(BaseStatement.class)
        && RESULT.getDeclaringClass().isInstance(s.unwrap(BaseStatement.class));
  }

  /** {@code sql} up to its first {@code ;} (one statement: only blanks and {@code ;}s after). */
  static String body(String sql) {
    int semicolon = sql.indexOf(';');
    return semicolon < 0 ? sql : sql.substring(0, semicolon);
  }

  /** The read, then the check: a newline first, which ends a line comment at the read's end. */
  static String text(String sql, String check) {
    return body(sql) + "\n;" + check;
  }

  /**
   * Whether {@code e} is a syntax error the server places at or past the end of the caller's {@code
   * body}: unfenced it would say "at end of input"; with the check behind it names the {@code ;}.
   * Run the read again the long way (the failed message changed nothing).
   */
  static boolean pastTheEnd(PSQLException e, String body) {
    ServerErrorMessage server = e.getServerErrorMessage();
    return server != null
        && "42601".equals(e.getSQLState())
        && server.getPosition() > body.codePointCount(0, body.length());
  }

  /**
   * After {@code s} executed {@link #text}: reads and closes the check's row, unlinks it from the
   * driver's results, and returns what {@code name} returns unfenced with what the check returned.
   */
  static Carrier.Carried results(Statement s, String name) throws SQLException {
    Field next = NEXT;
    Field result = RESULT;
    if (next == null || result == null) {
      throw new SQLException("cannot read the driver's results", "XX000");
    }
    ResultWrapper first;
    try {
      first = (ResultWrapper) result.get(s.unwrap(BaseStatement.class));
    } catch (IllegalAccessException e) {
      throw new SQLException("cannot read the driver's results", "XX000", e);
    }
    ResultWrapper checked = first == null ? null : first.getNext();
    if (checked == null || checked.getResultSet() == null || checked.getNext() != null) {
      throw new SQLException("the check of a read returned no row", "XX000");
    }
    Object advanced;
    try (ResultSet row = checked.getResultSet()) {
      advanced = row.next() ? row.getObject(1) : null;
    }
    try {
      next.set(first, null);
    } catch (IllegalAccessException e) {
      throw new SQLException("cannot hide the check's row", "XX000", e);
    }
    boolean isResultSet = first.getResultSet() != null;
    if (name.equals("executeQuery")) {
      if (!isResultSet) {
        throw new PSQLException(GT.tr("No results were returned by the query."), PSQLState.NO_DATA);
      }
      return new Carrier.Carried(s.getResultSet(), advanced);
    }
    return new Carrier.Carried(isResultSet, advanced);
  }

  private static @Nullable Field pgStatementField(String name) {
    try {
      return field(Class.forName("org.postgresql.jdbc.PgStatement"), name);
    } catch (ClassNotFoundException | LinkageError e) {
      return null;
    }
  }

  private static @Nullable Field field(Class<?> type, String name) {
    try {
      Field f = type.getDeclaredField(name);
      f.setAccessible(true);
      return f;
    } catch (NoSuchFieldException | RuntimeException e) {
      return null;
    }
  }
}
