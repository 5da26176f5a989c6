package dev.fencing.jdbc;

import static dev.fencing.jdbc.SqlLexer.LEFT_PAREN;
import static dev.fencing.jdbc.SqlLexer.RIGHT_PAREN;
import static dev.fencing.jdbc.SqlLexer.WORD;

import java.util.Arrays;

/**
 * The tokens of one statement: their kinds ({@link SqlLexer}), their ranges of the SQL text and,
 * once {@link #matchParentheses()} has run, the partner of each parenthesis.
 */
final class SqlTokens {
  private final String sql;

  // match[i] is the partner of the parenthesis at i.
  private int count;
  private int[] kinds = new int[32];
  private int[] starts = new int[32];
  private int[] ends = new int[32];
  private int[] match = new int[32];

  /** Tokens of {@code sql}. */
  SqlTokens(String sql) {
    this.sql = sql;
  }

  int count() {
    return count;
  }

  /** Forgets the tokens, for the next statement. */
  void clear() {
    count = 0;
  }

  int kind(int t) {
    return kinds[t];
  }

  /** The partner of the parenthesis at {@code t}, after {@link #matchParentheses()}. */
  int partner(int t) {
    return match[t];
  }

  /** Appends the token of {@code kind} at [start, end). */
  void add(int kind, int start, int end) {
    if (count == kinds.length) {
      int grown = count * 2;
      kinds = Arrays.copyOf(kinds, grown);
      starts = Arrays.copyOf(starts, grown);
      ends = Arrays.copyOf(ends, grown);
      match = Arrays.copyOf(match, grown);
    }
    kinds[count] = kind;
    starts[count] = start;
    ends[count] = end;
    count++;
  }

  /** Pairs the parentheses; whether they balance. */
  boolean matchParentheses() {
    // The open parentheses form a stack threaded through match[] itself.
    int top = -1;
    for (int t = 0; t < count; t++) {
      if (kinds[t] == LEFT_PAREN) {
        match[t] = top;
        top = t;
      } else if (kinds[t] == RIGHT_PAREN) {
        if (top < 0) {
          return false;
        }
        int open = top;
        top = match[open];
        match[open] = t;
        match[t] = open;
      }
    }
    return top < 0;
  }

  /** Whether token {@code t} is the word {@code keyword} (lower case), in any case. */
  boolean is(int t, String keyword) {
    int start = starts[t];
    int n = ends[t] - start;
    if (kinds[t] != WORD || n != keyword.length()) {
      return false;
    }
    for (int k = 0; k < n; k++) {
      if (asciiLower(sql.charAt(start + k)) != keyword.charAt(k)) {
        return false;
      }
    }
    return true;
  }

  boolean textIs(int t, String text) {
    return ends[t] - starts[t] == text.length()
        && sql.regionMatches(starts[t], text, 0, text.length());
  }

  /** The word at {@code t} folded as PostgreSQL folds unquoted names: ASCII letters only. */
  String lower(int t) {
    char[] chars = new char[ends[t] - starts[t]];
    for (int k = 0; k < chars.length; k++) {
      chars[k] = asciiLower(sql.charAt(starts[t] + k));
    }
    return new String(chars);
  }

  private static char asciiLower(char c) {
    return c >= 'A' && c <= 'Z' ? (char) (c + ('a' - 'A')) : c;
  }
}
