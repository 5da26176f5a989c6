package dev.fencing.jdbc;

import java.sql.Connection;
import java.sql.ParameterMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;
import org.postgresql.core.BaseConnection;
import org.postgresql.jdbc.PreferQueryMode;

/**
 * What a statement of a {@link FencedConnection} fences, for the three fenced statement classes
 * ({@link FencedStatement}, {@link FencedPreparedStatement}, {@link FencedCallableStatement}):
 * every {@code execute*} (including batches) is handed to the connection with the SQL it will run,
 * the results of the statement that executed last (the carrier's, if it carried the check) are the
 * caller's, result sets lead back to the fenced statement, and the way back to the connection is
 * the fenced one. Methods take the fenced statement as {@code self}.
 *
 * <p>Not thread-safe (the execution under way, the batch): JDBC statements need not be, and
 * pgjdbc's are not.
 */
final class StatementFence implements IntFunction<List<String>>, ConnectionFence.JdbcCall {
  private final FencedConnection connection;
  private final Statement raw;
  // A prepared statement's SQL is classified once, not per execution.
  private final SqlClassifier.@Nullable Classification prepared;
  private final @Nullable String preparedSql;
  // a plain statement's batch (its SQL, in order); made at its first addBatch(sql)
  private @Nullable List<String> batch;
  // A row of the batch (prepared, or a plain statement's SQL) that no entity write announced (a
  // bulk
  // write of a per-row table).
  private boolean batchUnannounced;

  // A prepared statement whose first write in a transaction can carry the check (issue 13).
  private final @Nullable CarriedCheck carrier;
  // The caller holds the driver's statement: a batch may hold entries the wrapper never saw.
  private boolean unwrapped;
  // the execution under way, which call() makes on the driver's statement (this is its JdbcCall:
  // none made per execution; a statement executes one thing at a time)
  private @Nullable StatementExecution executing;
  private Object @Nullable [] executingArgs;
  // The fenced result set handed out last for the driver's result set, and for its generated
  // keys: asked again for the same one, the caller gets the same object, as from the driver
  // (getResultSet() twice, executeQuery() then getResultSet()).
  private @Nullable ResultSet rawResult;
  private @Nullable ResultSet fencedResult;
  private @Nullable ResultSet rawKeys;
  private @Nullable ResultSet fencedKeys;
  // The fencing check of the execution under way while it runs in a round trip of its own, on a
  // statement of TokenChecker's (not carried): cancel() cancels it too. Written by the executing
  // thread, read by the one that cancels.
  private volatile @Nullable Statement check;

  private StatementFence(
      FencedConnection connection,
      Statement raw,
      @Nullable String preparedSql,
      @Nullable CarriedCheck carrier) {
    this.connection = connection;
    this.raw = raw;
    this.preparedSql = preparedSql;
    this.prepared = preparedSql == null ? null : SqlClassifier.classify(preparedSql);
    this.carrier = carrier;
  }

  /**
   * The fence of {@code raw}, which {@code prepareStatement} or {@code prepareCall} returned for
   * {@code prepareArgs} (null for a plain statement), {@code type} the interface it is made for.
   */
  static StatementFence of(
      FencedConnection connection,
      Statement raw,
      Class<? extends Statement> type,
      Object @Nullable [] prepareArgs) {
    String sql =
        prepareArgs != null && prepareArgs.length > 0 && prepareArgs[0] instanceof String s
            ? s
            : null;
    // only a PreparedStatement prepared with its SQL can carry (CarriedCheck.of)
    CarriedCheck carrier =
        type == PreparedStatement.class && prepareArgs != null
            ? CarriedCheck.of(connection.raw(), raw, type, prepareArgs)
            : null;
    return new StatementFence(connection, raw, sql, carrier);
  }

  /** The carrier of a prepared statement, which records its parameters; null if none. */
  @Nullable CarriedCheck carrier() {
    return carrier;
  }

