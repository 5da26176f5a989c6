package dev.fencing.jdbc;

import static dev.fencing.jdbc.SqlClassifier.ENDS_TRANSACTION;
import static dev.fencing.jdbc.SqlClassifier.MAY_WRITE;
import static dev.fencing.jdbc.SqlClassifier.NON_ATOMIC;
import static dev.fencing.jdbc.SqlClassifier.OUTSIDE_TRANSACTION;
import static dev.fencing.jdbc.SqlClassifier.ROLLS_BACK_TO_SAVEPOINT;
import static dev.fencing.jdbc.SqlLexer.COMMA;
import static dev.fencing.jdbc.SqlLexer.DOT;
import static dev.fencing.jdbc.SqlLexer.DOUBLE_COLON;
import static dev.fencing.jdbc.SqlLexer.LEFT_PAREN;
import static dev.fencing.jdbc.SqlLexer.NUMBER;
import static dev.fencing.jdbc.SqlLexer.OTHER;
import static dev.fencing.jdbc.SqlLexer.QUOTED_IDENTIFIER;
import static dev.fencing.jdbc.SqlLexer.RIGHT_PAREN;
import static dev.fencing.jdbc.SqlLexer.WORD;
import static dev.fencing.jdbc.SqlWords.READ_ONLY_FUNCTIONS;
import static dev.fencing.jdbc.SqlWords.SYNTAX_WORDS;

/**
 * The tokens of one statement, as {@link SqlLexer} finds them, and what they decide: whether the
 * statement may write, and whether it ends the transaction or rolls back to a savepoint (the rules
 * are on {@link SqlClassifier}). One instance is reused for the statements of one string: {@link
 * #add} the tokens, {@link #classify()}, then {@link #clear()}.
 */
final class SqlStatement {

  /**
   * Tokens kept after the first word of a statement that the first word decides: enough for {@code
   * ROLLBACK TRANSACTION TO} and {@code PREPARE TRANSACTION}.
   */
  private static final int KEPT_AFTER_FIRST_WORD = 4;

  /** Bounds the recursion into explained, declared and copied statements. */
  private static final int MAX_NESTING = 8;

  private final SqlTokens tokens;

  // The first token that is not a parenthesis, and whether the statement keeps all its tokens.
  private int first = -1;
  private boolean keepAll;

  /** A statement of {@code sql}, whose tokens are ranges of it. */
  SqlStatement(String sql) {
    this.tokens = new SqlTokens(sql);
  }

  /**
   * Adds the token of {@code kind} at [start, end). Statements that their first word decides keep
   * only their first tokens.
   */
  void add(int kind, int start, int end) {
    if (first < 0) {
      tokens.add(kind, start, end);
      if (kind != LEFT_PAREN) {
        first = tokens.count() - 1;
        keepAll = kind == WORD && needsAllTokens(first);
      }
    } else if (keepAll || tokens.count() < first + 1 + KEPT_AFTER_FIRST_WORD) {
      tokens.add(kind, start, end);
    }
  }

  boolean isEmpty() {
    return tokens.count() == 0;
  }

  /** Forgets the tokens, for the next statement. */
  void clear() {
    tokens.clear();
    first = -1;
    keepAll = false;
  }

  /**
   * The statement's bits: {@link SqlClassifier#MAY_WRITE}, {@link SqlClassifier#ENDS_TRANSACTION},
   * {@link SqlClassifier#ROLLS_BACK_TO_SAVEPOINT}, {@link SqlClassifier#OUTSIDE_TRANSACTION},
   * {@link SqlClassifier#NON_ATOMIC}.
   */
  int classify() {
    int bits = first >= 0 && tokens.kind(first) == WORD ? transactionBits() : 0;
    if (nonAtomic()) {
      bits |= NON_ATOMIC;
    }
    boolean write = (keepAll && !tokens.matchParentheses()) || mayWrite(0, tokens.count(), 0);
    if (write && first == 0 && !keepAll && outsideTransaction()) {
      bits |= OUTSIDE_TRANSACTION;
    }
    return write ? bits | MAY_WRITE : bits;
  }

  /**
   * Whether PostgreSQL refuses this statement inside a transaction block and it runs no user code
   * (the commands listed on {@link SqlClassifier}), as far as its first words tell. Commands that
   * evaluate index expressions or predicates ({@code CREATE INDEX CONCURRENTLY}, {@code REINDEX},
   * {@code CLUSTER}, {@code VACUUM} in every form: a plain one summarizes BRIN block ranges, {@code
   * FULL} rebuilds indexes, {@code ANALYZE} samples them) or fire event triggers ({@code DROP INDEX
   * CONCURRENTLY}, subscriptions) can write table rows through them, so they are not listed: their
   * check must share their transaction, which PostgreSQL refuses (25001).
   */
  private boolean outsideTransaction() {
    switch (tokens.lower(0)) {
      case "create":
      case "drop":
        return word(1, "database") || word(1, "tablespace");
      case "alter":
        return word(1, "system") || word(1, "database") && word(3, "set") && word(4, "tablespace");
      default:
        return false;
    }
  }

