package dev.fencing.jdbc;

import java.util.Arrays;
import java.util.Set;

/**
 * Decides from SQL text alone whether a statement may write, so that the JDBC wrapper runs the
 * fencing check before anything that might change data and lets plain reads through for free.
 *
 * <p>The two kinds of mistake are not equal: a write taken for a read skips the fence and may land
 * with a stale token, while a read taken for a write only costs one extra check. So every doubt
 * resolves to "may write", and a statement is a read only when it is recognised as one:
 *
 * <ul>
 *   <li>A query ({@code SELECT}, {@code VALUES}, {@code TABLE}, {@code WITH}, also inside leading
 *       parentheses) is a read unless it contains, as a word: {@code INSERT}, {@code UPDATE},
 *       {@code DELETE} or {@code MERGE} (a data-modifying CTE); {@code INTO} ({@code SELECT INTO}
 *       creates a table); a row lock ({@code FOR UPDATE}, {@code FOR NO KEY UPDATE}, {@code FOR
 *       SHARE}, {@code FOR KEY SHARE}); or a call of a function that is not known to be read-only,
 *       because any function may write (see {@link #READ_ONLY_FUNCTIONS}).
 *   <li>{@code EXPLAIN} is a read, except {@code EXPLAIN ANALYZE}, which runs the statement it
 *       explains and so is classified like it. {@code DECLARE ... CURSOR FOR query} is classified
 *       like its query. {@code COPY ... TO} is a read when its source (a table, or a query that is
 *       a read) is; {@code COPY ... FROM} and {@code COPY ... TO PROGRAM} may write.
 *   <li>Transaction and session control ({@code BEGIN}, {@code COMMIT}, {@code ROLLBACK}, {@code
 *       SAVEPOINT}, {@code SET}, {@code SHOW}, {@code FETCH}, {@code LISTEN}, ...) are reads.
 *   <li>Everything else may write: DML, DDL, {@code CALL}, {@code DO}, {@code PREPARE}, {@code
 *       EXECUTE}, and any statement this class does not know.
 * </ul>
 *
 * <p>The text is lexed as PostgreSQL lexes it, so that words inside comments (line comments and
 * nested block comments), string literals ({@code '...'}, {@code E'...'}, {@code $tag$...$tag$})
 * and quoted identifiers neither count nor hide anything, and only semicolons outside them separate
 * statements. A string may write when any of its statements may. Text that does not lex (an
 * unterminated literal, quoted identifier or comment) or whose parentheses do not balance may
 * write.
 *
 * <p>A plain literal {@code '...'} holding a backslash means different things under {@code
 * standard_conforming_strings} on (the default) and off, and a backslash can move where the literal
 * ends; such a string is classified both ways and the results are combined towards "may write".
 *
 * <p>Known over-caution (reads classified as writes, which costs a check and is never unsafe): a
 * table alias with a column list but without {@code AS} after a table name ({@code FROM t x(a)}),
 * functions missing from the allow-list, and columns named like the words above ({@code SELECT
 * update FROM t}).
 *
 * <p>Only what the text shows is seen: functions called implicitly, by operators, casts, views or
 * triggers, are not. Unqualified names of built-in functions are assumed to resolve to the
 * built-ins ({@code pg_catalog} comes first on the search path unless it is placed explicitly).
 *
 * <p>It runs on every statement: one pass over the characters, then over the tokens of each
 * statement; no regular expressions. Statements that their first word decides keep only their first
 * tokens.
 */
final class SqlClassifier {

  /**
   * The result of classifying one SQL string (which may hold several statements).
   *
   * @param mayWrite some statement may write, so the fence must be checked before it runs
   * @param endsTransaction some statement ends the transaction: {@code COMMIT}, {@code END}, {@code
   *     ROLLBACK}, {@code ABORT}, {@code PREPARE TRANSACTION}, {@code COMMIT PREPARED} or {@code
   *     ROLLBACK PREPARED}
   * @param rollsBackToSavepoint some statement is {@code ROLLBACK [WORK | TRANSACTION] TO
   *     [SAVEPOINT] name}, which undoes what ran after the savepoint
   * @param writesAfterBoundary a statement that may write follows one that ends the transaction or
   *     rolls back to a savepoint
   * @param runsAfterEnd any statement follows one that ends the transaction: it runs outside the
   *     transaction whose commit the fence checks
   */
  record Classification(
      boolean mayWrite,
      boolean endsTransaction,
      boolean rollsBackToSavepoint,
      boolean writesAfterBoundary,
      boolean runsAfterEnd) {
    /** A classification of one string with no statement after a transaction boundary. */
    Classification(boolean mayWrite, boolean endsTransaction, boolean rollsBackToSavepoint) {
      this(mayWrite, endsTransaction, rollsBackToSavepoint, false, false);
    }
  }

