package dev.fencing.jdbc;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The tables a SQL text names as the target of a write, found with {@link SqlLexer}: comments
 * anywhere between the keywords and the name (a block comment between {@code UPDATE} and the table,
 * a line comment between {@code DELETE} and {@code FROM}, nested block comments) count as the
 * spaces they are, a name may be quoted or schema-qualified, each part on its own ({@code s .
 * "T"}), and every table of a {@code TRUNCATE} list counts. The contents of string literals are
 * searched too (a {@code DO} body or an {@code EXECUTE} string writes what it names), to a bounded
 * depth of literals within literals.
 *
 * <p>These are {@link TableGuards}' only targets. What a comment or a quoted name holds is not one;
 * where the text's reading is uncertain (a backslash in a plain literal) both readings count, and a
 * literal nested deeper than the search reads makes every declared table a target: more targets can
 * only refuse more. So does text run that cannot be read here: in a body, a PL/pgSQL {@code
 * EXECUTE} of anything but one literal ({@code format(...)}, a concatenation, a variable), and a
 * {@code format} placeholder ({@code %I}, {@code %s}) where a written table's name stands. A
 * top-level {@code EXECUTE name} is marked for {@link PreparedExecutions}: what it writes is the
 * statement the connection prepared under that name.
 */
final class WriteTargets {
  // A literal within a literal within ...: DO $$ ... EXECUTE 'UPDATE t ...' $$ is depth 2.
  private static final int MAX_DEPTH = 4;

  /**
   * The target of a text holding a literal nested deeper than the search reads: every declared
   * table. No table is named so: PostgreSQL names hold no NUL, and declarations refuse one.
   */
  static final String UNREAD = "\u0000unread";

  // How many texts were searched: the memos' misses (tests).
  private static final AtomicLong SEARCHES = new AtomicLong();

  private WriteTargets() {}

  /** How many texts {@link #find} has searched. */
  static long searches() {
    return SEARCHES.get();
  }

