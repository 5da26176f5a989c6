package dev.fencing.jdbc;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The tables a SQL text names as the target of a write, found with {@link SqlLexer}: comments
 * anywhere between the keywords and the name (a block comment between {@code UPDATE} and the table,
 * a line comment between {@code DELETE} and {@code FROM}, nested block comments) count as the
 * spaces they are, a name may be quoted or schema-qualified, each part on its own ({@code s .
 * "T"}), and every table of a {@code TRUNCATE} list counts. The contents of string literals are
 * searched too (a {@code DO} body or an {@code EXECUTE} string writes what it names), to a bounded
 * depth of literals within literals.
 *
 * <p>{@link TableGuards#writtenTables} merges these targets into its own lexical search: a table
 * counts as often as the more generous of the two finds it (more targets can only refuse more).
 */
final class WriteTargets {
  // A literal within a literal within ...: DO $$ ... EXECUTE 'UPDATE t ...' $$ is depth 2.
  private static final int MAX_DEPTH = 4;

  private WriteTargets() {}

  /**
   * {@code found} (the targets the caller found) with each table this lexer finds more often added
   * as many times more, after them; immutable.
   */
  static List<String> withLexed(String sql, List<String> found) {
    List<String> lexed = find(sql);
    List<String> merged = null;
    for (int i = 0; i < lexed.size(); i++) {
      String table = lexed.get(i);
      if (lexed.indexOf(table) != i) {
        continue; // counted at its first occurrence
      }
      int more = count(lexed, table) - count(found, table);
      for (int k = 0; k < more; k++) {
        if (merged == null) {
          merged = new ArrayList<>(found);
        }
        merged.add(table);
      }
    }
    return List.copyOf(merged == null ? found : merged);
  }

  /**
   * The targets of {@code sql}, normalised as {@link TableGuards} declares tables (no schema or
   * quotes; lower case unless quoted), in order, once per naming.
   */
  static List<String> find(String sql) {
    List<String> tables = new ArrayList<>(2);
    SqlLexer standard = new SqlLexer(sql, false);
    search(sql, standard, 0, tables);
    if (standard.sawBackslashInPlainLiteral()) {
      // standard_conforming_strings is unknown here: a backslash may move a literal's end, so
      // either reading may be the server's; a table counts as often as the readings' maximum
      List<String> escaped = new ArrayList<>(2);
      search(sql, new SqlLexer(sql, true), 0, escaped);
      return withLexedCounts(tables, escaped);
    }
    return tables;
  }

  private static List<String> withLexedCounts(List<String> one, List<String> other) {
    List<String> merged = new ArrayList<>(one);
    for (int i = 0; i < other.size(); i++) {
      String table = other.get(i);
      if (other.indexOf(table) == i) {
        for (int k = count(other, table) - count(one, table); k > 0; k--) {
          merged.add(table);
        }
      }
    }
    return merged;
  }

  private static int count(List<String> tables, String table) {
    int n = 0;
    for (int i = 0; i < tables.size(); i++) {
      if (tables.get(i).equals(table)) {
        n++;
      }
    }
    return n;
  }

  /** Lexes all of {@code sql}, then finds the targets among its tokens. */
  private static void search(String sql, SqlLexer lexer, int depth, List<String> tables) {
    List<int[]> tokens = new ArrayList<>();
    for (int kind = lexer.next(); kind != SqlLexer.END; kind = lexer.next()) {
      tokens.add(new int[] {kind, lexer.tokenStart(), lexer.tokenEnd()});
    }
    for (int t = 0; t < tokens.size(); t++) {
      int[] token = tokens.get(t);
      if (token[0] == SqlLexer.LITERAL) {
        if (depth < MAX_DEPTH) {
          String body = literalBody(sql, token[1], token[2]);
          if (body != null) {
            search(body, new SqlLexer(body, false), depth + 1, tables);
          }
        }
        continue;
      }
      if (token[0] != SqlLexer.WORD) {
        continue;
      }
      switch (word(sql, token)) {
        case "update" -> name(sql, tokens, t + 1, tables);
        case "delete" -> {
          if (isWord(sql, tokens, t + 1, "from")) {
            name(sql, tokens, t + 2, tables);
          }
        }
        case "insert", "merge" -> {
          if (isWord(sql, tokens, t + 1, "into")) {
            name(sql, tokens, t + 2, tables);
          }
        }
        case "truncate" -> {
          int n = isWord(sql, tokens, t + 1, "table") ? t + 2 : t + 1;
          while (true) {
            n = name(sql, tokens, n, tables);
            if (n < 0) {
              break;
            }
            if (n < tokens.size()
                && tokens.get(n)[0] == SqlLexer.OTHER
                && textIs(sql, tokens.get(n), "*")) {
              n++;
            }
            if (n >= tokens.size() || tokens.get(n)[0] != SqlLexer.COMMA) {
              break;
            }
            n++;
          }
        }
        case "copy" -> name(sql, tokens, t + 1, tables);
        default -> {}
      }
    }
  }

  /**
   * Reads {@code [ONLY] name [. name ...]} at token {@code t}, adding its last part to {@code
   * tables}; the token after it, or -1 if there is no name there.
   */
  private static int name(String sql, List<int[]> tokens, int t, List<String> tables) {
    if (isWord(sql, tokens, t, "only")) {
      t++;
    }
    String last = null;
    while (t < tokens.size()) {
      int[] token = tokens.get(t);
      if (token[0] == SqlLexer.WORD) {
        last = word(sql, token).toLowerCase(Locale.ROOT);
      } else if (token[0] == SqlLexer.QUOTED_IDENTIFIER) {
        last =
            sql.substring(token[1] + 1, Math.max(token[1] + 1, token[2] - 1)).replace("\"\"", "\"");
      } else {
        break;
      }
      t++;
      if (t < tokens.size() && tokens.get(t)[0] == SqlLexer.DOT) {
        t++;
      } else {
        break;
      }
    }
    if (last == null) {
      return -1;
    }
    tables.add(last);
    return t;
  }

  private static boolean isWord(String sql, List<int[]> tokens, int t, String keyword) {
    return t < tokens.size()
        && tokens.get(t)[0] == SqlLexer.WORD
        && word(sql, tokens.get(t)).equals(keyword);
  }

  private static boolean textIs(String sql, int[] token, String text) {
    return sql.substring(token[1], token[2]).equals(text);
  }

  /** The word folded to ASCII lower case, as a keyword is matched. */
  private static String word(String sql, int[] token) {
    char[] chars = new char[token[2] - token[1]];
    for (int k = 0; k < chars.length; k++) {
      char c = sql.charAt(token[1] + k);
      chars[k] = c >= 'A' && c <= 'Z' ? (char) (c + ('a' - 'A')) : c;
    }
    return new String(chars);
  }

  /**
   * The text inside a literal token: {@code '...'} with doubled quotes undone, {@code E'...'} with
   * its quote and backslash escapes undone, the body of {@code $tag$...$tag$}; null if it is not
   * terminated.
   */
  private static String literalBody(String sql, int start, int end) {
    char first = sql.charAt(start);
    if (first == '$') {
      int tagEnd = sql.indexOf('$', start + 1);
      int bodyEnd = end - (tagEnd + 1 - start);
      return bodyEnd < tagEnd + 1 ? null : sql.substring(tagEnd + 1, bodyEnd);
    }
    boolean escaped = first == 'e' || first == 'E';
    int open = escaped ? start + 1 : start;
    if (end - open < 2 || sql.charAt(end - 1) != '\'') {
      return null;
    }
    String body = sql.substring(open + 1, end - 1);
    if (!escaped) {
      return body.replace("''", "'");
    }
    StringBuilder b = new StringBuilder(body.length());
    for (int i = 0; i < body.length(); i++) {
      char c = body.charAt(i);
      if ((c == '\\' || c == '\'') && i + 1 < body.length()) {
        b.append(body.charAt(++i));
      } else {
        b.append(c);
      }
    }
    return b.toString();
  }
}