  /**
   * Functions that never write, so a query calling them can still be a read. Any function not
   * listed may write (user functions, {@code nextval}, {@code setval}, advisory locks, {@code
   * set_config}, {@code txid_current}, which assigns a transaction id, dblink, large objects), so a
   * call of it makes the query a write; listing a function that can write would let writes past the
   * fence. Keep it to built-ins whose only effect is their result.
   */
  static final Set<String> READ_ONLY_FUNCTIONS =
      Set.of(
          // aggregates
          "count",
          "sum",
          "avg",
          "min",
          "max",
          "array_agg",
          "string_agg",
          "json_agg",
          "jsonb_agg",
          "json_object_agg",
          "jsonb_object_agg",
          "bool_and",
          "bool_or",
          "every",
          "bit_and",
          "bit_or",
          "stddev",
          "stddev_pop",
          "stddev_samp",
          "variance",
          "var_pop",
          "var_samp",
          "percentile_cont",
          "percentile_disc",
          "mode",
          // window functions
          "row_number",
          "rank",
          "dense_rank",
          "percent_rank",
          "cume_dist",
          "ntile",
          "lag",
          "lead",
          "first_value",
          "last_value",
          "nth_value",
          // date and time
          "now",
          "current_timestamp",
          "current_time",
          "localtime",
          "localtimestamp",
          "clock_timestamp",
          "statement_timestamp",
          "transaction_timestamp",
          "to_char",
          "to_date",
          "to_timestamp",
          "to_number",
          "date_trunc",
          "date_part",
          "date_bin",
          "age",
          "make_interval",
          "make_date",
          "make_time",
          "make_timestamp",
          "make_timestamptz",
          "justify_days",
          "justify_hours",
          "justify_interval",
          "isfinite",
          // strings
          "lower",
          "upper",
          "initcap",
          "length",
          "char_length",
          "octet_length",
          "concat",
          "concat_ws",
          "format",
          "left",
          "right",
          "substr",
          "replace",
          "translate",
          "split_part",
          "strpos",
          "starts_with",
          "btrim",
          "ltrim",
          "rtrim",
          "lpad",
          "rpad",
          "repeat",
          "reverse",
          "chr",
          "ascii",
          "quote_ident",
          "quote_literal",
          "quote_nullable",
          "regexp_replace",
          "regexp_match",
          "regexp_matches",
          "regexp_split_to_array",
          "string_to_array",
          "array_to_string",
          "md5",
          "encode",
          "decode",
          // numbers
          "abs",
          "round",
          "trunc",
          "floor",
          "ceil",
          "ceiling",
          "sign",
          "mod",
          "div",
          "power",
          "sqrt",
          "exp",
          "ln",
          "log",
          "random",
          // JSON
          "to_json",
          "to_jsonb",
          "row_to_json",
          "array_to_json",
          "json_build_object",
          "jsonb_build_object",
          "json_build_array",
          "jsonb_build_array",
          "json_extract_path",
          "json_extract_path_text",
          "jsonb_extract_path",
          "jsonb_extract_path_text",
          "json_array_length",
          "jsonb_array_length",
          "json_array_elements",
          "jsonb_array_elements",
          "json_array_elements_text",
          "jsonb_array_elements_text",
          "json_each",
          "jsonb_each",
          "json_each_text",
          "jsonb_each_text",
          "json_object_keys",
          "jsonb_object_keys",
          "json_typeof",
          "jsonb_typeof",
          "jsonb_set",
          "jsonb_strip_nulls",
          "jsonb_pretty",
          "jsonb_path_exists",
          "jsonb_path_query",
          "jsonb_path_query_array",
          "jsonb_path_query_first",
          // arrays and set-returning functions
          "array_length",
          "array_upper",
          "array_lower",
          "array_position",
          "array_positions",
          "array_append",
          "array_prepend",
          "array_cat",
          "array_remove",
          "array_replace",
          "cardinality",
          "generate_series",
          "unnest",
          // full-text search
          "to_tsvector",
          "to_tsquery",
          "plainto_tsquery",
          "phraseto_tsquery",
          "websearch_to_tsquery",
          "ts_rank",
          "ts_rank_cd",
          // system information
          "pg_backend_pid",
          "current_setting",
          "current_database",
          "current_schema",
          "version",
          "pg_is_in_recovery",
          "pg_typeof",
          "num_nulls",
          "num_nonnulls",
          "txid_current_if_assigned",
          "pg_current_xact_id_if_assigned",
          "gen_random_uuid",
          "exists");

