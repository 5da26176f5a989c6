package dev.fencing.jdbc;

import java.lang.reflect.Field;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.BaseStatement;
import org.postgresql.core.NativeQuery;
import org.postgresql.core.Parser;

/**
 * The check carried by an execution of a statement prepared for generated keys ({@code
 * prepareStatement(sql, RETURN_GENERATED_KEYS)} or with column names, as Hibernate's {@code
 * IDENTITY} insert): pgjdbc appends {@code RETURNING <columns>} only to a query of one statement,
 * so the carrier appends it itself, exactly where and as pgjdbc does, and only when pgjdbc does
 * (its own {@link Parser} decides, with the connection's settings); else the check runs alone.
 */
final class CarriedKeys {
  private CarriedKeys() {}

  // what pgjdbc returns for RETURN_GENERATED_KEYS
  private static final String[] ALL_COLUMNS = {"*"};

  /**
   * Whether the driver's statement {@code s} returns generated keys: pgjdbc's public {@code
   * PgStatement.wantsGeneratedKeysAlways}, set when it appends (or finds) {@code RETURNING}. Read
   * by reflection: naming {@code PgStatement} at compile time drags in annotations whose classes
   * are not on the compile path. Null if the statement is not pgjdbc's.
   */
  private static @Nullable Field wantsKeys(Statement s) throws SQLException {
    if (!s.isWrapperFor(BaseStatement.class)) {
      return null;
    }
    return WANTS_KEYS.get(s.unwrap(BaseStatement.class).getClass()).orElse(null);
  }

  /** {@code wantsGeneratedKeysAlways} of each statement class, looked up once per class. */
  private static final ClassValue<Optional<Field>> WANTS_KEYS =
      new ClassValue<>() {
        @Override
        protected Optional<Field> computeValue(Class<?> type) {
          try {
            Field f = type.getField("wantsGeneratedKeysAlways");
            return f.getType() == boolean.class ? Optional.of(f) : Optional.empty();
          } catch (NoSuchFieldException | SecurityException e) {
            return Optional.empty();
          }
        }
      };

  /**
   * The SQL texts as pgjdbc runs them asked for keys ({@link #appended}), per columns and settings:
   * each a memo from the caller's SQL to its text with pgjdbc's {@code RETURNING} clause ("" where
   * none), so that an execution builds neither a key nor the text (issue 13: Hibernate's {@code
   * IDENTITY} insert asks in every transaction). Keyed by the only column's name, or by the names
   * after a NUL for several; four memos per key, one per setting of {@code
   * standard_conforming_strings} and {@code quoteReturningIdentifiers}. At most {@link
   * SqlClassifier#MEMO_ENTRIES} keys and at most as many texts in all ({@link #KEPT}), all
   * forgotten when either is full, as {@link TextMemo} does: the bound of the one memo per
   * (columns, settings, text) this replaces, not that bound per column set and setting.
   */
  private static final ConcurrentHashMap<String, List<TextMemo<String>>> APPENDED =
      new ConcurrentHashMap<>();

  // texts computed to be kept by the memos of APPENDED since it was last cleared (a text two
  // threads compute at once counts twice: the bound errs on the small side)
  private static final AtomicInteger KEPT = new AtomicInteger();

  /**
   * The columns a {@code prepareStatement(args)} asks pgjdbc to return, or null if it asks none or
   * in a way not carried: {@code RETURN_GENERATED_KEYS} ({@code *}), or a non-empty array of column
   * names. Column indexes are refused by pgjdbc when the statement is prepared.
   */
  static String @Nullable [] columns(Object[] args) {
    if (args.length != 2) {
      return null;
    }
    if (args[1] instanceof Integer keys && keys == Statement.RETURN_GENERATED_KEYS) {
      return ALL_COLUMNS; // read only, by pgjdbc's parser too: one array for all statements
    }
    if (args[1] instanceof String[] names && names.length > 0) {
      return names.clone();
    }
    return null;
  }

  /**
   * The caller's SQL (of one statement, {@link CarriedCheck#oneStatement}) as pgjdbc runs it for
   * {@code columns}: without its trailing {@code ;}, with pgjdbc's own {@code RETURNING} clause.
   * Null if pgjdbc appends none for it (not an {@code INSERT}, {@code UPDATE}, {@code DELETE}, a
   * {@code RETURNING} already there, ...), if the driver's statement does not return generated
   * keys, or if the clause holds characters that the combined query's parsing could read
   * differently.
   */
  static @Nullable String returning(
      Connection connection, PreparedStatement raw, String sql, String[] columns)
      throws SQLException {
    Field wants = wantsKeys(raw);
    if (wants == null || !get(wants, raw.unwrap(BaseStatement.class))) {
      return null;
    }
    return appended(connection, sql, columns);
  }

  /**
   * {@code sql} (of one statement) as pgjdbc runs it asked for the keys of {@code columns}: without
   * its trailing {@code ;}, with pgjdbc's own {@code RETURNING} clause; null if pgjdbc appends none
   * or one the combined query's parsing could read differently ({@link #returning}).
   */
  static @Nullable String appended(Connection connection, String sql, String[] columns)
      throws SQLException {
    if (!connection.isWrapperFor(BaseConnection.class)) {
      return null;
    }
    BaseConnection base = connection.unwrap(BaseConnection.class);
    boolean scs = base.getStandardConformingStrings();
    boolean quote = base.getQueryExecutor().getQuoteReturningIdentifiers();
    TextMemo<String> memo = memo(scs, quote, columns);
    String text = memo != null ? memo.get(sql) : text(scs, quote, columns, sql);
    return text.isEmpty() ? null : text;
  }

