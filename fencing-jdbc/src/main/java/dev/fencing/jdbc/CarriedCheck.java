package dev.fencing.jdbc;

import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;
import org.postgresql.jdbc.PreferQueryMode;

/**
 * Issue 13, no extra round trip: the check of a transaction's first write travels with the write.
 * For a {@code PreparedStatement} of one statement, the execution that needs the check runs {@code
 * <the check>;<the statement's SQL>} instead, one multi-statement prepared statement: for one token
 * usually V30's function-free form (the advisory share lock, then a read through {@code
 * check_at_token} that calls {@code check_one} only when it does not accept: {@link CheckForms}),
 * else {@code check_one(?, ?)}, for several tokens {@code check_tokens(?, ?)}; the check's
 * arguments first, the caller's parameters replayed after them. pgjdbc sends all statements before
 * one Sync: one round trip; a refusal by the check makes the server skip the statement. The check's
 * rows are read and hidden; what the caller gets (the return value, results, update counts,
 * warnings, the driver's own exceptions) is the statement's, as the driver gives it for the call
 * made.
 *
 * <p>The caller's statement stays the driver's statement, used by every other execution; this
 * decides which execution carries and how, records its parameters (index, setter, arguments) for
 * the replay, and knows which statement executed last, whose results the caller sees. The combined
 * statements are prepared and executed by {@link CarriedCombined}, a read in autocommit with the
 * commit's check behind it by {@link CarriedRead}.
 *
 * <p>In autocommit under {@code preferQueryMode=simple}, where pgjdbc would send the combined
 * statement as two query messages (two implicit transactions), the statement is rendered as pgjdbc
 * sends it and carried by a plain statement in one query message instead ({@link CarriedSimple}).
 *
 * <p>A statement prepared for generated keys carries {@code <its SQL> RETURNING <columns>}, the
 * clause pgjdbc would append ({@link CarriedKeys}), and pgjdbc is told to report the combined
 * statement's results as it reports generated keys (each statement's rows, then its count): the
 * statement's rows are kept as {@code getGeneratedKeys()}, its count is where the caller's results
 * start ({@code execute()} false, {@code executeQuery} refused after it ran), as the driver's own.
 *
 * <p>Not carried (checked by a round trip of its own): anything but a plain {@code
 * prepareStatement(sql)} or one for generated keys that pgjdbc appends {@code RETURNING} to
 * (scrollable or updatable result sets, {@code prepareCall}, generated keys of other SQL or with
 * max rows set), SQL with a {@code ;} before its end, batches (carried by {@link CarriedBatch}), a
 * stream, reader, {@code Blob}, {@code Clob} or {@code SQLXML} parameter (until {@code
 * clearParameters}), a fetch size (cursor fetching), {@code closeOnCompletion}, a statement
 * unwrapped to the driver's, and an execution with a parameter unset (the driver's own error then
 * names the caller's index).
 */
final class CarriedCheck implements Carrier {
  private final Connection connection;
  private final PreparedStatement raw;
  private final String sql;
  // the columns of a statement prepared for generated keys (CarriedKeys), else null
  private final String @Nullable [] keyColumns;
  // the parameters set, for the replay; made at the first setter call (issue 13: a statement per
  // execution, most of them never carrying, so nothing is made that a setter does not need)
  private @Nullable RecordedParameters params;
  private boolean stopped;
  // the combined statements, by the check's text, and their execution; made when first needed
  private @Nullable CarriedCombined combined;
  // the execution under way and the check texts it may use (this is its Carrier: none made per
  // execution); set by carrier()
  private String executing = "execute";
  private @Nullable IntFunction<List<String>> checkTexts;
  // the statement whose results the caller sees: the one that executed last
  private Statement current;
  // a read in autocommit with the commit's check (literal) behind it; made when first needed
  private @Nullable CarriedRead read;
  // the execution in autocommit under preferQueryMode=simple: one query message; made when first
  // needed (both only in autocommit: a statement per transaction makes neither in a transaction)
  private @Nullable CarriedSimple simple;