  /**
   * Words that a parenthesis may follow without making a call: {@code IN (...)}, {@code OVER
   * (...)}, {@code JOIN (...)}, {@code CAST(...)}. Most are reserved or special-syntax keywords,
   * which cannot name a function unless quoted; a user function named like one of the few
   * unreserved ones ({@code over}, {@code filter}, {@code within}, {@code materialized}) would be
   * missed, a risk taken so that window functions and aggregate filters need no check.
   */
  private static final Set<String> SYNTAX_WORDS =
      Set.of(
          "in",
          "exists",
          "any",
          "all",
          "some",
          "values",
          "cast",
          "row",
          "array",
          "coalesce",
          "nullif",
          "greatest",
          "least",
          "over",
          "filter",
          "within",
          "using",
          "on",
          "as",
          "from",
          "join",
          "where",
          "and",
          "or",
          "not",
          "select",
          "lateral",
          "interval",
          "extract",
          "position",
          "substring",
          "trim",
          "overlay",
          "grouping",
          "group",
          "distinct",
          "having",
          "when",
          "then",
          "else",
          "case",
          "limit",
          "offset",
          "union",
          "intersect",
          "except",
          "with",
          "is",
          "between",
          "like",
          "ilike",
          "similar",
          "to",
          "returning",
          "only",
          "order",
          "window",
          "materialized",
          "for");

  private static final int MAY_WRITE = 1;
  private static final int ENDS_TRANSACTION = 2;
  private static final int ROLLS_BACK_TO_SAVEPOINT = 4;
  // A statement that may write follows, in the same string, one that ends the transaction or
  // rolls back to a savepoint: a check made before the string would not cover it.
  private static final int WRITES_AFTER_BOUNDARY = 8;
  // Any statement follows, in the same string, one that ends the transaction.
  private static final int RUNS_AFTER_END = 16;

  /** The possible results, shared rather than allocated per call. */
  private static final Classification[] RESULTS = new Classification[32];

  static {
    for (int bits = 0; bits < RESULTS.length; bits++) {
      RESULTS[bits] =
          new Classification(
              (bits & MAY_WRITE) != 0,
              (bits & ENDS_TRANSACTION) != 0,
              (bits & ROLLS_BACK_TO_SAVEPOINT) != 0,
              (bits & WRITES_AFTER_BOUNDARY) != 0,
              (bits & RUNS_AFTER_END) != 0);
    }
  }

  private SqlClassifier() {}

  /** How many distinct SQL texts the classifications are kept for ({@link TextMemo}). */
  static final int MEMO_ENTRIES = 1024;

  /** Longer texts are classified at every execution and never kept. */
  static final int MEMO_TEXT_LENGTH = 4096;

  // Applications prepare the same statements in every transaction: classify each text once.
  private static final TextMemo<Classification> MEMO =
      new TextMemo<>(SqlClassifier::classifyText, MEMO_ENTRIES, MEMO_TEXT_LENGTH);

  /**
   * Classifies {@code sql}, which may hold several statements separated by semicolons. The result
   * depends on the text alone, so it is kept per text (bounded: {@link #MEMO_ENTRIES}).
   */
  static Classification classify(String sql) {
    return MEMO.get(sql);
  }

  /** How many texts the classifications are kept for now (tests). */
  static int memoSize() {
    return MEMO.size();
  }

  /** Classifies {@code sql} from scratch, never from the memo. */
  static Classification classifyText(String sql) {
    Scanner standard = new Scanner(sql, false);
    int bits = standard.run();
    if (standard.sawBackslashInPlainLiteral) {
      // The server's standard_conforming_strings is unknown here: a backslash may escape a quote
      // and move the end of the literal. Either reading may be the real one, so combine them; the
      // transaction flags only make the wrapper check again, so they combine the same way.
      bits |= new Scanner(sql, true).run();
    }
    return RESULTS[bits];
  }

