package dev.fencing.jdbc;

import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;
import org.postgresql.core.BaseConnection;
import org.postgresql.jdbc.PreferQueryMode;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;

/**
 * Issue 13, no extra round trip: the check of a transaction's first write travels with the write.
 * For a {@code PreparedStatement} of one statement, the execution that needs the check runs {@code
 * SELECT <schema>.check_one(?, ?); <the statement's SQL>} instead (for several tokens {@code
 * check_tokens(?, ?)}), one multi-statement prepared statement (the resource and token, or the two
 * arrays, at 1 and 2, the caller's parameters replayed at their index + 2). pgjdbc sends both
 * statements before one Sync: one round trip; a refusal by the check makes the server skip the
 * statement. The check's row is read and hidden; what the caller gets (the return value, results,
 * update counts, warnings, the driver's own exceptions) is the statement's, as the driver gives it
 * for the call made.
 *
 * <p>The caller's statement stays the driver's statement, used by every other execution; this
 * records its parameters (index, setter, arguments) for the replay, and knows which of the two
 * statements executed last, whose results the caller sees.
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
final class CarriedCheck {
  private final Connection connection;
  private final PreparedStatement raw;
  private final String sql;
  // the columns of a statement prepared for generated keys (CarriedKeys), else null
  private final String @Nullable [] keyColumns;
  // the generated keys of the combined statement's last execution
  private @Nullable ResultSet keys;
  private final RecordedParameters params = new RecordedParameters();
  private boolean stopped;
  // the combined statements, by the check's text (check_one's, check_tokens'): each prepared once
  private final Map<String, PreparedStatement> combined = new HashMap<>(2);
  // the statement whose results the caller sees: the one that executed last
  private Statement current;
  // a read in autocommit with the commit's check (literal) behind it
  private final CarriedRead read;
  // the execution in autocommit under preferQueryMode=simple: one query message
  private final CarriedSimple simple;

  private CarriedCheck(
      Connection connection, PreparedStatement raw, String sql, String @Nullable [] keyColumns) {
    this.connection = connection;
    this.raw = raw;
    this.sql = sql;
    this.keyColumns = keyColumns;
    this.current = raw;
    this.read = new CarriedRead(connection, this, sql);
    this.simple = new CarriedSimple(connection, raw);
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
    params.called(method, args);
  }

  void clearParameters() {
    params.clear();
  }

  /**
   * No execution carries the check any more: after {@code closeOnCompletion} (the driver's
   * statement must close with its own results), or once the caller holds the driver's statement
   * ({@code unwrap}), whose parameters it may set behind the recording.
   */
  void stopCarrying() {
    stopped = true;
  }

  /** The driver's statement executes now (not carrying the check). */
  void executingRaw() throws SQLException {
    switchTo(raw);
  }

  /** Whether this execution ({@code name} with {@code args}) can carry the check. */
  boolean canCarry(String name, Object @Nullable [] args) {
    return (args == null || args.length == 0)
        && params.replayable()
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
      Carrier plain = onPlain(simple.carrier(name));
      return plain == null ? null : sent(plain.call(check));
    }
    PreparedStatement c = combined(check.sql());
    if (c == null) {
      return null;
    }
    boolean update =
        columns == null && (name.equals("executeUpdate") || name.equals("executeLargeUpdate"));
    keys = null; // the driver closes them at the next execution
    prepare(c, 2);
    c.setObject(1, check.first()); // a resource and its token (check_one), or two arrays
    c.setObject(2, check.second());
    // The driver's executeUpdate fetches at most one row of a query, whose result it refuses.
    if (update) {
      c.setMaxRows(1);
    }
    try {
      c.execute();
    } catch (PSQLException e) {
      if (e.getServerErrorMessage() == null
          && PSQLState.INVALID_PARAMETER_VALUE.getState().equals(e.getSQLState())) {
        current = raw; // a parameter unset: refused before anything was sent
        return null;
      }
      throw e;
    }
    Object advanced = null;
    // with generated keys, each statement's rows and then its count; the check's row the "keys"
    try (ResultSet checkRow = columns == null ? c.getResultSet() : c.getGeneratedKeys()) {
      if (checkRow != null && checkRow.next()) {
        int n = checkRow.getInt(1); // the check's integer (getObject looks its type up per call)
        advanced = checkRow.wasNull() ? null : n;
      }
    }
    boolean isResultSet;
    if (columns == null) {
      isResultSet = c.getMoreResults();
    } else {
      // past the check's count: the statement's RETURNING rows, kept as its generated keys, then
      // its count, where the driver's own statement leaves the caller (execute() is false)
      if (c.getMoreResults(Statement.KEEP_CURRENT_RESULT)) {
        keys = c.getResultSet();
        c.getMoreResults(Statement.KEEP_CURRENT_RESULT);
      }
      isResultSet = c.getResultSet() != null;
    }
    return new Carrier.Carried(DriverResult.of(name, c, isResultSet), advanced);
  }

  /**
   * Makes {@code c} the statement executing now, for the caller's execution: the caller's
   * parameters at their index + {@code shift}, its settings, the driver's statement's results
   * closed as at its own next execution.
   */
  void prepare(PreparedStatement c, int shift) throws SQLException {
    c.clearParameters();
    params.replay(c, shift);
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
      Carrier plain = onPlain(simple.carrier(name));
      return plain == null ? null : sent(plain.callRead(check));
    }
    return read.run(name, check);
  }

  /**
   * Whether this execution runs in autocommit under {@code preferQueryMode=simple}: carried on a
   * plain statement as one query message ({@link CarriedSimple}).
   */
  private boolean simpleInAutocommit() throws SQLException {
    return connection.getAutoCommit()
        && connection.isWrapperFor(BaseConnection.class)
        && connection.unwrap(BaseConnection.class).getPreferQueryMode() == PreferQueryMode.SIMPLE;
  }

  /**
   * The plain statement executes now ({@link CarriedSimple}), if {@code plain} is its carrier: the
   * earlier results closed, as at the driver's next execution.
   */
  private @Nullable Carrier onPlain(@Nullable Carrier plain) throws SQLException {
    Statement s = simple.made();
    if (plain != null && s != null) {
      switchTo(s);
    }
    return plain;
  }

  /** What the plain statement's execution returned; if nothing was sent, the driver's again. */
  private Carrier.@Nullable Carried sent(Carrier.@Nullable Carried carried) throws SQLException {
    Statement s = simple.made();
    if (carried == null && s != null) {
      leave(s);
    }
    return carried;
  }

  /**
   * The combined statement of {@code checkSql}, prepared once (no round trip: pgjdbc parses it on
   * the client); null if the statement is never carried.
   */
  private @Nullable PreparedStatement combined(String checkSql) throws SQLException {
    PreparedStatement c = combined.get(checkSql);
    if (c == null && !stopped) {
      String[] columns = keyColumns;
      String carried = columns == null ? sql : CarriedKeys.returning(connection, raw, sql, columns);
      if (carried == null) {
        stopped = true; // pgjdbc appends no RETURNING to it: never carried
        return null;
      }
      // no space after the ";": the statement's text, and an error's position in it, as unfenced
      c = connection.prepareStatement(checkSql + ";" + carried);
      if (columns != null && !CarriedKeys.rowsAndCounts(c)) {
        c.close();
        stopped = true;
        return null;
      }
      combined.put(checkSql, c);
    }
    return c;
  }

  /**
   * The carrier of the execution {@code name} ({@link #canCarry} accepted): the check and the
   * statement one implicit transaction in autocommit only with the extended protocol and no Sync
   * possible between them ({@link SyncSplit}).
   */
  Carrier carrier(String name, IntFunction<String> checkSql) {
    return new Carrier() {
      @Override
      public Carrier.@Nullable Carried call(CheckArguments check) throws SQLException {
        return run(name, check);
      }

      @Override
      public Carrier.@Nullable Carried callRead(String check) throws SQLException {
        return runRead(name, check);
      }

      @Override
      public boolean manyTransactionsInAutocommit(PreferQueryMode mode, int tokens) {
        if (mode == PreferQueryMode.SIMPLE) {
          // carried on a plain statement, one query message (CarriedSimple), but with generated
          // keys
          return keyColumns != null || stopped || !CarriedSimple.available();
        }
        try {
          // the combined statement this execution will use: in autocommit every bound token is
          // checked (the transaction is new), so the check's form follows their number
          PreparedStatement c = combined(checkSql.apply(tokens));
          return c == null || SyncSplit.possible(c, SyncSplit.preparedQuery(c));
        } catch (SQLException e) {
          return true;
        }
      }
    };
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
    ResultSet k = keys;
    return k != null ? k : c.getGeneratedKeys();
  }

  /** As the driver closes a statement's results (and generated keys) when it executes again. */
  private void switchTo(Statement next) throws SQLException {
    if (current != next) {
      ResultSet open = current.getResultSet();
      if (open != null) {
        open.close();
      }
      if (keyColumns != null) {
        ResultSet k = current == raw ? raw.getGeneratedKeys() : keys;
        if (k != null) {
          k.close();
        }
        keys = null;
      }
      current = next;
    }
  }

  void close() throws SQLException {
    SQLException failed = null;
    List<PreparedStatement> all = new ArrayList<>(combined.values());
    PreparedStatement t = read.statement();
    if (t != null) {
      all.add(t);
    }
    List<Statement> statements = new ArrayList<>(all);
    Statement plain = simple.made();
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
    for (PreparedStatement c : combined.values()) {
      c.cancel(); // the driver's cancel of an idle statement does nothing
    }
    PreparedStatement t = read.statement();
    if (t != null) {
      t.cancel();
    }
    Statement plain = simple.made();
    if (plain != null) {
      plain.cancel();
    }
  }
}
