package dev.fencing.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.util.List;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.postgresql.jdbc.PgConnection;
import org.postgresql.util.ServerErrorMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Compare, seen from Java: the one place that asks PostgreSQL to check tokens (the fence's SQL
 * function {@code check_tokens}) and turns a refusal into the library's exception, after rolling
 * the transaction back and recording the refusal.
 *
 * <p>A refusal is recorded by {@link RefusalRecorder}; one whose recording fails (the connection
 * was lost, the server crashed between the rollback and the record, or the database does not agree
 * yet that the lease is lost) is kept and recorded after the next successful commit or rollback of
 * any connection of the same {@link FencedDataSource}, so the rejection log still gets every
 * refusal a client saw, as long as the client goes on.
 */
final class TokenChecker {
  private static final Logger log = LoggerFactory.getLogger(TokenChecker.class);

  /**
   * A call of a check function: with arrays bound as parameters, and, for the usual single token,
   * with its resource and token bound as plain parameters (no array objects to build per check).
   */
  private record Call(String many, String one) {
    /**
     * The commit's check: {@code SELECT <schema>.check_one(?, ?) WHERE} {@link
     * CheckLiteral#WRITTEN} ({@code check_tokens} for several): the check's row if the transaction
     * wrote (it has a transaction id, however the write was hidden) or holds a {@code WITH HOLD}
     * cursor (whose query runs inside {@code COMMIT}), else no row. That is {@code
     * check_tokens_if_written}'s own first test, in SQL: a transaction that wrote nothing calls no
     * function (a {@code SECURITY DEFINER} call with its own search_path is most of what an empty
     * check cost the backend), and one that wrote binds no arrays for one token. The test is a qual
     * without columns, which PostgreSQL evaluates before the select list (a Result node's one-time
     * filter), in a custom or a generic plan alike (the function is not immutable, so no plan holds
     * its value). It costs the backend fewer instructions than {@link CheckLiteral#IF_WRITTEN}'s
     * CASE (docs/benchmark/read-only-commit.md).
     */
    static Call ifWritten(String schema, String after) {
      String written = " WHERE " + CheckLiteral.WRITTEN + after;
      return new Call(
          "SELECT " + schema + ".check_tokens(?, ?)" + written,
          "SELECT " + schema + ".check_one(?, ?)" + written);
    }

    /**
     * {@code check_tokens}, and for one token {@code check_one} (V21): the same decision and result
     * with plain arguments, no arrays for the server to parse and take apart.
     */
    static Call check(String schema) {
      return new Call(
          "SELECT " + schema + ".check_tokens(?, ?)", "SELECT " + schema + ".check_one(?, ?)");
    }
  }

  private final Predicate<String> placed;
  private final String schema;
  private final Call checkSql;
  private final Call checkIfWrittenSql;
  private final Call checkAndCommitSql;
  private final RefusalRecorder recorder;
  private final boolean recordRejections;
  private final FencingMetrics metrics;
  private final TableGuards guards = new TableGuards();
  // the forms a carried check takes, and what this data source learned to choose them (V30)
  private final CheckForms forms;

  TokenChecker(
      String schema, Predicate<String> placed, boolean recordRejections, FencingMetrics metrics) {
    this.placed = placed;
    this.schema = schema;
    this.checkSql = Call.check(schema);
    this.forms = new CheckForms(schema);
    this.checkIfWrittenSql = Call.ifWritten(schema, "");
    // one round trip: pgjdbc sends both statements before a single Sync
    this.checkAndCommitSql = Call.ifWritten(schema, "; COMMIT");
    this.recorder = new RefusalRecorder(schema);
    this.recordRejections = recordRejections;
    this.metrics = metrics;
  }

  /**
   * The tokens bound on the calling thread for resources that live in this data source's database
   * ({@link FencedDataSource.Builder#resources}): the only ones its connections check and carry.
   */
  FencingContext bound() {
    return Fencing.current().only(placed);
  }

  /** The tables of fenced entities declared for this data source ({@link FencedTables}). */
  TableGuards guards() {
    return guards;
  }

  /** Whether {@code resource} lives in this data source's database. */
  boolean places(String resource) {
    return placed.test(resource);
  }