  /** Whether any statement in {@code sql} may write. */
  static boolean mayWrite(String sql) {
    return classify(sql).mayWrite();
  }

  /** Lexes one SQL string and classifies its statements one by one. */
  private static final class Scanner {
    private static final int END = -1;
    private static final int SEMICOLON = -2;
    private static final int WORD = 0;
    private static final int QUOTED_IDENTIFIER = 1;
    private static final int LEFT_PAREN = 2;
    private static final int RIGHT_PAREN = 3;
    private static final int COMMA = 4;
    private static final int DOT = 5;
    private static final int DOUBLE_COLON = 6;
    private static final int NUMBER = 7;
    private static final int LITERAL = 8;
    private static final int OTHER = 9;

    /**
     * Tokens kept after the first word of a statement that the first word decides: enough for
     * {@code ROLLBACK TRANSACTION TO} and {@code PREPARE TRANSACTION}.
     */
    private static final int KEPT_AFTER_FIRST_WORD = 4;

    /** Bounds the recursion into explained, declared and copied statements. */
    private static final int MAX_NESTING = 8;

    private final String sql;
    private final int length;
    private final boolean backslashEscapes;
    private int pos;
    private int tokenStart;
    private boolean malformed;
    boolean sawBackslashInPlainLiteral;

    // The current statement's tokens; match[i] is the partner of the parenthesis at i.
    private int count;
    private int[] kinds = new int[32];
    private int[] starts = new int[32];
    private int[] ends = new int[32];
    private int[] match = new int[32];

    Scanner(String sql, boolean backslashEscapes) {
      this.sql = sql;
      this.length = sql.length();
      this.backslashEscapes = backslashEscapes;
    }

    int run() {
      int bits = 0;
      int first = -1;
      boolean keepAll = false;
      while (true) {
        int kind = next();
        if (kind == END || kind == SEMICOLON) {
          if (count > 0) {
            int statement = classifyStatement(first, keepAll);
            if ((statement & MAY_WRITE) != 0
                && (bits & (ENDS_TRANSACTION | ROLLS_BACK_TO_SAVEPOINT)) != 0) {
              statement |= WRITES_AFTER_BOUNDARY;
            }
            if ((bits & ENDS_TRANSACTION) != 0) {
              statement |= RUNS_AFTER_END;
            }
            bits |= statement;
          }
          count = 0;
          first = -1;
          keepAll = false;
          if (kind == END) {
            break;
          }
          continue;
        }
        if (first < 0) {
          add(kind);
          if (kind != LEFT_PAREN) {
            first = count - 1;
            keepAll = kind == WORD && needsAllTokens(first);
          }
        } else if (keepAll || count < first + 1 + KEPT_AFTER_FIRST_WORD) {
          add(kind);
        }
      }
      return malformed ? bits | MAY_WRITE : bits;
    }

    private boolean needsAllTokens(int t) {
      return is(t, "select")
          || is(t, "with")
          || is(t, "values")
          || is(t, "table")
          || is(t, "explain")
          || is(t, "declare")
          || is(t, "copy");
    }

    private void add(int kind) {
      if (count == kinds.length) {
        int grown = count * 2;
        kinds = Arrays.copyOf(kinds, grown);
        starts = Arrays.copyOf(starts, grown);
        ends = Arrays.copyOf(ends, grown);
        match = Arrays.copyOf(match, grown);
      }
      kinds[count] = kind;
      starts[count] = tokenStart;
      ends[count] = pos;
      count++;
    }

    private int classifyStatement(int first, boolean keptAll) {
      int bits = first >= 0 && kinds[first] == WORD ? transactionBits(first) : 0;
      boolean write = (keptAll && !matchParentheses()) || mayWrite(0, count, 0);
      return write ? bits | MAY_WRITE : bits;
    }

    private int transactionBits(int first) {
      if (is(first, "commit") || is(first, "end") || is(first, "abort")) {
        return ENDS_TRANSACTION;
      }
      if (is(first, "rollback")) {
        int next = first + 1;
        if (next < count && (is(next, "work") || is(next, "transaction"))) {
          next++;
        }
        return next < count && is(next, "to") ? ROLLS_BACK_TO_SAVEPOINT : ENDS_TRANSACTION;
      }
      if (is(first, "prepare") && first + 1 < count && is(first + 1, "transaction")) {
        return ENDS_TRANSACTION;
      }
      return 0;
    }