  private CarriedCheck(
      Connection connection, PreparedStatement raw, String sql, String @Nullable [] keyColumns) {
    this.connection = connection;
    this.raw = raw;
    this.sql = sql;
    this.keyColumns = keyColumns;
    this.current = raw;
  }

  private CarriedCombined combined() {
    CarriedCombined c = combined;
    if (c == null) {
      c = new CarriedCombined(connection, this, raw, sql, keyColumns);
      combined = c;
    }
    return c;
  }

  /** Whether every parameter set can be set again ({@link RecordedParameters#replayable}). */
  boolean replayable() {
    RecordedParameters p = params;
    return p == null || p.replayable();
  }

  /**
   * Whether this execution runs in autocommit under {@code preferQueryMode=simple} ({@link
   * CarriedSimple#inAutocommit}); in a transaction no {@link CarriedSimple} is made.
   */
  private boolean simpleInAutocommit() throws SQLException {
    if (!connection.getAutoCommit()) {
      return false;
    }
    CarriedSimple s = simple;
    if (s == null) {
      s = new CarriedSimple(connection, this, raw);
      simple = s;
    }
    return s.inAutocommit();
  }

  /**
   * The carrier of a statement {@code connection.prepareStatement(args)} returned, or null if its
   * executions cannot carry the check.
   */
  static @Nullable CarriedCheck of(
      Connection connection, Statement raw, Class<?> type, Object @Nullable [] args) {
    if (type != PreparedStatement.class
        || args == null
        || !(args[0] instanceof String sql)
        || !oneStatement(sql)) {
      return null;
    }
    if (plain(args)) {
      return new CarriedCheck(connection, (PreparedStatement) raw, sql, null);
    }
    String[] columns = CarriedKeys.columns(args);
    return columns == null
        ? null
        : new CarriedCheck(connection, (PreparedStatement) raw, sql, columns);
  }

  /**
   * prepareStatement(sql), (sql, NO_GENERATED_KEYS), (sql, FORWARD_ONLY, READ_ONLY), and (sql, an
   * empty array of column names or indexes), which pgjdbc prepares as (sql).
   */
  private static boolean plain(Object[] args) {
    return switch (args.length) {
      case 1 -> true;
      case 2 ->
          args[1] instanceof Integer keys && keys == Statement.NO_GENERATED_KEYS
              || args[1] instanceof String[] names && names.length == 0
              || args[1] instanceof int[] indexes && indexes.length == 0;
      case 3 ->
          args[1] instanceof Integer type
              && type == ResultSet.TYPE_FORWARD_ONLY
              && args[2] instanceof Integer concurrency
              && concurrency == ResultSet.CONCUR_READ_ONLY;
      default -> false;
    };
  }

