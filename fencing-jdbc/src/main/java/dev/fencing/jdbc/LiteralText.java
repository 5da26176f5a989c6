package dev.fencing.jdbc;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What the server reads in a literal or a quoted identifier among {@link SqlLexer}'s tokens (each
 * an {@code int[] {kind, start, end}}): a literal's body with its escapes undone ({@code E'...'},
 * {@code U&'...'} with {@code UESCAPE}, doubled quotes, {@code $tag$...$tag$}), for {@link
 * WriteTargets} to search.
 */
final class LiteralText {
  private LiteralText() {}

  /**
   * Whether token {@code t} (a literal or quoted identifier) is written {@code U&'...'} or {@code
   * U&"..."}: the word {@code U} and {@code &} right before it, with nothing between.
   */
  static boolean isUnicodePrefixed(String sql, List<int[]> tokens, int t) {
    if (t < 2) {
      return false;
    }
    int[] u = tokens.get(t - 2);
    int[] amp = tokens.get(t - 1);
    int start = tokens.get(t)[1];
    return sql.charAt(start) != '$'
        && amp[0] == SqlLexer.OTHER
        && amp[2] == start
        && amp[1] == start - 1
        && sql.charAt(amp[1]) == '&'
        && u[0] == SqlLexer.WORD
        && u[2] == amp[1]
        && u[2] - u[1] == 1
        && (sql.charAt(u[1]) == 'u' || sql.charAt(u[1]) == 'U');
  }

  /** The escape character a {@code UESCAPE 'c'} at token {@code t} names; a backslash without. */
  static char escapeCharacter(String sql, List<int[]> tokens, int t) {
    if (WriteTargets.isWord(sql, tokens, t, "uescape") && t + 1 < tokens.size()) {
      int[] literal = tokens.get(t + 1);
      if (literal[0] == SqlLexer.LITERAL
          && literal[2] - literal[1] == 3
          && sql.charAt(literal[1]) == '\'') {
        return sql.charAt(literal[1] + 1);
      }
    }
    return '\\';
  }

  /**
   * {@code text} with PostgreSQL's Unicode escapes ({@code \XXXX}, {@code \+XXXXXX}, a doubled
   * escape character) replaced by what they stand for; an escape that is not one is kept as it is
   * (the server refuses the statement).
   */
  static String unicodeDecoded(String text, char escape) {
    if (text.indexOf(escape) < 0) {
      return text;
    }
    StringBuilder b = new StringBuilder(text.length());
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c != escape || i + 1 >= text.length()) {
        b.append(c);
      } else if (text.charAt(i + 1) == escape) {
        b.append(escape);
        i++;
      } else if (text.charAt(i + 1) == '+' && hexDigits(text, i + 2, 6) == 6) {
        b.appendCodePoint(Integer.parseInt(text.substring(i + 2, i + 8), 16));
        i += 7;
      } else if (hexDigits(text, i + 1, 4) == 4) {
        b.append((char) Integer.parseInt(text.substring(i + 1, i + 5), 16));
        i += 4;
      } else {
        b.append(c);
      }
    }
    return b.toString();
  }

  /** How many hexadecimal digits (at most {@code max}) {@code text} has from {@code from}. */
  private static int hexDigits(String text, int from, int max) {
    int n = 0;
    while (n < max && from + n < text.length() && Character.digit(text.charAt(from + n), 16) >= 0) {
      n++;
    }
    return n;
  }

  /**
   * The text inside a literal token: {@code '...'} with doubled quotes undone, {@code E'...'} (and
   * {@code '...'} if {@code escapes}) with its quote and backslash escapes undone, the body of
   * {@code $tag$...$tag$}; null if it is not terminated.
   */
  static @Nullable String body(String sql, int start, int end, boolean escapes) {
    char first = sql.charAt(start);
    if (first == '$') {
      int tagEnd = sql.indexOf('$', start + 1);
      int bodyEnd = end - (tagEnd + 1 - start);
      return bodyEnd < tagEnd + 1 ? null : sql.substring(tagEnd + 1, bodyEnd);
    }
    boolean prefixed = first == 'e' || first == 'E';
    boolean escaped = prefixed || escapes;
    int open = prefixed ? start + 1 : start;
    if (end - open < 2 || sql.charAt(end - 1) != '\'') {
      return null;
    }
    String body = sql.substring(open + 1, end - 1);
    if (!escaped) {
      return body.replace("''", "'");
    }
    // as the server reads E'...': \b \f \n \r \t, octal \ooo, \xhh, \\uXXXX, \\UXXXXXXXX, else
    // the character itself; '' is a quote
    StringBuilder b = new StringBuilder(body.length());
    for (int i = 0; i < body.length(); i++) {
      char c = body.charAt(i);
      if (c == '\'' && i + 1 < body.length()) {
        b.append(body.charAt(++i));
      } else if (c != '\\' || i + 1 >= body.length()) {
        b.append(c);
      } else {
        char e = body.charAt(++i);
        int n;
        switch (e) {
          case 'b' -> b.append('\b');
          case 'f' -> b.append('\f');
          case 'n' -> b.append('\n');
          case 'r' -> b.append('\r');
          case 't' -> b.append('\t');
          case 'x' -> {
            n = hexDigits(body, i + 1, 2);
            if (n == 0) {
              b.append(e);
            } else {
              b.append((char) Integer.parseInt(body.substring(i + 1, i + 1 + n), 16));
              i += n;
            }
          }
          case 'u', 'U' -> {
            int want = e == 'u' ? 4 : 8;
            if (hexDigits(body, i + 1, want) == want) {
              b.appendCodePoint(
                  Math.min(
                      Character.MAX_CODE_POINT,
                      (int) Long.parseLong(body.substring(i + 1, i + 1 + want), 16)));
              i += want;
            } else {
              b.append(e);
            }
          }
          default -> {
            if (e >= '0' && e <= '7') {
              n = 1;
              while (n < 3
                  && i + n < body.length()
                  && body.charAt(i + n) >= '0'
                  && body.charAt(i + n) <= '7') {
                n++;
              }
              b.append((char) (Integer.parseInt(body.substring(i, i + n), 8) & 0xFF));
              i += n - 1;
            } else {
              b.append(e);
            }
          }
        }
      }
    }
    return b.toString();
  }
}