  /**
   * Checks {@code bindings} in the open transaction of {@code connection} (autocommit off), for the
   * execution of {@code caller} (null: none), whose query timeout and {@code cancel()} the check
   * honours ({@link #run}). On success the database holds the fence for them until the transaction
   * ends.
   *
   * @throws FencingRefusedException after rolling the transaction back
   */
  void check(
      Connection connection,
      List<FencingContext.Binding> bindings,
      @Nullable StatementInFlight caller)
      throws SQLException {
    run(connection, bindings, checkSql, caller);
  }

  /**
   * Checks {@code bindings} if the open transaction of {@code connection} wrote anything (it has a
   * transaction id, however the write was hidden), then commits it: both in one round trip. A
   * transaction that wrote nothing is committed unchecked; one whose check fails is rolled back.
   * For the execution of {@code caller} (null: none, {@code commit()}), whose query timeout and
   * {@code cancel()} the check honours ({@link #run}).
   *
   * @throws FencingRefusedException after rolling the transaction back
   */
  void checkAndCommit(
      Connection connection,
      List<FencingContext.Binding> bindings,
      @Nullable StatementInFlight caller)
      throws SQLException {
    run(connection, bindings, checkAndCommitSql, caller);
  }

  /**
   * The text {@link #checkAndCommit} sends for {@code tokens} tokens: the check and {@code COMMIT},
   * its parameters the resource and token ({@code check_one}) or two arrays ({@code check_tokens}).
   */
  String checkAndCommitSql(int tokens) {
    return tokens == 1 ? checkAndCommitSql.one() : checkAndCommitSql.many();
  }

  /**
   * Checks {@code bindings} if the open transaction of {@code connection} wrote anything; checks
   * nothing (and takes no lock) if it did not. Returns whether it checked. For the execution of
   * {@code caller} (a {@code COMMIT} in SQL; null: none), whose query timeout and {@code cancel()}
   * the check honours ({@link #run}).
   */
  boolean checkIfWritten(
      Connection connection,
      List<FencingContext.Binding> bindings,
      @Nullable StatementInFlight caller)
      throws SQLException {
    return run(connection, bindings, checkIfWrittenSql, caller);
  }

  /**
   * Every text a prepared statement may carry the check of {@code tokens} tokens with now ({@link
   * CheckForms#texts}).
   */
  List<String> checkTexts(int tokens) {
    return forms.texts(tokens);
  }

  /**
   * The check of {@code bindings} for a statement that carries it, in the forms a carrier sends
   * ({@link CheckArguments}: for one token usually {@link CheckForms}' function-free form), after
   * refusing any binding whose lease is known lost (as {@link #check} does).
   */
  CheckArguments arguments(Connection connection, List<FencingContext.Binding> bindings)
      throws SQLException {
    refuseLostLeases(connection, bindings);
    return new CheckArguments(connection, forms.form(bindings), forms, schema, bindings);
  }

  /**
   * The commit's check of {@code bindings} with literal arguments, to send behind a read in
   * autocommit ({@link CheckedRead}), after refusing any binding whose lease is known lost (as the
   * commit's check does).
   */
  String checkIfWrittenLiteral(Connection connection, List<FencingContext.Binding> bindings)
      throws SQLException {
    refuseLostLeases(connection, bindings);
    return CheckLiteral.ifWritten(schema, bindings);
  }

  /**
   * The failure of a statement that carried the check of {@code bindings}: a refusal (the check's,
   * or one the statement itself met) rolled back, recorded and translated as {@link #check} does;
   * anything else as it is.
   */
  SQLException carriedFailed(
      Connection connection, SQLException e, List<FencingContext.Binding> bindings) {
    ServerErrorMessage server = FencingExceptions.serverError(e);
    boolean check =
        bindings.size() == 1
            && server != null
            && server.getWhere() != null
            && (server.getWhere().contains(".check_one(")
                || server.getWhere().contains(".check_tokens("));
    FencingRefusedException refusal =
        FencingExceptions.translate(
            e,
            check ? bindings.get(0).token().resource() : null,
            check ? bindings.get(0).token().value() : null);
    return refusal == null ? e : refuse(connection, refusal, true);
  }

  /** Counts a check a statement carried: {@code advanced} is the check's result. */
  void carried(int tokens, @Nullable Object advanced, long nanos) {
    if (advanced instanceof Number n) {
      metrics.checked(tokens, n.intValue(), nanos);
    }
  }