    private boolean matchParentheses() {
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

    /** Whether the statement in tokens [from, to) may write. */
    private boolean mayWrite(int from, int to, int nesting) {
      if (nesting > MAX_NESTING) {
        return true;
      }
      int f = from;
      while (f < to && kinds[f] == LEFT_PAREN) {
        f++;
      }
      if (f == to) {
        return f > from;
      }
      if (kinds[f] != WORD) {
        return true;
      }
      switch (lower(f)) {
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
        int kind = kinds[t];
        if (kind == WORD) {
          if (is(t, "insert")
              || is(t, "update")
              || is(t, "delete")
              || is(t, "merge")
              || is(t, "into")) {
            return true;
          }
          if (is(t, "for")
              && t + 1 < to
              && (is(t + 1, "share") || is(t + 1, "key") || is(t + 1, "no"))) {
            return true;
          }
        }
        if ((kind == WORD || kind == QUOTED_IDENTIFIER)
            && t + 1 < to
            && kinds[t + 1] == LEFT_PAREN
            && callsUnknownFunction(t, from, to)) {
          return true;
        }
      }
      return false;
    }

    /**
     * Whether the name at {@code t}, followed by a parenthesis, calls a function that may write.
     */
    private boolean callsUnknownFunction(int t, int from, int to) {
      int nameStart = t;
      while (nameStart - 2 >= from
          && kinds[nameStart - 1] == DOT
          && (kinds[nameStart - 2] == WORD || kinds[nameStart - 2] == QUOTED_IDENTIFIER)) {
        nameStart -= 2;
      }
      int before = nameStart - 1;
      if (before >= from) {
        // Not calls: a type modifier (x::numeric(10, 2), CAST(x AS varchar(3))), an alias with
        // column names (AS g(i), or without AS after a call or subquery: unnest(a) u(x)), and a
        // CTE's column names (WITH t(n) AS (SELECT ...)).
        if (kinds[before] == DOUBLE_COLON || is(before, "as")) {
          return false;
        }
        if (kinds[before] == RIGHT_PAREN && nameStart == t && isNameList(t + 1)) {
          return false;
        }
        if ((kinds[before] == COMMA || is(before, "with") || is(before, "recursive"))
            && nameStart == t
            && isCteColumnList(t, to)) {
          return false;
        }
      }
      if (nameStart < t) {
        // Only pg_catalog is known; any other schema may hold anything.
        return nameStart != t - 2
            || !is(nameStart, "pg_catalog")
            || kinds[t] != WORD
            || !READ_ONLY_FUNCTIONS.contains(lower(t));
      }
      if (kinds[t] != WORD) {
        return true;
      }
      String name = lower(t);
      if (READ_ONLY_FUNCTIONS.contains(name) || SYNTAX_WORDS.contains(name)) {
        return false;
      }
      return before < from || !isGroupingWord(name, before);
    }

    /**
     * GROUP BY (a, b), GROUP BY ROLLUP (a), GROUPING SETS ((a), (b)): these words are unreserved,
     * so a function may have their name; trust them only where the grammar puts them.
     */
    private boolean isGroupingWord(String name, int before) {
      switch (name) {
        case "by":
          return is(before, "group") || is(before, "order") || is(before, "partition");
        case "rollup", "cube":
          return is(before, "by");
        case "sets":
          return is(before, "grouping");
        default:
          return false;
      }
    }

    /** Whether the parenthesis at {@code open} holds only a list of names: (a, "b", c). */
    private boolean isNameList(int open) {
      int close = match[open];
      if (close == open + 1) {
        return false;
      }
      for (int t = open + 1; t < close; t++) {
        boolean nameExpected = (t - open) % 2 == 1;
        int kind = kinds[t];
        if (nameExpected ? kind != WORD && kind != QUOTED_IDENTIFIER : kind != COMMA) {
          return false;
        }
      }
      return kinds[close - 1] != COMMA;
    }

    /**
     * Whether name(columns) at {@code t} starts a CTE: name(a, b) AS [[NOT] MATERIALIZED] (query).
     * The query must follow, or {@code f(x) AS (a int)}, a call with a column definition list,
     * would pass.
     */
    private boolean isCteColumnList(int t, int to) {
      int open = t + 1;
      if (!isNameList(open)) {
        return false;
      }
      int as = match[open] + 1;
      if (as >= to || !is(as, "as")) {
        return false;
      }
      int body = as + 1;
      if (body < to && is(body, "not")) {
        body++;
      }
      if (body < to && is(body, "materialized")) {
        body++;
      }
      if (body + 1 >= to || kinds[body] != LEFT_PAREN) {
        return false;
      }
      int q = body + 1;
      return kinds[q] == LEFT_PAREN
          || is(q, "select")
          || is(q, "values")
          || is(q, "table")
          || is(q, "with");
    }

    /** EXPLAIN [ANALYZE] [VERBOSE] statement, or EXPLAIN (option [value], ...) statement. */
    private boolean explainMayWrite(int from, int to, int nesting) {
      int t = from;
      boolean analyze = false;
      if (t < to && kinds[t] == LEFT_PAREN) {
        int close = match[t];
        for (int o = t + 1; o < close; o++) {
          if (is(o, "analyze") || is(o, "analyse")) {
            int value = o + 1;
            boolean off =
                value < close
                    && (is(value, "false")
                        || is(value, "off")
                        || kinds[value] == NUMBER && textIs(value, "0"));
            analyze |= !off;
          }
        }
        t = close + 1;
      } else {
        while (t < to && (is(t, "analyze") || is(t, "analyse") || is(t, "verbose"))) {
          analyze |= !is(t, "verbose");
          t++;
        }
      }
      // Without ANALYZE the statement is only planned, never run.
      return analyze && mayWrite(t, to, nesting + 1);
    }

    /** DECLARE name [options] CURSOR [WITH[OUT] HOLD] FOR query. */
    private boolean declareMayWrite(int from, int to, int nesting) {
      for (int t = from; t < to; t++) {
        if (kinds[t] == LEFT_PAREN) {
          t = match[t];
        } else if (is(t, "for")) {
          return mayWrite(t + 1, to, nesting + 1);
        }
      }
      return true;
    }

    /** COPY table [(columns)] {TO | FROM} ..., or COPY (query) TO .... */
    private boolean copyMayWrite(int from, int to, int nesting) {
      int t = from;
      if (t < to && kinds[t] == LEFT_PAREN) {
        int close = match[t];
        if (mayWrite(t + 1, close, nesting + 1)) {
          return true;
        }
        t = close + 1;
      }
      for (; t < to; t++) {
        if (kinds[t] == LEFT_PAREN) {
          t = match[t];
        } else if (is(t, "from")) {
          return true;
        } else if (is(t, "to")) {
          // TO PROGRAM runs a shell command as the server: anything may happen.
          return t + 1 >= to || is(t + 1, "program");
        }
      }
      return true;
    }

    /** Whether token {@code t} is the word {@code keyword} (lower case), in any case. */
    private boolean is(int t, String keyword) {
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

    private boolean textIs(int t, String text) {
      return ends[t] - starts[t] == text.length()
          && sql.regionMatches(starts[t], text, 0, text.length());
    }

    /** The word at {@code t} folded as PostgreSQL folds unquoted names: ASCII letters only. */
    private String lower(int t) {
      char[] chars = new char[ends[t] - starts[t]];
      for (int k = 0; k < chars.length; k++) {
        chars[k] = asciiLower(sql.charAt(starts[t] + k));
      }
      return new String(chars);
    }

    private static char asciiLower(char c) {
      return c >= 'A' && c <= 'Z' ? (char) (c + ('a' - 'A')) : c;
    }

    // ---- Lexer ----

    /** Lexes the next token, leaving it at [tokenStart, pos). */
    private int next() {
      skipSpaceAndComments();
      tokenStart = pos;
      if (pos >= length) {
        return END;
      }
      char c = sql.charAt(pos);
      if (isIdentifierStart(c)) {
        pos++;
        while (pos < length && isIdentifierPart(sql.charAt(pos))) {
          pos++;
        }
        if (pos == tokenStart + 1 && (c == 'e' || c == 'E') && pos < length && peek(0) == '\'') {
          skipQuoted('\'', true, false);
          return LITERAL;
        }
        return WORD;
      }
      if (isDigit(c)) {
        skipNumber();
        return NUMBER;
      }
      switch (c) {
        case '\'':
          skipQuoted('\'', backslashEscapes, true);
          return LITERAL;
        case '"':
          skipQuoted('"', false, false);
          return QUOTED_IDENTIFIER;
        case '$':
          return dollar();
        case ';':
          pos++;
          return SEMICOLON;
        case '(':
          pos++;
          return LEFT_PAREN;
        case ')':
          pos++;
          return RIGHT_PAREN;
        case ',':
          pos++;
          return COMMA;
        case '.':
          pos++;
          return DOT;
        case ':':
          if (pos + 1 < length && peek(1) == ':') {
            pos += 2;
            return DOUBLE_COLON;
          }
          pos++;
          return OTHER;
        default:
          pos++;
          return OTHER;
      }
    }

    private char peek(int ahead) {
      return sql.charAt(pos + ahead);
    }

    private void skipSpaceAndComments() {
      while (pos < length) {
        char c = sql.charAt(pos);
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\u000B') {
          pos++;
        } else if (c == '-' && pos + 1 < length && peek(1) == '-') {
          pos += 2;
          while (pos < length && sql.charAt(pos) != '\n' && sql.charAt(pos) != '\r') {
            pos++;
          }
        } else if (c == '/' && pos + 1 < length && peek(1) == '*') {
          skipBlockComment();
        } else {
          return;
        }
      }
    }

    private void skipBlockComment() {
      pos += 2;
      int depth = 1;
      while (pos < length) {
        char c = sql.charAt(pos);
        if (c == '/' && pos + 1 < length && peek(1) == '*') {
          depth++;
          pos += 2;
        } else if (c == '*' && pos + 1 < length && peek(1) == '/') {
          pos += 2;
          if (--depth == 0) {
            return;
          }
        } else {
          pos++;
        }
      }
      malformed = true;
    }

    /** Skips a literal or quoted identifier opening at pos; a doubled quote stands for itself. */
    private void skipQuoted(char quote, boolean escapes, boolean plainLiteral) {
      pos++;
      while (pos < length) {
        char c = sql.charAt(pos);
        if (c == '\\' && plainLiteral) {
          sawBackslashInPlainLiteral = true;
        }
        if (c == '\\' && escapes) {
          pos += 2;
        } else if (c != quote) {
          pos++;
        } else if (pos + 1 < length && peek(1) == quote) {
          pos += 2;
        } else {
          pos++;
          return;
        }
      }
      pos = length;
      malformed = true;
    }

    /** A parameter ($1), a dollar-quoted string ($$...$$, $tag$...$tag$), or a lone $. */
    private int dollar() {
      int t = pos + 1;
      if (t < length && isDigit(sql.charAt(t))) {
        while (t < length && isDigit(sql.charAt(t))) {
          t++;
        }
        pos = t;
        return NUMBER;
      }
      if (t < length && sql.charAt(t) != '$') {
        if (!isIdentifierStart(sql.charAt(t))) {
          pos++;
          return OTHER;
        }
        while (t < length && sql.charAt(t) != '$' && isIdentifierPart(sql.charAt(t))) {
          t++;
        }
      }
      if (t >= length || sql.charAt(t) != '$') {
        pos++;
        return OTHER;
      }
      String tag = sql.substring(pos, t + 1);
      int close = sql.indexOf(tag, t + 1);
      if (close < 0) {
        pos = length;
        malformed = true;
      } else {
        pos = close + tag.length();
      }
      return LITERAL;
    }

    /** Digits, a fraction and an exponent; letters right after are a separate word. */
    private void skipNumber() {
      while (pos < length && (isDigit(sql.charAt(pos)) || sql.charAt(pos) == '.')) {
        pos++;
      }
      if (pos < length && (sql.charAt(pos) == 'e' || sql.charAt(pos) == 'E')) {
        int t = pos + 1;
        if (t < length && (sql.charAt(t) == '+' || sql.charAt(t) == '-')) {
          t++;
        }
        if (t < length && isDigit(sql.charAt(t))) {
          pos = t;
          while (pos < length && isDigit(sql.charAt(pos))) {
            pos++;
          }
        }
      }
    }

    private static boolean isDigit(char c) {
      return c >= '0' && c <= '9';
    }

    // As PostgreSQL's lexer: any non-ASCII character may be part of a name.
    private static boolean isIdentifierStart(char c) {
      return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80;
    }

    private static boolean isIdentifierPart(char c) {
      return isIdentifierStart(c) || isDigit(c) || c == '$';
    }
  }
}