  /** Runs {@code execution} with {@code args} (null for none), fenced. */
  @Nullable Object execute(Statement self, StatementExecution execution, Object @Nullable [] args)
      throws SQLException {
    try {
      return fencedExecution(self, execution, args);
    } catch (Throwable e) {
      throw Delegation.rethrown(e);
    }
  }

  private @Nullable Object fencedExecution(
      Statement self, StatementExecution execution, Object @Nullable [] args) throws Throwable {
    String name = execution.jdbcName;
    boolean isBatch = execution.batch;
    String sql = sqlOf(args, isBatch);
    List<TableGuards.Guard> guards = connection.guards().targets(connection.raw(), sql);
    boolean unannounced =
        !guards.isEmpty() && (isBatch ? batchUnannounced : !TableGuards.announced(guards));
    CarriedCheck c = carrier;
    Carrier carried =
        isBatch
            ? unwrapped && c == null
                ? null
                : CarriedBatch.of(raw, name, args, batchSql(), c != null && c.batchable())
            : c == null
                ? CarriedStatement.of(raw, name, args)
                : c.canCarry(name, args) ? c.carrier(name, this) : null;
    executing = execution;
    executingArgs = args;
    try {
      Object result =
          connection
              .fence()
              .execute(sql, kindOf(args, isBatch), guards, unannounced, this, carried);
      return result instanceof ResultSet rs ? result(rs, self) : result;
    } finally {
      executing = null;
      executingArgs = null;
      if (isBatch) {
        clearBatch();
      }
    }
  }

  /** {@code addBatch(sql)}. */
  void addBatch(@Nullable String sql) throws SQLException {
    if (sql != null) {
      List<String> b = batch;
      if (b == null) {
        b = new ArrayList<>();
        batch = b;
      }
      b.add(sql);
      // a plain statement's batch entry is judged like the statement executed alone: a per-row
      // table it writes needs an announcement (a native write has none), else the whole batch is
      // an unannounced write, refused unless the table is protected
      List<TableGuards.Guard> guards = connection.guards().targets(sql);
      batchUnannounced |= !guards.isEmpty() && !TableGuards.announced(guards);
    } else {
      preparedBatchRow();
    }
    raw.addBatch(sql);
  }

  /** {@code addBatch()} of a prepared statement. */
  void addBatch() throws SQLException {
    preparedBatchRow();
    ((PreparedStatement) raw).addBatch();
  }

  private void preparedBatchRow() throws SQLException {
    if (preparedSql != null) {
      List<TableGuards.Guard> guards = connection.guards().targets(connection.raw(), preparedSql);
      batchUnannounced |= !guards.isEmpty() && !TableGuards.announced(guards);
    }
  }

  void clearBatchOfRaw() throws SQLException {
    clearBatch();
    raw.clearBatch();
  }

  /** The statement that executed last (the carrier's, if it carried the check). */
  private Statement current() {
    CarriedCheck c = carrier;
    return c != null ? c.current() : raw;
  }

  @Nullable ResultSet getResultSet(Statement self) throws SQLException {
    return result(current().getResultSet(), self);
  }

  /** {@code rs} fenced, the same object as last time for the same driver's result set. */
  private @Nullable ResultSet result(@Nullable ResultSet rs, Statement self) {
    if (rs == null || rs != rawResult) {
      rawResult = rs;
      fencedResult = fence(rs, self);
    }
    return fencedResult;
  }

  int getUpdateCount() throws SQLException {
    return current().getUpdateCount();
  }

  long getLargeUpdateCount() throws SQLException {
    return current().getLargeUpdateCount();
  }

  boolean getMoreResults() throws SQLException {
    return current().getMoreResults();
  }

  boolean getMoreResults(int keep) throws SQLException {
    return current().getMoreResults(keep);
  }

  @Nullable SQLWarning getWarnings() throws SQLException {
    return current().getWarnings();
  }

  void clearWarnings() throws SQLException {
    current().clearWarnings();
  }