  private void refuseLostLeases(Connection connection, List<FencingContext.Binding> bindings)
      throws FencingRefusedException {
    for (FencingContext.Binding b : bindings) {
      Lease lease = b.lease();
      if (lease != null && lease.isLost()) {
        throw refuse(
            connection,
            new LeaseLostException(
                "lease on " + b.token() + " is lost; its token is no longer carried",
                FencingSqlState.LEASE_NOT_HELD.code(),
                b.token().resource(),
                b.token().value(),
                null,
                null),
            true);
      }
    }
  }

  /**
   * Runs {@code call} for {@code bindings} on a statement of its own. With a {@code caller} (the
   * fenced statement whose execution the check is for; null for {@code commit()}), the check takes
   * over the caller's query timeout and the caller's {@code cancel()} cancels it ({@link
   * StatementInFlight#checking}): a check that waits for a handover is stopped as the caller's
   * statement would be, with PostgreSQL's {@code 57014}, which is no refusal.
   */
  private boolean run(
      Connection connection,
      List<FencingContext.Binding> bindings,
      Call call,
      @Nullable StatementInFlight caller)
      throws SQLException {
    refuseLostLeases(connection, bindings);
    boolean one = bindings.size() == 1;
    CheckArguments check =
        new CheckArguments(connection, one ? call.one() : call.many(), schema, bindings);
    long start = System.nanoTime();
    @Nullable Integer advanced;
    try (PreparedStatement ps = connection.prepareStatement(check.sql())) {
      if (caller != null) {
        int timeout = caller.queryTimeout();
        if (timeout > 0) {
          ps.setQueryTimeout(timeout);
        }
        caller.checking(ps);
      }
      try {
        check.bind(ps); // a resource and its token, or two arrays
        ps.execute(); // the check's row, none if it did not run; then, for checkAndCommit, COMMIT's
        try (ResultSet rs = ps.getResultSet()) {
          advanced = check.returned(rs.next() ? rs : null);
        }
        while (ps.getMoreResults() || ps.getUpdateCount() != -1) {
          // drain the COMMIT's result
        }
      } finally {
        if (caller != null) {
          caller.checking(null);
        }
        if (call == checkAndCommitSql) {
          commitWarnings(connection, ps);
        }
      }
    } catch (SQLException e) {
      FencingToken only = one ? bindings.get(0).token() : null;
      FencingRefusedException refusal =
          FencingExceptions.translate(
              e, only != null ? only.resource() : null, only != null ? only.value() : null);
      if (refusal == null) {
        throw e;
      }
      throw refuse(connection, refusal, true);
    }
    if (advanced != null) {
      metrics.checked(bindings.size(), advanced, System.nanoTime() - start);
      return true;
    }
    return false;
  }

  /**
   * The warnings of the {@code COMMIT} (a deferred trigger's {@code RAISE WARNING}) are the
   * connection's, as pgjdbc's own {@code commit()} leaves them, not the hidden statement's.
   */
  private static void commitWarnings(Connection connection, PreparedStatement ps)
      throws SQLException {
    SQLWarning warnings = ps.getWarnings();
    if (warnings != null && connection.isWrapperFor(PgConnection.class)) {
      connection.unwrap(PgConnection.class).addWarning(warnings);
    }
  }

  /**
   * Rolls back, logs, counts and (if {@code record}) records {@code refusal}; returns it for the
   * caller to throw. Refusals of the database and of a lease the client knows lost are recorded
   * (the rejection log holds every refusal a client saw of a token); a write with no token bound
   * names no resource and is not.
   */
  FencingRefusedException refuse(
      Connection connection, FencingRefusedException refusal, boolean record) {
    try {
      if (!connection.getAutoCommit()) {
        connection.rollback();
      } // else the failed statement was its own transaction, and is rolled back
    } catch (SQLException e) {
      refusal.addSuppressed(e);
    }
    log.warn(
        "fencing refused a write to {} with token {} (max_seen {}): {}",
        refusal.resource(),
        refusal.presentedToken(),
        refusal.maxSeen(),
        refusal.getMessage());
    metrics.refused(refusal);
    if (record && recordRejections) {
      recorder.record(connection, refusal);
    }
    return refusal;
  }

  /**
   * Records the refusals whose recording failed, on {@code connection}, which is between
   * transactions (right after a successful commit or rollback). Never throws: what cannot be
   * recorded now stays for the next time.
   */
  void recordPending(Connection connection) {
    recorder.recordPending(connection);
  }
}
