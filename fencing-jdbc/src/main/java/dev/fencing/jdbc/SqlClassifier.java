package dev.fencing.jdbc;

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
 *       because any function may write (see {@link SqlWords#READ_ONLY_FUNCTIONS}).
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
 * <p>A string that is one command PostgreSQL refuses inside a transaction block (SQLState 25001)
 * and that runs no user code, so writes no table rows, is marked as such ({@link
 * Classification#outsideTransaction()}): {@code CREATE}/{@code DROP DATABASE}, {@code ALTER
 * DATABASE name SET TABLESPACE}; {@code CREATE}/{@code DROP TABLESPACE}; {@code ALTER SYSTEM}. Not
 * the others PostgreSQL refuses there: {@code CREATE INDEX CONCURRENTLY}, {@code REINDEX}, {@code
 * CLUSTER}, {@code VACUUM} (a plain one too: it summarizes BRIN block ranges) and {@code ANALYZE}
 * evaluate index expressions (user functions), {@code DROP INDEX CONCURRENTLY} and subscriptions
 * fire event triggers: any of them can write. Both readings of a backslash (below) must find the
 * one command: the mark relaxes the fence.
 *
 * <p>A string holding {@code CALL} or {@code DO} (by a statement's first word), or a statement
 * starting with a JDBC escape ({@code {call ...}}, which pgjdbc may send as {@code CALL}), is
 * marked ({@link Classification#nonAtomic()}): outside a transaction block PostgreSQL runs it
 * non-atomically, so the procedure or block may end its transaction inside itself. So is a text
 * that does not lex. This one mark, like a transaction's end, is safety: in autocommit the wrapper
 * then runs the statement in its own transaction block instead of an implicit transaction.
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
   * @param outsideTransaction the string is one statement that PostgreSQL refuses inside a
   *     transaction block, and runs no user code (listed on the class)
   * @param nonAtomic some statement is {@code CALL} or {@code DO} (or starts with a JDBC escape,
   *     which pgjdbc may turn into {@code CALL}), or the text does not lex: outside a transaction
   *     block PostgreSQL runs such a statement non-atomically, so the procedure or block may {@code
   *     COMMIT} or {@code ROLLBACK} inside itself and end the transaction its check belongs to
   * @param endsAfterStatement a statement that ends the transaction follows another statement in
   *     the same string: whatever that statement writes (a write hidden in a view, an operator, a
   *     cursor's query run by {@code MOVE}) is done after the check before the string ran, and
   *     committed by the string itself
   */
  record Classification(
      boolean mayWrite,
      boolean endsTransaction,
      boolean rollsBackToSavepoint,
      boolean writesAfterBoundary,
      boolean runsAfterEnd,
      boolean outsideTransaction,
      boolean nonAtomic,
      boolean endsAfterStatement) {
    /** A classification of one string with no statement after a transaction boundary. */
    Classification(boolean mayWrite, boolean endsTransaction, boolean rollsBackToSavepoint) {
      this(mayWrite, endsTransaction, rollsBackToSavepoint, false, false, false, false, false);
    }
  }

  static final int MAY_WRITE = 1;
  static final int ENDS_TRANSACTION = 2;
  static final int ROLLS_BACK_TO_SAVEPOINT = 4;
  // A statement that may write follows, in the same string, one that ends the transaction or
  // rolls back to a savepoint: a check made before the string would not cover it.
  private static final int WRITES_AFTER_BOUNDARY = 8;
  // Any statement follows, in the same string, one that ends the transaction.
  private static final int RUNS_AFTER_END = 16;
  // One statement (of the string: cleared if it holds more) refused inside a transaction block.
  static final int OUTSIDE_TRANSACTION = 32;
  // A CALL or DO statement (or a JDBC escape): may end its transaction inside itself when run
  // outside a transaction block.
  static final int NON_ATOMIC = 64;
  // A statement that ends the transaction follows another statement of the same string: the check
  // made before the string ran before what the statements ahead of the end write.
  private static final int ENDS_AFTER_STATEMENT = 128;

  /** The possible results, shared rather than allocated per call. */
  private static final Classification[] RESULTS = new Classification[256];

  static {
    for (int bits = 0; bits < RESULTS.length; bits++) {
      RESULTS[bits] =
          new Classification(
              (bits & MAY_WRITE) != 0,
              (bits & ENDS_TRANSACTION) != 0,
              (bits & ROLLS_BACK_TO_SAVEPOINT) != 0,
              (bits & WRITES_AFTER_BOUNDARY) != 0,
              (bits & RUNS_AFTER_END) != 0,
              (bits & OUTSIDE_TRANSACTION) != 0,
              (bits & NON_ATOMIC) != 0,
              (bits & ENDS_AFTER_STATEMENT) != 0);
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
    SqlLexer standard = new SqlLexer(sql, false);
    int bits = classifyStatements(sql, standard);
    if (standard.sawBackslashInPlainLiteral()) {
      // The server's standard_conforming_strings is unknown here: a backslash may escape a quote
      // and move the end of the literal. Either reading may be the real one, so combine them; the
      // transaction flags only make the wrapper check again, so they combine the same way. Not
      // OUTSIDE_TRANSACTION: it relaxes the fence (the check first, then the string alone), so it
      // takes both readings to be that one command; else a write one reading hides would run apart
      // from its check.
      int other = classifyStatements(sql, new SqlLexer(sql, true));
      bits = ((bits | other) & ~OUTSIDE_TRANSACTION) | (bits & other & OUTSIDE_TRANSACTION);
    }
    return RESULTS[bits];
  }

  /** Whether any statement in {@code sql} may write. */
  static boolean mayWrite(String sql) {
    return classify(sql).mayWrite();
  }

  /**
   * Whether {@code sql} is one statement that rolls back the whole transaction: {@code ROLLBACK} or
   * {@code ABORT}, optionally {@code WORK} or {@code TRANSACTION}, optionally {@code AND [NO]
   * CHAIN}, in any case, with comments and semicolons around it. PostgreSQL ends an aborted
   * transaction with it too. Not {@code ROLLBACK TO SAVEPOINT} (the transaction goes on), not
   * {@code ROLLBACK PREPARED} (another transaction), not {@code COMMIT} or {@code END}, and not a
   * string holding any other statement. Read only where a refused transaction waits for its end
   * ({@link RefusedTransaction}), so it is not kept in the memo.
   */
  static boolean rollsBackTransaction(String sql) {
    SqlLexer lexer = new SqlLexer(sql, false);
    SqlTokens tokens = new SqlTokens(sql);
    int statements = 0;
    while (true) {
      int kind = lexer.next();
      if (kind == SqlLexer.END || kind == SqlLexer.SEMICOLON) {
        if (tokens.count() > 0) {
          statements++;
          if (statements > 1 || !isRollback(tokens)) {
            return false;
          }
          tokens.clear();
        }
        if (kind == SqlLexer.END) {
          return statements == 1 && !lexer.malformed();
        }
        continue;
      }
      if (kind != SqlLexer.WORD || tokens.count() == 5) {
        return false; // nothing but words, and at most ABORT WORK AND NO CHAIN
      }
      tokens.add(kind, lexer.tokenStart(), lexer.tokenEnd());
    }
  }

  /**
   * Whether {@code sql} is one statement that opens a transaction block: {@code BEGIN} or {@code
   * START TRANSACTION}, with whatever modes follow, comments and semicolons around it. Read only
   * for a read in autocommit with tokens bound, so it is not kept in the memo.
   */
  static boolean beginsTransaction(String sql) {
    int i = 0;
    while (i < sql.length() && Character.isWhitespace(sql.charAt(i))) {
      i++;
    }
    if (i == sql.length() || "bBsS/-;".indexOf(sql.charAt(i)) < 0) {
      return false; // every read in autocommit asks: most are told without lexing
    }
    SqlLexer lexer = new SqlLexer(sql, false);
    SqlTokens tokens = new SqlTokens(sql);
    boolean begins = false;
    int statements = 0;
    while (true) {
      int kind = lexer.next();
      if (kind == SqlLexer.END || kind == SqlLexer.SEMICOLON) {
        if (tokens.count() > 0) {
          statements++;
          tokens.clear();
        }
        if (kind == SqlLexer.END) {
          return begins && statements == 1 && !lexer.malformed();
        }
        continue;
      }
      if (tokens.count() < 2) {
        if (kind != SqlLexer.WORD) {
          return false;
        }
        tokens.add(kind, lexer.tokenStart(), lexer.tokenEnd());
        if (tokens.count() == 1) {
          begins = tokens.is(0, "begin");
        } else if (tokens.is(0, "start")) {
          begins = tokens.is(1, "transaction");
        }
      } else if (tokens.count() == 2) {
        tokens.add(kind, lexer.tokenStart(), lexer.tokenEnd()); // counted, no longer read
      }
    }
  }

  /** {@code ROLLBACK | ABORT [WORK | TRANSACTION] [AND [NO] CHAIN]}, in words. */
  private static boolean isRollback(SqlTokens tokens) {
    int n = tokens.count();
    if (!tokens.is(0, "rollback") && !tokens.is(0, "abort")) {
      return false;
    }
    int t = 1;
    if (t < n && (tokens.is(t, "work") || tokens.is(t, "transaction"))) {
      t++;
    }
    if (t < n && tokens.is(t, "and")) {
      t++;
      if (t < n && tokens.is(t, "no")) {
        t++;
      }
      if (t >= n || !tokens.is(t, "chain")) {
        return false;
      }
      t++;
    }
    return t == n;
  }

  /** Lexes one SQL string and classifies its statements one by one: the bits of the string. */
  private static int classifyStatements(String sql, SqlLexer lexer) {
    SqlStatement statement = new SqlStatement(sql);
    int bits = 0;
    int statements = 0;
    while (true) {
      int kind = lexer.next();
      if (kind == SqlLexer.END || kind == SqlLexer.SEMICOLON) {
        if (!statement.isEmpty()) {
          int one = statement.classify();
          if ((one & MAY_WRITE) != 0
              && (bits & (ENDS_TRANSACTION | ROLLS_BACK_TO_SAVEPOINT)) != 0) {
            one |= WRITES_AFTER_BOUNDARY;
          }
          if ((bits & ENDS_TRANSACTION) != 0) {
            one |= RUNS_AFTER_END;
          }
          if ((one & ENDS_TRANSACTION) != 0 && statements > 0) {
            one |= ENDS_AFTER_STATEMENT;
          }
          bits |= one;
          statements++;
        }
        statement.clear();
        if (kind == SqlLexer.END) {
          break;
        }
        continue;
      }
      statement.add(kind, lexer.tokenStart(), lexer.tokenEnd());
    }
    if (statements > 1 || lexer.malformed()) {
      // several share a transaction block anyway (the server's implicit one)
      bits &= ~OUTSIDE_TRANSACTION;
    }
    return lexer.malformed() ? bits | MAY_WRITE | NON_ATOMIC : bits;
  }
}