  /**
   * Whether {@code sql} is surely one statement: no {@code ;} but trailing ones. A {@code ;} in a
   * literal or comment only costs the carry; the check still runs, in its own round trip.
   */
  static boolean oneStatement(String sql) {
    int semicolon = sql.indexOf(';');
    if (semicolon < 0) {
      return true;
    }
    for (int i = semicolon; i < sql.length(); i++) {
      char c = sql.charAt(i);
      if (c != ';' && !Character.isWhitespace(c)) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether the statement's batches can carry the check ({@link CarriedBatch}): one statement,
   * prepared without generated keys.
   */
  boolean batchable() {
    return keyColumns == null;
  }

  /** The statement whose results, update counts and warnings the caller sees. */
  Statement current() {
    return current;
  }

  /** Records a call the driver's statement accepted, if it sets a parameter. */
  void called(Method method, Object @Nullable [] args) {
    if (args == null || args.length < 2 || !(args[0] instanceof Integer)) {
      return; // not a parameter's setter (setMaxRows, setFetchSize, ...)
    }
    parameters().called(method, args);
  }

  /**
   * The parameters set so far, for the setters the statement records without reflection ({@link
   * RecordedParameters#set}); made at the first setter call.
   */
  RecordedParameters parameters() {
    RecordedParameters p = params;
    if (p == null) {
      p = new RecordedParameters();
      params = p;
    }
    return p;
  }

  void clearParameters() {
    RecordedParameters p = params;
    if (p != null) {
      p.clear();
    }
  }

  /**
   * No execution carries the check any more: after {@code closeOnCompletion} (the driver's
   * statement must close with its own results), or once the caller holds the driver's statement
   * ({@code unwrap}), whose parameters it may set behind the recording.
   */
  void stopCarrying() {
    stopped = true;
  }

  /** Whether no execution carries the check any more ({@link #stopCarrying}). */
  boolean stopped() {
    return stopped;
  }

  /**
   * The execution under way sent nothing (the driver refused it first): the driver's statement is
   * the current one again, its results as they were.
   */
  void nothingSent() {
    current = raw;
  }

  /** The driver's statement executes now (not carrying the check). */
  void executingRaw() throws SQLException {
    switchTo(raw);
  }

  /** Whether this execution ({@code name} with {@code args}) can carry the check. */
  boolean canCarry(String name, Object @Nullable [] args) {
    return (args == null || args.length == 0)
        && replayable()
        && !stopped
        && (name.equals("execute")
            || name.equals("executeQuery")
            || name.equals("executeUpdate")
            || name.equals("executeLargeUpdate"));
  }

  /**
   * Runs {@code name} (an execution {@link #canCarry} accepted) behind the check, in one round
   * trip. Null if nothing was sent (the caller then checks on its own and executes as usual).
   */
  Carrier.@Nullable Carried run(String name, CheckArguments check) throws SQLException {
    if (raw.getFetchSize() != 0) {
      return null; // cursor fetching: the driver's own execution
    }
    String[] columns = keyColumns;
    if (columns != null && raw.getMaxRows() != 0) {
      return null; // the keys cut to max rows: the driver's own execution
    }
    if (columns == null && simpleInAutocommit()) {
      return Objects.requireNonNull(simple).run(name, check);
    }
    return combined().run(name, check);
  }

  /**
   * Makes {@code c} the statement executing now, for the caller's execution: the caller's
   * parameters at their index + {@code shift}, its settings, the driver's statement's results
   * closed as at its own next execution.
   */
  void prepare(PreparedStatement c, int shift) throws SQLException {
    c.clearParameters();
    RecordedParameters p = params;
    if (p != null) {
      p.replay(c, shift);
    }
    c.setMaxRows(raw.getMaxRows());
    c.setQueryTimeout(raw.getQueryTimeout());
    c.setMaxFieldSize(raw.getMaxFieldSize());
    c.setFetchDirection(raw.getFetchDirection());
    switchTo(c);
  }

  /** {@code s} executes no more: the driver's statement is the current one again if it was. */
  void leave(Statement s) throws SQLException {
    if (current == s) {
      switchTo(raw);
    }
  }

  /** A read in autocommit with the commit's check behind it ({@link CarriedRead}). */
  private Carrier.@Nullable Carried runRead(String name, String check) throws SQLException {
    if (keyColumns != null || raw.getFetchSize() != 0 || !CheckedRead.carries(raw, name, sql)) {
      return null;
    }
    if (simpleInAutocommit()) {
      return Objects.requireNonNull(simple).runRead(name, check);
    }
    CarriedRead r = read;
    if (r == null) {
      r = new CarriedRead(connection, this, sql);
      read = r;
    }
    return r.run(name, check);
  }

  /**
   * The carrier of the execution {@code name} ({@link #canCarry} accepted): the check and the
   * statement one implicit transaction in autocommit only with the extended protocol and no Sync
   * possible between them ({@link SyncSplit}). This carrier itself, for the execution under way (a
   * statement executes one thing at a time): no object made per execution.
   */
  Carrier carrier(String name, IntFunction<List<String>> checkTexts) {
    this.executing = name;
    this.checkTexts = checkTexts;
    return this;
  }

  @Override
  public Carrier.@Nullable Carried call(CheckArguments check) throws SQLException {
    return run(executing, check);
  }

  @Override
  public Carrier.@Nullable Carried callRead(String check) throws SQLException {
    return runRead(executing, check);
  }

  @Override
  public boolean manyTransactionsInAutocommit(PreferQueryMode mode, int tokens) {
    if (mode == PreferQueryMode.SIMPLE) {
      // carried on a plain statement, one query message (CarriedSimple), but with generated keys
      return keyColumns != null || stopped || !CarriedSimple.available();
    }
    IntFunction<List<String>> texts = checkTexts;
    if (texts == null) {
      return true; // no execution under way
    }
    try {
      // the combined statements this execution may use: in autocommit every bound token is
      // checked (the transaction is new), so the check's forms follow their number
      List<String> all = texts.apply(tokens);
      for (int i = 0; i < all.size(); i++) {
        String checkSql = all.get(i);
        if (keyColumns != null && checkSql.indexOf(';') >= 0) {
          continue; // with generated keys the check is one statement (CarriedCombined)
        }
        PreparedStatement c = combined().statement(checkSql);
        if (c == null || SyncSplit.possible(c, SyncSplit.preparedQuery(c))) {
          return true;
        }
      }
      return false;
    } catch (SQLException e) {
      return true;
    }
  }

  /**
   * {@code getGeneratedKeys()}: those of the statement that executed last; after a failed carried
   * execution none, as the driver's (its empty result set).
   */
  ResultSet generatedKeys() throws SQLException {
    if (keyColumns == null || current == raw) {
      return raw.getGeneratedKeys();
    }
    PreparedStatement c = (PreparedStatement) current;
    CarriedCombined m = combined;
    ResultSet k = m == null ? null : m.keys();
    return k != null ? k : c.getGeneratedKeys();
  }

  /**
   * {@code next} executes now: the current statement's results (and generated keys) closed, as the
   * driver closes them when it executes again.
   */
  void switchTo(Statement next) throws SQLException {
    if (current != next) {
      ResultSet open = current.getResultSet();
      if (open != null) {
        open.close();
      }
      if (keyColumns != null) {
        CarriedCombined m = combined;
        ResultSet k = current == raw ? raw.getGeneratedKeys() : m == null ? null : m.keys();
        if (k != null) {
          k.close();
        }
        if (m != null) {
          m.keysClosed();
        }
      }
      current = next;
    }
  }

  void close() throws SQLException {
    CarriedCombined m = combined;
    CarriedRead r = read;
    CarriedSimple s = simple;
    if (m == null && r == null && s == null) {
      return; // nothing made (most statements: they never carried)
    }
    SQLException failed = null;
    List<Statement> statements = new ArrayList<>();
    if (m != null) {
      statements.addAll(m.statements());
    }
    PreparedStatement t = r == null ? null : r.statement();
    if (t != null) {
      statements.add(t);
    }
    Statement plain = s == null ? null : s.made();
    if (plain != null) {
      statements.add(plain);
    }
    for (Statement c : statements) {
      try {
        c.close();
      } catch (SQLException e) {
        if (failed == null) {
          failed = e;
        } else {
          failed.addSuppressed(e);
        }
      }
    }
    if (failed != null) {
      throw failed;
    }
  }

  void cancel() throws SQLException {
    CarriedCombined m = combined;
    if (m != null) {
      for (PreparedStatement c : m.statements()) {
        c.cancel(); // the driver's cancel of an idle statement does nothing
      }
    }
    CarriedRead r = read;
    PreparedStatement t = r == null ? null : r.statement();
    if (t != null) {
      t.cancel();
    }
    CarriedSimple s = simple;
    Statement plain = s == null ? null : s.made();
    if (plain != null) {
      plain.cancel();
    }
  }
}