  /**
   * The targets of {@code sql}, normalised as {@link TableGuards} declares tables (no schema or
   * quotes; lower case unless quoted), in order, once per naming; {@link #UNREAD} once if some text
   * it runs cannot be read (a literal nested too deep, a dynamic {@code EXECUTE}, a {@code format}
   * placeholder); {@link PreparedExecutions#MARKER} and the name for an {@code EXECUTE} of a
   * prepared statement.
   */
  static List<String> find(String sql) {
    SEARCHES.incrementAndGet();
    List<String> tables = new ArrayList<>(2);
    boolean[] sawBackslash = {false};
    search(sql, false, 0, tables, sawBackslash);
    if (sawBackslash[0]) {
      // standard_conforming_strings is unknown here: a backslash may move a literal's end, at any
      // depth (the setting holds for every body the server executes), so either reading may be the
      // server's; a table counts as often as the readings' maximum
      List<String> escaped = new ArrayList<>(2);
      search(sql, true, 0, escaped, sawBackslash);
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

  /**
   * Lexes all of {@code sql} ({@code escapes}: a backslash escapes in a plain literal), then finds
   * the targets among its tokens and in the literals' bodies.
   */
  private static void search(
      String sql, boolean escapes, int depth, List<String> tables, boolean[] sawBackslash) {
    SqlLexer lexer = new SqlLexer(sql, escapes);
    List<int[]> tokens = new ArrayList<>();
    for (int kind = lexer.next(); kind != SqlLexer.END; kind = lexer.next()) {
      tokens.add(new int[] {kind, lexer.tokenStart(), lexer.tokenEnd()});
    }
    sawBackslash[0] |= lexer.sawBackslashInPlainLiteral();
    int statementStart = 0;
    for (int t = 0; t < tokens.size(); t++) {
      int[] token = tokens.get(t);
      if (token[0] == SqlLexer.SEMICOLON) {
        statementStart = t + 1;
        continue;
      }
      if (token[0] == SqlLexer.LITERAL) {
        String body = LiteralText.body(sql, token[1], token[2], escapes);
        // 'a'<newline>'b' is the one literal 'ab' (continued as E'...' if it opened so): read the
        // run whole, as a keyword or name split across its parts is the server's
        boolean prefixed = sql.charAt(token[1]) == 'e' || sql.charAt(token[1]) == 'E';
        int first = t;
        while (body != null && sql.charAt(token[1]) != '$' && isContinuation(sql, tokens, t + 1)) {
          int[] part = tokens.get(++t);
          String more = LiteralText.body(sql, part[1], part[2], escapes || prefixed);
          body = more == null ? null : body + more;
        }
        if (body != null && LiteralText.isUnicodePrefixed(sql, tokens, first)) {
          body = LiteralText.unicodeDecoded(body, LiteralText.escapeCharacter(sql, tokens, t + 1));
        }
        if (body == null) {
          continue;
        }
        if (depth < MAX_DEPTH) {
          search(body, escapes, depth + 1, tables, sawBackslash);
        } else {
          unread(tables); // may write anything: every declared table is a target
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
        case "execute" -> {
          if (depth == 0) {
            PreparedExecutions.find(sql, tokens, t, statementStart, tables);
          } else {
            dynamic(sql, tokens, t, statementStart, tables);
          }
        }
        default -> {}
      }
    }
  }

  // The words after which PL/pgSQL's EXECUTE starts a statement, or an OPEN/FOR/RETURN QUERY's
  // dynamic part: BEGIN EXECUTE, THEN EXECUTE, FOR r IN EXECUTE, RETURN QUERY EXECUTE, ...
  private static final Set<String> BEFORE_DYNAMIC =
      Set.of("begin", "then", "else", "loop", "in", "query", "for");

  // What may follow the literal of EXECUTE '...' (nothing else computes the string).
  private static final Set<String> AFTER_DYNAMIC_LITERAL = Set.of("using", "into", "loop");

  /**
   * In a body (a literal: PL/pgSQL), {@code EXECUTE} at token {@code t}: if it runs a string that
   * is not one literal ({@code format(...)}, {@code 'UPDATE ' || t}, a variable), the text it runs
   * cannot be read here, and the body writes every declared table. A literal is searched as any
   * literal is; a word {@code execute} that starts no statement (a column's name) is no {@code
   * EXECUTE}.
   */
  private static void dynamic(
      String sql, List<int[]> tokens, int t, int statementStart, List<String> tables) {
    if (t != statementStart
        && !(tokens.get(t - 1)[0] == SqlLexer.WORD
            && BEFORE_DYNAMIC.contains(word(sql, tokens.get(t - 1))))) {
      return;
    }
    int n = t + 1;
    if (n < tokens.size() && tokens.get(n)[0] == SqlLexer.LITERAL) {
      n++;
      while (isContinuation(sql, tokens, n)) {
        n++;
      }
      if (n >= tokens.size()
          || tokens.get(n)[0] == SqlLexer.SEMICOLON
          || (tokens.get(n)[0] == SqlLexer.WORD
              && AFTER_DYNAMIC_LITERAL.contains(word(sql, tokens.get(n))))) {
        return; // one literal: searched where the loop reaches it
      }
    }
    unread(tables);
  }

  /** Adds {@link #UNREAD} (once): every declared table is a target. */
  static void unread(List<String> tables) {
    if (!tables.contains(UNREAD)) {
      tables.add(UNREAD);
    }
  }

  /** Whether token {@code t} is a {@code %} (a {@code format} placeholder's start). */
  private static boolean isPlaceholder(String sql, List<int[]> tokens, int t) {
    return t < tokens.size()
        && tokens.get(t)[0] == SqlLexer.OTHER
        && sql.charAt(tokens.get(t)[1]) == '%';
  }

  /**
   * Whether token {@code t} is a plain literal {@code '...'} right after a literal with nothing but
   * white space and comments between: the server continues the literal when a newline is among them
   * (and refuses the text otherwise, so reading it as continued can only find more).
   */
  private static boolean isContinuation(String sql, List<int[]> tokens, int t) {
    return t < tokens.size()
        && tokens.get(t)[0] == SqlLexer.LITERAL
        && sql.charAt(tokens.get(t)[1]) == '\''
        && tokens.get(t - 1)[0] == SqlLexer.LITERAL;
  }

  /**
   * Reads {@code [ONLY] name [. name ...]} at token {@code t}, adding its last part to {@code
   * tables} ({@link #UNREAD} too where a {@code format} placeholder stands in or next to it); the
   * token after it, or -1 if there is no name there.
   */
  private static int name(String sql, List<int[]> tokens, int t, List<String> tables) {
    boolean parenthesised = false;
    if (isWord(sql, tokens, t, "only")) {
      t++;
      if (t < tokens.size() && tokens.get(t)[0] == SqlLexer.LEFT_PAREN) {
        parenthesised = true; // ONLY (t)
        t++;
      }
    }
    String last = null;
    while (t < tokens.size()) {
      int[] token = tokens.get(t);
      if (token[0] == SqlLexer.QUOTED_IDENTIFIER) {
        last = quotedName(sql, token);
      } else if (token[0] == SqlLexer.WORD
          && t + 2 < tokens.size()
          && tokens.get(t + 2)[0] == SqlLexer.QUOTED_IDENTIFIER
          && LiteralText.isUnicodePrefixed(sql, tokens, t + 2)) {
        // U&"..." [UESCAPE 'c']: the name is what its escapes stand for
        t += 2;
        last =
            LiteralText.unicodeDecoded(
                quotedName(sql, tokens.get(t)), LiteralText.escapeCharacter(sql, tokens, t + 1));
        if (isWord(sql, tokens, t + 1, "uescape")) {
          t += 2;
        }
      } else if (token[0] == SqlLexer.WORD) {
        last = word(sql, token); // ASCII letters folded, as a UTF-8 database folds (see matchKey)
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
    if (isPlaceholder(sql, tokens, t) || (last != null && last.indexOf('%') >= 0)) {
      // UPDATE %I, UPDATE s.%I, UPDATE t_%s, UPDATE "%s": a format string, its table filled in
      // later; what it will be cannot be read here
      unread(tables);
    }
    if (last == null) {
      return -1;
    }
    tables.add(last);
    if (parenthesised && t < tokens.size() && tokens.get(t)[0] == SqlLexer.RIGHT_PAREN) {
      t++;
    }
    return t;
  }

  static String quotedName(String sql, int[] token) {
    return sql.substring(token[1] + 1, Math.max(token[1] + 1, token[2] - 1)).replace("\"\"", "\"");
  }

  static boolean isWord(String sql, List<int[]> tokens, int t, String keyword) {
    return t < tokens.size()
        && tokens.get(t)[0] == SqlLexer.WORD
        && word(sql, tokens.get(t)).equals(keyword);
  }

  private static boolean textIs(String sql, int[] token, String text) {
    return sql.substring(token[1], token[2]).equals(text);
  }

  /** The word folded to ASCII lower case, as a keyword is matched. */
  static String word(String sql, int[] token) {
    return asciiLowerCase(sql.substring(token[1], token[2]));
  }

  /** {@code text} with its ASCII letters in lower case, and its other characters as they are. */
  static String asciiLowerCase(String text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c >= 'A' && c <= 'Z') {
        char[] chars = text.toCharArray();
        for (int k = i; k < chars.length; k++) {
          if (chars[k] >= 'A' && chars[k] <= 'Z') {
            chars[k] = (char) (chars[k] + ('a' - 'A'));
          }
        }
        return new String(chars);
      }
    }
    return text;
  }
}