  @Nullable ResultSet getGeneratedKeys(Statement self) throws SQLException {
    CarriedCheck c = carrier;
    ResultSet keys = c != null ? c.generatedKeys() : raw.getGeneratedKeys();
    if (keys == null || keys != rawKeys) {
      rawKeys = keys;
      fencedKeys = fence(keys, self);
    }
    return fencedKeys;
  }

  void clearParameters() throws SQLException {
    CarriedCheck c = carrier;
    if (c != null) {
      c.clearParameters();
    }
    ((PreparedStatement) raw).clearParameters();
  }

  void closeOnCompletion() throws SQLException {
    CarriedCheck c = carrier;
    if (c != null) {
      c.stopCarrying();
    }
    raw.closeOnCompletion();
  }

  /**
   * The caller's query timeout in seconds (0: none), which a check run for its execution in a round
   * trip of its own takes over ({@link TokenChecker}): reading the driver's field, nothing sent.
   */
  int queryTimeout() throws SQLException {
    return raw.getQueryTimeout();
  }

  /**
   * {@code s} runs the fencing check of the execution under way in a round trip of its own, until
   * called again with null: {@link #cancel()} cancels it too.
   */
  void checking(@Nullable Statement s) {
    check = s;
  }

  /**
   * {@code cancel()}: the check of the execution under way if it runs on a statement of its own,
   * then the carrier's statements and the driver's. pgjdbc cancels only a statement still executing
   * and sends the cancel request before that statement's {@code execute} returns, so each cancel
   * reaches the check, or the caller's statement once it runs, never a later statement. A cancel
   * that comes after the check returned and before the caller's statement started is lost, as
   * pgjdbc loses one that comes before its own statement starts.
   */
  void cancel() throws SQLException {
    Statement s = check;
    if (s != null) {
      try {
        s.cancel();
      } catch (SQLException e) {
        if (check == s) {
          throw e;
        } // else the check ended (and its statement closed) meanwhile: nothing to cancel
      }
    }
    CarriedCheck c = carrier;
    if (c != null) {
      c.cancel();
    }
    raw.cancel();
  }

  void close() throws SQLException {
    CarriedCheck c = carrier;
    if (c != null) {
      c.close();
    }
    raw.close();
  }

  Connection getConnection() {
    return connection.proxy();
  }

  @SuppressWarnings("unchecked")
  <T> T unwrap(Statement self, Class<T> iface) throws SQLException {
    if (iface.isInstance(self)) {
      return (T) self;
    }
    CarriedCheck c = carrier;
    if (c != null) {
      c.stopCarrying();
    }
    unwrapped = true;
    return raw.unwrap(iface);
  }

  boolean isWrapperFor(Statement self, Class<?> iface) throws SQLException {
    return iface.isInstance(self) || raw.isWrapperFor(iface);
  }

  @Override
  public String toString() {
    return "Fenced[" + raw + "]";
  }

  /** {@code value} (a call's result), a result set fenced with {@code self} as its statement. */
  @SuppressWarnings("unchecked")
  <T> @Nullable T fence(@Nullable T value, Statement self) {
    return (T) FencedChild.fence(connection, value, self);
  }

  /** {@code getMetaData()} of a prepared statement ({@link #describe}). */
  @Nullable ResultSetMetaData getMetaData() throws SQLException {
    PreparedStatement p = (PreparedStatement) raw;
    CarriedCheck c = carrier;
    if (c != null && c.current() != raw) {
      ResultSet open = c.current().getResultSet();
      if (open != null && !open.isClosed()) {
        return open.getMetaData();
      }
    }
    return (ResultSetMetaData) describe(p::getMetaData);
  }

  /** {@code getParameterMetaData()} of a prepared statement ({@link #describe}). */
  @Nullable ParameterMetaData getParameterMetaData() throws SQLException {
    PreparedStatement p = (PreparedStatement) raw;
    return (ParameterMetaData) describe(p::getParameterMetaData);
  }