  /**
   * Whether the statement is {@code CALL} or {@code DO}, which PostgreSQL runs non-atomically at
   * the top level outside a transaction block (the procedure or block may commit inside itself), or
   * starts with a JDBC escape (<code>{call ...}</code>, which pgjdbc may send as {@code CALL}).
   */
  private boolean nonAtomic() {
    if (first < 0) {
      return false;
    }
    return tokens.kind(first) == WORD
        ? tokens.is(first, "call") || tokens.is(first, "do")
        : tokens.kind(first) == OTHER && tokens.textIs(first, "{");
  }

  /** Whether token {@code t} is there and is the word {@code keyword}. */
  private boolean word(int t, String keyword) {
    return t < tokens.count() && tokens.is(t, keyword);
  }

  private boolean needsAllTokens(int t) {
    return tokens.is(t, "select")
        || tokens.is(t, "with")
        || tokens.is(t, "values")
        || tokens.is(t, "table")
        || tokens.is(t, "explain")
        || tokens.is(t, "declare")
        || tokens.is(t, "copy");
  }

  private int transactionBits() {
    if (tokens.is(first, "commit") || tokens.is(first, "end") || tokens.is(first, "abort")) {
      return ENDS_TRANSACTION;
    }
    if (tokens.is(first, "rollback")) {
      int next = first + 1;
      if (next < tokens.count() && (tokens.is(next, "work") || tokens.is(next, "transaction"))) {
        next++;
      }
      return next < tokens.count() && tokens.is(next, "to")
          ? ROLLS_BACK_TO_SAVEPOINT
          : ENDS_TRANSACTION;
    }
    if (tokens.is(first, "prepare")
        && first + 1 < tokens.count()
        && tokens.is(first + 1, "transaction")) {
      return ENDS_TRANSACTION;
    }
    return 0;
  }

  /** Whether the statement in tokens [from, to) may write. */
  private boolean mayWrite(int from, int to, int nesting) {
    if (nesting > MAX_NESTING) {
      return true;
    }
    int f = from;
    while (f < to && tokens.kind(f) == LEFT_PAREN) {
      f++;
    }
    if (f == to) {
      return f > from;
    }
    if (tokens.kind(f) != WORD) {
      return true;
    }
    switch (tokens.lower(f)) {
      case "select", "with", "values", "table":
        return queryMayWrite(from, to);
      case "explain":
        return explainMayWrite(f + 1, to, nesting);
      case "declare":
        return declareMayWrite(f + 1, to, nesting);
      case "copy":
        return copyMayWrite(f + 1, to, nesting);
      case "show",
      "fetch",
      "move",
      "close",
      "begin",
      "start",
      "commit",
      "end",
      "rollback",
      "abort",
      "savepoint",
      "release",
      "set",
      "reset",
      "discard",
      "deallocate",
      "listen",
      "unlisten":
        return false;
      default:
        return true;
    }
  }

  private boolean queryMayWrite(int from, int to) {
    for (int t = from; t < to; t++) {
      int kind = tokens.kind(t);
      if (kind == WORD) {
        if (tokens.is(t, "insert")
            || tokens.is(t, "update")
            || tokens.is(t, "delete")
            || tokens.is(t, "merge")
            || tokens.is(t, "into")) {
          return true;
        }
        if (tokens.is(t, "for")
            && t + 1 < to
            && (tokens.is(t + 1, "share") || tokens.is(t + 1, "key") || tokens.is(t + 1, "no"))) {
          return true;
        }
      }
      if ((kind == WORD || kind == QUOTED_IDENTIFIER)
          && t + 1 < to
          && tokens.kind(t + 1) == LEFT_PAREN
          && callsUnknownFunction(t, from, to)) {
        return true;
      }
    }
    return false;
  }

  /** Whether the name at {@code t}, followed by a parenthesis, calls a function that may write. */
  private boolean callsUnknownFunction(int t, int from, int to) {
    int nameStart = t;
    while (nameStart - 2 >= from
        && tokens.kind(nameStart - 1) == DOT
        && (tokens.kind(nameStart - 2) == WORD
            || tokens.kind(nameStart - 2) == QUOTED_IDENTIFIER)) {
      nameStart -= 2;
    }
    int before = nameStart - 1;
    if (before >= from) {
      // Not calls: a type modifier (x::numeric(10, 2), CAST(x AS varchar(3))), an alias with
      // column names (AS g(i), or without AS after a call or subquery: unnest(a) u(x)), and a
      // CTE's column names (WITH t(n) AS (SELECT ...)).
      if (tokens.kind(before) == DOUBLE_COLON || tokens.is(before, "as")) {
        return false;
      }
      if (tokens.kind(before) == RIGHT_PAREN && nameStart == t && isNameList(t + 1)) {
        return false;
      }
      if ((tokens.kind(before) == COMMA
              || tokens.is(before, "with")
              || tokens.is(before, "recursive"))
          && nameStart == t
          && isCteColumnList(t, to)) {
        return false;
      }
    }
    if (nameStart < t) {
      // Only pg_catalog is known; any other schema may hold anything.
      return nameStart != t - 2
          || !tokens.is(nameStart, "pg_catalog")
          || tokens.kind(t) != WORD
          || !READ_ONLY_FUNCTIONS.contains(tokens.lower(t));
    }
    if (tokens.kind(t) != WORD) {
      return true;
    }
    String name = tokens.lower(t);
    if (READ_ONLY_FUNCTIONS.contains(name) || SYNTAX_WORDS.contains(name)) {
      return false;
    }
    return before < from || !isGroupingWord(name, before);
  }

