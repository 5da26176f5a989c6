package dev.fencing.jdbc;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;
import org.postgresql.core.BaseConnection;
import org.postgresql.jdbc.PreferQueryMode;

/**
 * A statement of a {@link FencedConnection}: hands every {@code execute*} (including batches) to
 * the connection with the SQL it will run; everything else goes straight to the driver.
 */
final class FencedStatement
    implements InvocationHandler, IntFunction<List<String>>, FencedConnection.JdbcCall {
  private final FencedConnection connection;
  private final Statement raw;
  // A prepared statement's SQL is classified once, not per execution.
  private final SqlClassifier.@Nullable Classification prepared;
  private final @Nullable String preparedSql;
  // a plain statement's batch (its SQL, in order); made at its first addBatch(sql)
  private @Nullable List<String> batch;
  // A row of the prepared batch that no entity write announced (a bulk write of a per-row table).
  private boolean batchUnannounced;

  // A prepared statement whose first write in a transaction can carry the check (issue 13).
  private final @Nullable CarriedCheck carrier;
  // The caller holds the driver's statement: a batch may hold entries the proxy never saw.
  private boolean unwrapped;
  // the execution under way, which call() makes on the driver's statement (this is its JdbcCall:
  // none made per execution; a statement executes one thing at a time)
  private @Nullable Method executing;
  private Object @Nullable [] executingArgs;

  private FencedStatement(
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
   * The fenced proxy of {@code raw}, which {@code prepareStatement} or {@code prepareCall} returned
   * for {@code prepareArgs} (null for a plain statement).
   */
  static Object wrap(
      FencedConnection connection,
      Statement raw,
      Class<? extends Statement> type,
      Object @Nullable [] prepareArgs) {
    String sql =
        prepareArgs != null && prepareArgs.length > 0 && prepareArgs[0] instanceof String s
            ? s
            : null;
    return Delegation.proxy(
        type,
        new FencedStatement(
            connection, raw, sql, CarriedCheck.of(connection.raw(), raw, type, prepareArgs)));
  }

  @Override
  public @Nullable Object invoke(Object self, Method method, Object @Nullable [] args)
      throws Throwable {
    String name = method.getName();
    if (name.startsWith("execute")) {
      boolean isBatch = name.endsWith("Batch");
      String sql = sqlOf(args, isBatch);
      List<TableGuards.Guard> guards = connection.guards().targets(sql);
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
      executing = method;
      executingArgs = args;
      try {
        return FencedChild.fence(
            connection,
            connection.execute(kindOf(args, isBatch), guards, unannounced, this, carried),
            self);
      } finally {
        executing = null;
        executingArgs = null;
        if (isBatch) {
          clearBatch();
        }
      }
    }
    switch (name) {
      case "addBatch":
        if (args != null && args.length == 1 && args[0] instanceof String sql) {
          List<String> b = batch;
          if (b == null) {
            b = new ArrayList<>();
            batch = b;
          }
          b.add(sql);
        } else if (preparedSql != null) {
          List<TableGuards.Guard> guards = connection.guards().targets(preparedSql);
          batchUnannounced |= !guards.isEmpty() && !TableGuards.announced(guards);
        }
        return Delegation.invoke(raw, method, args);
      case "clearBatch":
        clearBatch();
        return Delegation.invoke(raw, method, args);
      case "getResultSet":
      case "getUpdateCount":
      case "getLargeUpdateCount":
      case "getMoreResults":
      case "getWarnings":
      case "clearWarnings":
        // the results of the statement that executed last (the carrier's, if it carried the check)
        return FencedChild.fence(
            connection,
            Delegation.invoke(carrier != null ? carrier.current() : raw, method, args),
            self);
      case "getGeneratedKeys":
        return FencedChild.fence(
            connection,
            carrier != null ? carrier.generatedKeys() : Delegation.invoke(raw, method, args),
            self);
      case "clearParameters":
        if (carrier != null) {
          carrier.clearParameters();
        }
        return Delegation.invoke(raw, method, args);
      case "closeOnCompletion":
        if (carrier != null) {
          carrier.stopCarrying();
        }
        return Delegation.invoke(raw, method, args);
      case "cancel":
      case "close":
        if (carrier != null) {
          if (name.equals("close")) {
            carrier.close();
          } else {
            carrier.cancel();
          }
        }
        return Delegation.invoke(raw, method, args);
      case "getMetaData":
      case "getParameterMetaData":
        if (raw instanceof PreparedStatement) {
          return describe(method, args);
        }
        return Delegation.invoke(raw, method, args);
      case "getConnection":
        return connection.proxy();
      case "unwrap":
        Class<?> iface = (Class<?>) args[0];
        if (iface.isInstance(self)) {
          return self;
        }
        if (carrier != null) {
          carrier.stopCarrying();
        }
        unwrapped = true;
        return raw.unwrap(iface);
      default:
        Object common = Delegation.common(self, raw, method, args);
        if (common != Delegation.NOT_COMMON) {
          return common;
        }
        Object result = FencedChild.fence(connection, Delegation.invoke(raw, method, args), self);
        if (carrier != null && name.startsWith("set")) {
          carrier.called(method, args); // a parameter the driver accepted, for the replay
        }
        return result;
    }
  }

  /**
   * {@code getMetaData} or {@code getParameterMetaData} of a prepared statement. After a carried
   * execution its open result set is the carrier's: its metadata, as the driver reads that of its
   * own open result set (no round trip, nothing run). Otherwise, under {@code
   * preferQueryMode=simple}, pgjdbc cannot describe a statement and runs it instead, as a simple
   * query with its parameters (assertions disabled; with them, an AssertionError): an execution,
   * fenced as one.
   */
  private @Nullable Object describe(Method method, Object @Nullable [] args) throws Throwable {
    CarriedCheck c = carrier;
    if (method.getName().equals("getMetaData") && c != null && c.current() != raw) {
      ResultSet open = c.current().getResultSet();
      if (open != null && !open.isClosed()) {
        return open.getMetaData();
      }
    }
    Connection driver = connection.raw();
    if (!driver.isWrapperFor(BaseConnection.class)
        || driver.unwrap(BaseConnection.class).getPreferQueryMode() != PreferQueryMode.SIMPLE) {
      return Delegation.invoke(raw, method, args); // described, not run
    }
    String sql = preparedSql != null ? preparedSql : "";
    List<TableGuards.Guard> guards = connection.guards().targets(sql);
    return connection.execute(
        kindOf(null, false),
        guards,
        !guards.isEmpty() && !TableGuards.announced(guards),
        () -> Delegation.invoke(raw, method, args),
        null);
  }

  /**
   * The execution under way, on the driver's statement (not carrying the check): what {@link
   * FencedConnection#execute} calls when the fence has had its say.
   */
  @Override
  public @Nullable Object call() throws Throwable {
    Method m = executing;
    if (m == null) {
      throw new IllegalStateException("no execution under way");
    }
    CarriedCheck c = carrier;
    if (c != null) {
      c.executingRaw();
    }
    return Delegation.invoke(raw, m, executingArgs);
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
    return prepared != null ? prepared : FencedConnection.WRITE;
  }
}
