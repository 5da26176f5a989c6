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
 * pgjdbc's are not; but {@link #cancel()} may come from another thread ({@link StatementInFlight}).
 */
final class StatementFence implements IntFunction<List<String>> {
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
  // the execution under way and the check made for it, which cancel() and the query timeout reach
  private final StatementInFlight inFlight;
  // The fenced result set handed out last for the driver's result set, and for its generated
  // keys: asked again for the same one, the caller gets the same object, as from the driver
  // (getResultSet() twice, executeQuery() then getResultSet()).
  private @Nullable ResultSet rawResult;
  private @Nullable ResultSet fencedResult;
  private @Nullable ResultSet rawKeys;
  private @Nullable ResultSet fencedKeys;

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
    this.inFlight = new StatementInFlight(connection, raw, carrier);
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
    inFlight.started(execution, args);
    try {
      Object result =
          connection
              .fence()
              .execute(
                  sql, kindOf(args, isBatch), guards, unannounced, inFlight, carried, inFlight);
      return result instanceof ResultSet rs ? result(rs, self) : result;
    } finally {
      inFlight.ended();
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

  /** {@code cancel()} ({@link StatementInFlight#cancel}). */
  void cancel() throws SQLException {
    inFlight.cancel();
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
   * execution, fenced as one, whose check in a round trip of its own the statement's {@code
   * cancel()} and query timeout reach, as an execution's ({@link StatementInFlight}).
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
              null,
              inFlight); // its check obeys the statement's cancel() and query timeout
    } catch (Throwable e) {
      throw Delegation.rethrown(e);
    }
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