  /**
   * {@code getMetaData} or {@code getParameterMetaData} of a prepared statement. After a carried
   * execution its open result set is the carrier's: its metadata, as the driver reads that of its
   * own open result set (no round trip, nothing run; in {@link #getMetaData}). Otherwise, under
   * {@code preferQueryMode=simple}, pgjdbc cannot describe a statement and runs it instead, as a
   * simple query with its parameters (assertions disabled; with them, an AssertionError): an
   * execution, fenced as one.
   */
  private @Nullable Object describe(ConnectionFence.JdbcCall call) throws SQLException {
    try {
      Connection driver = connection.raw();
      if (!driver.isWrapperFor(BaseConnection.class)
          || driver.unwrap(BaseConnection.class).getPreferQueryMode() != PreferQueryMode.SIMPLE) {
        return call.call(); // described, not run
      }
      String sql = preparedSql != null ? preparedSql : "";
      List<TableGuards.Guard> guards = connection.guards().targets(connection.raw(), sql);
      return connection
          .fence()
          .execute(
              preparedSql,
              kindOf(null, false),
              guards,
              !guards.isEmpty() && !TableGuards.announced(guards),
              call,
              null);
    } catch (Throwable e) {
      throw Delegation.rethrown(e);
    }
  }

  /**
   * The execution under way, on the driver's statement (not carrying the check): what {@link
   * ConnectionFence#execute} calls when the fence has had its say.
   */
  @Override
  public @Nullable Object call() throws Throwable {
    StatementExecution e = executing;
    if (e == null) {
      throw new IllegalStateException("no execution under way");
    }
    CarriedCheck c = carrier;
    if (c != null) {
      c.executingRaw();
    }
    // the fetch size matters only in the wrapper's transaction: read it only there
    int fetchSize = connection.fence().inWrapperTransaction() ? raw.getFetchSize() : 0;
    if (fetchSize == 0) {
      return e.run(raw, executingArgs);
    }
    // The caller is in autocommit, where pgjdbc ignores a fetch size and reads every row at once;
    // in the wrapper's transaction it would open a cursor that the wrapper's COMMIT closes before
    // the caller reads past the first fetch (34000 "portal does not exist", and of a query that
    // writes only the rows fetched so far committed). Read as in autocommit.
    raw.setFetchSize(0);
    Object result;
    try {
      result = e.run(raw, executingArgs);
    } finally {
      raw.setFetchSize(fetchSize);
    }
    ResultSet rs = raw.getResultSet();
    if (rs != null) {
      rs.setFetchSize(fetchSize); // as the driver's, made with the statement's fetch size
    }
    return result;
  }

  /** The plain statement's batch so far (empty if none). */
  private List<String> batchSql() {
    List<String> b = batch;
    return b == null ? List.of() : b;
  }

  private void clearBatch() {
    List<String> b = batch;
    if (b != null) {
      b.clear();
    }
    batchUnannounced = false;
  }

  /**
   * Every text a prepared statement may carry the check of {@code tokens} tokens with now: the
   * connection's ({@link FencedConnection#checkTexts}), for the carrier without a function made per
   * execution.
   */
  @Override
  public List<String> apply(int tokens) {
    return connection.checkTexts(tokens);
  }

  private String sqlOf(Object @Nullable [] args, boolean isBatch) {
    if (args != null && args.length > 0 && args[0] instanceof String sql) {
      return sql;
    }
    if (isBatch && preparedSql == null) {
      return String.join(";\n", batchSql());
    }
    return preparedSql != null ? preparedSql : "";
  }

  private SqlClassifier.Classification kindOf(Object @Nullable [] args, boolean isBatch) {
    if (args != null && args.length > 0 && args[0] instanceof String sql) {
      return SqlClassifier.classify(sql);
    }
    if (isBatch && prepared == null) {
      return SqlClassifier.classify(String.join(";\n", batchSql()));
    }
    // A prepared statement whose SQL we somehow lack is treated as a write.
    return prepared != null ? prepared : ConnectionFence.WRITE;
  }
}
