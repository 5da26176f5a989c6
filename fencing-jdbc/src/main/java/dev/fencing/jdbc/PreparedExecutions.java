package dev.fencing.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * SQL-level {@code EXECUTE name [(arguments)]}: its text names no table, the statement prepared as
 * {@code name} does, and only the connection knows that one. {@link WriteTargets} marks such a text
 * ({@link #MARKER} and the name) and {@link TableGuards#targets(Connection, String)} asks the
 * server for the prepared statement's own text ({@code pg_prepared_statements}, on the same
 * connection, one round trip, only for such a text) and takes that text's targets.
 *
 * <p>Where what runs cannot be known beforehand the text writes every declared table ({@link
 * WriteTargets#UNREAD}): an {@code EXECUTE} after another statement of the same text (which may
 * {@code DEALLOCATE} and {@code PREPARE} the name anew after the lookup), arguments that are more
 * than literals, parameters and signs (a function call, a cast, an operator: user code that runs
 * first), a name that is not a plain or quoted identifier ({@code U&"..."}), a name the connection
 * has not prepared; so does a prepared text that is itself such a text. More targets can only
 * refuse more.
 */
final class PreparedExecutions {
  /** Marks a target as the statement prepared under the name that follows. */
  static final String MARKER = "\u0000execute ";

  // pg_catalog's operator named: no "=" on the search path can answer for it
  private static final String QUERY =
      "SELECT statement FROM pg_catalog.pg_prepared_statements"
          + " WHERE name OPERATOR(pg_catalog.=) ?";

  // EXPLAIN ANALYZE EXECUTE p, EXPLAIN (ANALYZE) EXECUTE p run p
  private static final Set<String> EXPLAIN_OPTIONS =
      Set.of("explain", "analyze", "analyse", "verbose");

  private static final Set<String> ARGUMENT_WORDS = Set.of("null", "true", "false", "default");

  private PreparedExecutions() {}

  /**
   * The word {@code execute} at token {@code t} of a top-level text, whose statement starts at
   * {@code statementStart}: if it is the statement {@code EXECUTE}, adds what it runs to {@code
   * tables} (the marker and the name, or {@link WriteTargets#UNREAD}); a column or alias named
   * {@code execute} adds nothing.
   */
  static void find(String sql, List<int[]> tokens, int t, int statementStart, List<String> tables) {
    if (!startsStatement(sql, tokens, t, statementStart)) {
      return;
    }
    String name = statementStart == 0 ? name(sql, tokens, t + 1) : null;
    if (name == null || !plainArguments(sql, tokens, t + 2)) {
      WriteTargets.unread(tables);
      return;
    }
    String marked = MARKER + name;
    if (!tables.contains(marked)) {
      tables.add(marked);
    }
  }

  /** The name of a target {@link #MARKER} marks; null if {@code target} is not one. */
  static @Nullable String name(String target) {
    return target.startsWith(MARKER) ? target.substring(MARKER.length()) : null;
  }

  /**
   * The server's text of the statement prepared as {@code name} on {@code raw} (for a {@code
   * PREPARE}, the text that prepared it); null if there is none.
   */
  static @Nullable String statement(Connection raw, String name) throws SQLException {
    try (PreparedStatement ps = raw.prepareStatement(QUERY)) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  /**
   * Whether the {@code execute} at {@code t} is the statement: its first word, or after {@code
   * EXPLAIN}'s options, or {@code CREATE TABLE ... AS} (under {@code EXPLAIN} too: {@code EXPLAIN
   * ANALYZE CREATE TABLE x AS EXECUTE p} runs {@code p}).
   */
  private static boolean startsStatement(
      String sql, List<int[]> tokens, int t, int statementStart) {
    if (t == statementStart) {
      return true;
    }
    int[] before = tokens.get(t - 1);
    boolean explain = WriteTargets.isWord(sql, tokens, statementStart, "explain");
    if (WriteTargets.isWord(sql, tokens, t - 1, "as")) {
      return WriteTargets.isWord(sql, tokens, statementStart, "create")
          || (explain && containsWord(sql, tokens, statementStart + 1, t - 1, "create"));
    }
    return explain
        && (before[0] == SqlLexer.RIGHT_PAREN
            || (before[0] == SqlLexer.WORD
                && EXPLAIN_OPTIONS.contains(WriteTargets.word(sql, before))));
  }

  /** Whether a token from {@code from} to before {@code to} is the word {@code keyword}. */
  private static boolean containsWord(
      String sql, List<int[]> tokens, int from, int to, String keyword) {
    for (int i = from; i < to; i++) {
      if (WriteTargets.isWord(sql, tokens, i, keyword)) {
        return true;
      }
    }
    return false;
  }

  /** The prepared statement's name at token {@code t}, as the server stores it; null if unread. */
  private static @Nullable String name(String sql, List<int[]> tokens, int t) {
    if (t >= tokens.size()) {
      return null;
    }
    int[] token = tokens.get(t);
    String name;
    if (token[0] == SqlLexer.WORD) {
      name = WriteTargets.word(sql, token);
    } else if (token[0] == SqlLexer.QUOTED_IDENTIFIER) {
      name = WriteTargets.quotedName(sql, token);
    } else {
      return null;
    }
    return name.isEmpty() ? null : TableGuards.truncated(name);
  }

  /**
   * Whether what follows the name, from token {@code t}, is nothing or {@code (arguments)} of
   * literals, numbers, parameters, signs and {@code NULL}/{@code TRUE}/{@code FALSE}/{@code
   * DEFAULT}, up to the statement's end: nothing of the user's runs before the prepared statement.
   */
  private static boolean plainArguments(String sql, List<int[]> tokens, int t) {
    if (t < tokens.size() && tokens.get(t)[0] == SqlLexer.LEFT_PAREN) {
      for (t++; t < tokens.size() && tokens.get(t)[0] != SqlLexer.RIGHT_PAREN; t++) {
        int[] token = tokens.get(t);
        boolean plain =
            switch (token[0]) {
              case SqlLexer.LITERAL, SqlLexer.NUMBER, SqlLexer.COMMA -> true;
              case SqlLexer.OTHER -> "?-+".indexOf(sql.charAt(token[1])) >= 0;
              case SqlLexer.WORD -> ARGUMENT_WORDS.contains(WriteTargets.word(sql, token));
              default -> false;
            };
        if (!plain) {
          return false;
        }
      }
      if (t >= tokens.size()) {
        return false; // unterminated
      }
      t++;
    }
    return t >= tokens.size() || tokens.get(t)[0] == SqlLexer.SEMICOLON;
  }
}
