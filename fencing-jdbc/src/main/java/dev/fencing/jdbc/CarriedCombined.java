package dev.fencing.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;

/**
 * The combined statements of a {@link CarriedCheck}: {@code <check>;<the statement's SQL>} (with
 * {@code RETURNING <columns>} for generated keys, {@link CarriedKeys}) prepared once per check text
 * ({@link CheckForms}: the fast form's two statements, check_one's, check_tokens'), and their
 * execution: the check's arguments first ({@link CheckArguments#bind}), the caller's parameters
 * replayed after them, each check statement's row read and hidden, the driver left at the
 * statement's results (and, with generated keys, its {@code RETURNING} rows kept as its keys, the
 * check's rows read past as the driver reports them there: {@link #keyedCheckRow}).
 */
final class CarriedCombined {
  private final Connection connection;
  private final CarriedCheck owner;
  private final PreparedStatement raw;
  private final String sql;
  // the columns of a statement prepared for generated keys (CarriedKeys), else null
  private final String @Nullable [] keyColumns;
  // The combined texts, by the check's text and the statement's: made once per text, not per
  // carrier (a new PreparedStatement per transaction would otherwise build and hash it anew each
  // time, for pgjdbc's statement cache to find the same server-prepared statement).
  private static final ConcurrentHashMap<String, TextMemo<String>> TEXTS =
      new ConcurrentHashMap<>();

  // the combined statements, by the check's text (check_one's, check_tokens'): each prepared once;
  // the first in a field (one form per transaction is the rule), any other in the map
  private @Nullable String firstCheck;
  private @Nullable PreparedStatement first;
  private @Nullable Map<String, PreparedStatement> others;
  // the generated keys of the combined statement's last execution
  private @Nullable ResultSet keys;

  CarriedCombined(
      Connection connection,
      CarriedCheck owner,
      PreparedStatement raw,
      String sql,
      String @Nullable [] keyColumns) {
    this.connection = connection;
    this.owner = owner;
    this.raw = raw;
    this.sql = sql;
    this.keyColumns = keyColumns;
  }

  /**
   * Runs {@code name} behind {@code check} on its combined statement, in one round trip. Null if
   * nothing was sent (the caller then checks on its own and executes as usual).
   */
  Carrier.@Nullable Carried run(String name, CheckArguments check) throws SQLException {
    String[] columns = keyColumns;
    PreparedStatement c = statement(check.sql());
    if (c == null) {
      return null;
    }
    boolean update =
        columns == null && (name.equals("executeUpdate") || name.equals("executeLargeUpdate"));
    keys = null; // the driver closes them at the next execution
    owner.prepare(c, check.parameters());
    check.bind(c); // a resource and its token (check_one, or the fast form's), or two arrays
    // The driver's executeUpdate fetches at most one row of a query, whose result it refuses.
    if (update) {
      c.setMaxRows(1);
    }
    try {
      c.execute();
    } catch (PSQLException e) {
      if (e.getServerErrorMessage() == null
          && PSQLState.INVALID_PARAMETER_VALUE.getState().equals(e.getSQLState())) {
        owner.nothingSent(); // a parameter unset: refused before anything was sent
        return null;
      }
      throw e;
    }
    Object advanced = null;
    if (columns == null) {
      // each check statement's row (the fast form's lock, then its read), the last one the check's
      for (int i = 1; i < check.statements(); i++) {
        c.getMoreResults(); // closes the row before
      }
      advanced = checkRow(c.getResultSet(), check);
    } else {
      // with generated keys, each statement's rows and then its count, the first statement's rows
      // the "keys": the check's row there, or (the fast form) the lock's, then the check's next
      advanced = keyedCheckRow(c, check);
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
   * What the check's row says, read from {@code c} executed for generated keys, whose results are
   * each statement's rows and then its count, the first statement's rows taken as the driver's
   * "generated keys"; leaves {@code c} at the last check statement's count, where the caller's
   * statement's results begin.
   */
  private static @Nullable Object keyedCheckRow(PreparedStatement c, CheckArguments check)
      throws SQLException {
    ResultSet first = c.getGeneratedKeys();
    if (check.statements() == 1) {
      return checkRow(first, check);
    }
    if (first != null) {
      first.close(); // the fast form's lock: its row says nothing
    }
    // from the first statement's count to each next statement's rows and, but for the last, its
    // count (each move closes the rows before it)
    for (int i = 1; i < check.statements(); i++) {
      c.getMoreResults();
      if (i + 1 < check.statements()) {
        c.getMoreResults();
      }
    }
    Object advanced = checkRow(c.getResultSet(), check);
    c.getMoreResults(); // the check's count
    return advanced;
  }

  /** What the check's {@code rows} say (none: nothing, as no row), read and closed. */
  private static @Nullable Object checkRow(@Nullable ResultSet rows, CheckArguments check)
      throws SQLException {
    if (rows == null) {
      return null;
    }
    try (rows) {
      return check.returned(rows.next() ? rows : null);
    }
  }

  /**
   * The combined statement of {@code checkSql}, prepared once (no round trip: pgjdbc parses it on
   * the client); null if the statement is never carried (then no execution carries any more).
   */
  @Nullable PreparedStatement statement(String checkSql) throws SQLException {
    PreparedStatement c =
        checkSql.equals(firstCheck) ? first : others == null ? null : others.get(checkSql);
    if (c == null && !owner.stopped()) {
      String[] columns = keyColumns;
      String carried = columns == null ? sql : CarriedKeys.returning(connection, raw, sql, columns);
      if (carried == null) {
        owner.stopCarrying(); // pgjdbc appends no RETURNING to it: never carried
        return null;
      }
      // no space after the ";": the statement's text, and an error's position in it, as unfenced
      c = connection.prepareStatement(text(checkSql, carried));
      if (columns != null && !CarriedKeys.rowsAndCounts(c)) {
        c.close();
        owner.stopCarrying();
        return null;
      }
      if (first == null) {
        firstCheck = checkSql;
        first = c;
      } else {
        if (others == null) {
          others = new HashMap<>(2);
        }
        others.put(checkSql, c);
      }
    }
    return c;
  }

  /** {@code <check>;<statement>}, made once per pair of texts while the memo keeps it. */
  private static String text(String checkSql, String statement) {
    return TEXTS
        .computeIfAbsent(
            checkSql,
            check ->
                new TextMemo<>(
                    s -> check + ";" + s,
                    SqlClassifier.MEMO_ENTRIES,
                    SqlClassifier.MEMO_TEXT_LENGTH))
        .get(statement);
  }

  /** The generated keys of the last execution, if it kept any. */
  @Nullable ResultSet keys() {
    return keys;
  }

  /** The keys are closed (the driver's next execution). */
  void keysClosed() {
    keys = null;
  }

  /** The combined statements prepared so far (closed and cancelled with the caller's). */
  Collection<PreparedStatement> statements() {
    PreparedStatement f = first;
    if (f == null) {
      return List.of();
    }
    if (others == null) {
      return List.of(f);
    }
    List<PreparedStatement> all = new ArrayList<>(others.values());
    all.add(0, f);
    return all;
  }
}