  /**
   * The memo of {@link #text} for these settings and columns; null for a column name with a NUL
   * (which pgjdbc cannot send anyway), which could make two keys equal.
   */
  private static @Nullable TextMemo<String> memo(boolean scs, boolean quote, String[] columns) {
    String key;
    if (columns.length == 1) {
      key = columns[0];
      if (key.indexOf('\0') >= 0) {
        return null;
      }
    } else {
      StringBuilder b = new StringBuilder();
      for (String column : columns) {
        if (column.indexOf('\0') >= 0) {
          return null;
        }
        b.append('\0').append(column);
      }
      key = b.toString();
    }
    List<TextMemo<String>> memos = APPENDED.get(key);
    if (memos == null) {
      synchronized (APPENDED) {
        memos = APPENDED.get(key);
        if (memos == null) {
          if (APPENDED.size() >= SqlClassifier.MEMO_ENTRIES) {
            APPENDED.clear();
            KEPT.set(0);
          }
          memos = newMemos(columns.clone());
          APPENDED.put(key, memos);
        }
      }
    }
    return memos.get((scs ? 2 : 0) + (quote ? 1 : 0));
  }

  /** Forgets every memo: the texts kept reached the bound. */
  private static void forget() {
    synchronized (APPENDED) {
      APPENDED.clear();
      KEPT.set(0);
    }
  }

  /** How many texts the memos keep now, over every column set and setting (for tests). */
  static int kept() {
    int kept = 0;
    for (List<TextMemo<String>> memos : APPENDED.values()) {
      for (TextMemo<String> memo : memos) {
        kept += memo.size();
      }
    }
    return kept;
  }

  /** The four memos of {@code columns}, by settings ({@link #memo}). */
  private static List<TextMemo<String>> newMemos(String[] columns) {
    List<TextMemo<String>> memos = new ArrayList<>(4);
    for (int i = 0; i < 4; i++) {
      boolean scs = i >= 2;
      boolean quote = (i & 1) == 1;
      memos.add(
          new TextMemo<>(
              sql -> {
                if (sql.length() <= SqlClassifier.MEMO_TEXT_LENGTH
                    && KEPT.incrementAndGet() >= SqlClassifier.MEMO_ENTRIES) {
                  forget(); // this text is kept by a memo no longer reachable: one miss more
                }
                return text(scs, quote, columns, sql);
              },
              SqlClassifier.MEMO_ENTRIES,
              SqlClassifier.MEMO_TEXT_LENGTH));
    }
    return List.copyOf(memos);
  }

  /**
   * {@code sql} without its trailing {@code ;} and with pgjdbc's {@code RETURNING} clause for
   * {@code columns} and the settings, or "" if pgjdbc appends none (or one the combined query could
   * read differently).
   */
  private static String text(boolean scs, boolean quote, String[] columns, String sql) {
    String clause = clause(scs, quote, columns, sql);
    if (clause.isEmpty()) {
      return "";
    }
    int end = sql.length();
    while (end > 0 && (sql.charAt(end - 1) == ';' || Character.isWhitespace(sql.charAt(end - 1)))) {
      end--;
    }
    return sql.substring(0, end) + clause;
  }

  /**
   * pgjdbc's {@code RETURNING} clause for {@code sql}, {@code columns} and the settings, or "" if
   * pgjdbc appends none (or one the combined query could read differently).
   */
  private static String clause(boolean scs, boolean quote, String[] columns, String sql) {
    // as pgjdbc prepares it (CachedQueryCreateAction): escapes processed, then parsed and split
    try {
      String processed = Parser.replaceProcessing(sql, true, scs);
      List<NativeQuery> with =
          Parser.parseJdbcSql(processed, scs, true, true, false, quote, columns);
      List<NativeQuery> without = Parser.parseJdbcSql(processed, scs, true, true, false, quote);
      if (with.size() != 1 || without.size() != 1) {
        return "";
      }
      String appended = with.get(0).nativeSql;
      String plain = without.get(0).nativeSql;
      if (appended.length() <= plain.length() || !appended.startsWith(plain)) {
        return ""; // pgjdbc appends nothing
      }
      String clause = appended.substring(plain.length());
      return clause.startsWith("\nRETURNING ") && !unsafe(clause) ? clause : "";
    } catch (SQLException e) {
      return ""; // pgjdbc refuses the text: its own execution says so
    }
  }

  /**
   * Whether {@code clause} (pgjdbc's, appended after its parsing) could mean something else inside
   * the combined query, which pgjdbc parses again: a parameter, an escape, a quote, a comment, a
   * statement's end.
   */
  private static boolean unsafe(String clause) {
    for (int i = 0; i < clause.length(); i++) {
      if ("?{}';$-/\\".indexOf(clause.charAt(i)) >= 0) {
        return true;
      }
    }
    return false;
  }

  /**
   * Makes pgjdbc report every statement of {@code combined} as rows and then its update count, as
   * it reports a statement prepared for generated keys (its first result, the check's row, becomes
   * the statement's "generated keys"). False if the driver's statement is not at hand.
   */
  static boolean rowsAndCounts(Statement combined) throws SQLException {
    return rowsAndCounts(combined, true);
  }

  /**
   * Sets whether pgjdbc reports {@code s}'s statements as rows and then counts ({@link
   * #rowsAndCounts(Statement)}); false if the driver's statement is not at hand.
   */
  static boolean rowsAndCounts(Statement s, boolean on) throws SQLException {
    Field wants = wantsKeys(s);
    if (wants == null) {
      return false;
    }
    try {
      wants.setBoolean(s.unwrap(BaseStatement.class), on);
    } catch (IllegalAccessException e) {
      return false;
    }
    return true;
  }

  private static boolean get(Field f, Object o) {
    try {
      return f.getBoolean(o);
    } catch (IllegalAccessException e) {
      return false;
    }
  }
}