  /**
   * GROUP BY (a, b), GROUP BY ROLLUP (a), GROUPING SETS ((a), (b)): these words are unreserved, so
   * a function may have their name; trust them only where the grammar puts them.
   */
  private boolean isGroupingWord(String name, int before) {
    switch (name) {
      case "by":
        return tokens.is(before, "group")
            || tokens.is(before, "order")
            || tokens.is(before, "partition");
      case "rollup", "cube":
        return tokens.is(before, "by");
      case "sets":
        return tokens.is(before, "grouping");
      default:
        return false;
    }
  }

  /** Whether the parenthesis at {@code open} holds only a list of names: (a, "b", c). */
  private boolean isNameList(int open) {
    int close = tokens.partner(open);
    if (close == open + 1) {
      return false;
    }
    for (int t = open + 1; t < close; t++) {
      boolean nameExpected = (t - open) % 2 == 1;
      int kind = tokens.kind(t);
      if (nameExpected ? kind != WORD && kind != QUOTED_IDENTIFIER : kind != COMMA) {
        return false;
      }
    }
    return tokens.kind(close - 1) != COMMA;
  }

  /**
   * Whether name(columns) at {@code t} starts a CTE: name(a, b) AS [[NOT] MATERIALIZED] (query).
   * The query must follow, or {@code f(x) AS (a int)}, a call with a column definition list, would
   * pass.
   */
  private boolean isCteColumnList(int t, int to) {
    int open = t + 1;
    if (!isNameList(open)) {
      return false;
    }
    int as = tokens.partner(open) + 1;
    if (as >= to || !tokens.is(as, "as")) {
      return false;
    }
    int body = as + 1;
    if (body < to && tokens.is(body, "not")) {
      body++;
    }
    if (body < to && tokens.is(body, "materialized")) {
      body++;
    }
    if (body + 1 >= to || tokens.kind(body) != LEFT_PAREN) {
      return false;
    }
    int q = body + 1;
    return tokens.kind(q) == LEFT_PAREN
        || tokens.is(q, "select")
        || tokens.is(q, "values")
        || tokens.is(q, "table")
        || tokens.is(q, "with");
  }

  /** EXPLAIN [ANALYZE] [VERBOSE] statement, or EXPLAIN (option [value], ...) statement. */
  private boolean explainMayWrite(int from, int to, int nesting) {
    int t = from;
    boolean analyze = false;
    if (t < to && tokens.kind(t) == LEFT_PAREN) {
      int close = tokens.partner(t);
      for (int o = t + 1; o < close; o++) {
        if (tokens.is(o, "analyze") || tokens.is(o, "analyse")) {
          int value = o + 1;
          boolean off =
              value < close
                  && (tokens.is(value, "false")
                      || tokens.is(value, "off")
                      || tokens.kind(value) == NUMBER && tokens.textIs(value, "0"));
          analyze |= !off;
        }
      }
      t = close + 1;
    } else {
      while (t < to
          && (tokens.is(t, "analyze") || tokens.is(t, "analyse") || tokens.is(t, "verbose"))) {
        analyze |= !tokens.is(t, "verbose");
        t++;
      }
    }
    // Without ANALYZE the statement is only planned, never run.
    return analyze && mayWrite(t, to, nesting + 1);
  }

  /** DECLARE name [options] CURSOR [WITH[OUT] HOLD] FOR query. */
  private boolean declareMayWrite(int from, int to, int nesting) {
    for (int t = from; t < to; t++) {
      if (tokens.kind(t) == LEFT_PAREN) {
        t = tokens.partner(t);
      } else if (tokens.is(t, "for")) {
        return mayWrite(t + 1, to, nesting + 1);
      }
    }
    return true;
  }

  /** COPY table [(columns)] {TO | FROM} ..., or COPY (query) TO .... */
  private boolean copyMayWrite(int from, int to, int nesting) {
    int t = from;
    if (t < to && tokens.kind(t) == LEFT_PAREN) {
      int close = tokens.partner(t);
      if (mayWrite(t + 1, close, nesting + 1)) {
        return true;
      }
      t = close + 1;
    }
    for (; t < to; t++) {
      if (tokens.kind(t) == LEFT_PAREN) {
        t = tokens.partner(t);
      } else if (tokens.is(t, "from")) {
        return true;
      } else if (tokens.is(t, "to")) {
        // TO PROGRAM runs a shell command as the server: anything may happen.
        return t + 1 >= to || tokens.is(t + 1, "program");
      }
    }
    return true;
  }
}
