package dev.fencing.jdbc;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGConnection;

/**
 * Carry: the connection of a {@link FencedDataSource}. Every statement it creates reports its
 * executions here; the first write of a transaction runs the check for the tokens bound on the
 * writing thread.
 */
final class FencedConnection implements InvocationHandler {
  /** A JDBC call to make once the fence has had its say. */
  @FunctionalInterface
  interface JdbcCall {
    @Nullable Object call() throws Throwable;
  }

  private final Connection raw;
  private final TokenChecker checker;
  private final boolean requireToken;
  private final Connection proxy;
  // Tokens checked in the current transaction; cleared whenever the transaction (or the savepoint
  // that may hold the check) could have ended.
  private final Set<FencingToken> checked = new HashSet<>();
  private @Nullable PGConnection pgProxy;

  private FencedConnection(Connection raw, TokenChecker checker, boolean requireToken) {
    this.raw = raw;
    this.checker = checker;
    this.requireToken = requireToken;
    this.proxy =
        (Connection)
            Proxy.newProxyInstance(
                FencedConnection.class.getClassLoader(),
                new Class<?>[] {FencingConnection.class},
                this);
  }

  static Connection wrap(Connection raw, TokenChecker checker, boolean requireToken) {
    return new FencedConnection(raw, checker, requireToken).proxy;
  }

  @Override
  public @Nullable Object invoke(Object self, Method method, Object @Nullable [] args)
      throws Throwable {
    switch (method.getName()) {
      case "createStatement":
        return FencedStatement.wrap(
            this, (Statement) Delegation.invoke(raw, method, args), Statement.class, null);
      case "prepareStatement":
        return FencedStatement.wrap(
            this,
            (Statement) Delegation.invoke(raw, method, args),
            PreparedStatement.class,
            (String) args[0]);
      case "prepareCall":
        return FencedStatement.wrap(
            this,
            (Statement) Delegation.invoke(raw, method, args),
            CallableStatement.class,
            (String) args[0]);
      case "commit":
      case "rollback":
      case "setAutoCommit":
      case "close":
        Object result;
        try {
          result = Delegation.invoke(raw, method, args);
        } finally {
          checked.clear();
        }
        if (!method.getName().equals("setAutoCommit")
            && !method.getName().equals("close")
            && (args == null || args.length == 0)) {
          // between transactions now: record refusals whose recording failed before
          checker.recordPending(raw);
        }
        return result;
      case "getMetaData":
        return FencedChild.metaData(this, raw.getMetaData());
      case "unwrap":
        return unwrap((Class<?>) args[0]);
      default:
        Object common = Delegation.common(self, raw, method, args);
        return common != Delegation.NOT_COMMON ? common : Delegation.invoke(raw, method, args);
    }
  }

  private Object unwrap(Class<?> iface) throws SQLException {
    if (iface.isInstance(proxy)) {
      return proxy;
    }
    if (iface == PGConnection.class) {
      if (pgProxy == null) {
        pgProxy = FencedCopyManager.pgConnection(this, raw.unwrap(PGConnection.class));
      }
      return pgProxy;
    }
    return raw.unwrap(iface);
  }

  Connection proxy() {
    return proxy;
  }

  Connection raw() {
    return raw;
  }

  /** The tokens this connection checks: those bound for its database's resources. */
  FencingContext bound() {
    return checker.bound();
  }

  /**
   * Runs {@code call}, the execution of {@code sql}, fenced if it may write: in a transaction whose
   * bound tokens were checked (a transaction of its own in autocommit mode).
   */
  @Nullable Object execute(String sql, JdbcCall call) throws Throwable {
    SqlClassifier.Classification kind = SqlClassifier.classify(sql);
    FencingContext context = checker.bound();
    if (!kind.mayWrite() || (context.isEmpty() && !requireToken)) {
      return run(call, kind);
    }
    if (kind.writesAfterBoundary()) {
      // The check would cover only the transaction the string starts in.
      throw new SQLException(
          "a fenced write cannot follow COMMIT, ROLLBACK or ROLLBACK TO SAVEPOINT in the same SQL"
              + " string; send the statements separately: "
              + sql,
          "0A000");
    }
    return fenced(context, call, kind);
  }

  /** Runs a write that is known to need the fence (for example a COPY FROM). */
  @Nullable Object executeWrite(JdbcCall call) throws Throwable {
    return fenced(checker.bound(), call, new SqlClassifier.Classification(true, false, false));
  }

  private @Nullable Object fenced(
      FencingContext context, JdbcCall call, SqlClassifier.Classification kind) throws Throwable {
    if (!raw.getAutoCommit()) {
      ensureChecked(context);
      return run(call, kind);
    }
    // Autocommit: make the check and the write one transaction, never half-applied.
    raw.setAutoCommit(false);
    Object result;
    try {
      ensureChecked(context);
      result = run(call, kind);
      raw.commit();
    } catch (Throwable primary) {
      // The refusal (or the write's own error) is what the caller must see, even when the
      // connection broke too and cannot roll back.
      checked.clear();
      try {
        raw.rollback();
      } catch (SQLException e) {
        primary.addSuppressed(e);
      }
      try {
        raw.setAutoCommit(true);
      } catch (SQLException e) {
        primary.addSuppressed(e);
      }
      throw primary;
    }
    checked.clear();
    raw.setAutoCommit(true);
    checker.recordPending(raw);
    return result;
  }

  private void ensureChecked(FencingContext context) throws SQLException {
    if (context.isEmpty()) {
      throw checker.refuse(
          raw,
          new MissingFencingTokenException(
              "a write needs a fencing token, and none is bound on thread "
                  + Thread.currentThread().getName(),
              FencingSqlState.MISSING_TOKEN.code(),
              "?",
              null,
              null,
              null),
          false);
    }
    List<FencingContext.Binding> unchecked = new ArrayList<>(context.bindings().size());
    for (FencingContext.Binding b : context.bindings()) {
      Lease lease = b.lease();
      if (!checked.contains(b.token()) || (lease != null && lease.isLost())) {
        unchecked.add(b);
      }
    }
    if (unchecked.isEmpty()) {
      return;
    }
    checker.check(raw, unchecked);
    unchecked.forEach(b -> checked.add(b.token()));
  }

  /**
   * A refusal by the database (a protected table's trigger, a check in the SQL itself) as the
   * library's exception, rolled back and recorded like the check's own; any other failure as it is.
   * The same on every path: in a transaction or autocommit (where the failed statement was its own
   * transaction), statements, batches and COPY.
   */
  SQLException refused(SQLException e) {
    FencingRefusedException refusal = FencingExceptions.translate(e, null, null);
    return refusal == null ? e : checker.refuse(raw, refusal, true);
  }

  private @Nullable Object run(JdbcCall call, SqlClassifier.Classification kind) throws Throwable {
    try {
      return call.call();
    } catch (SQLException e) {
      // The failed statement may have been rolled back to a savepoint taken before the check
      // (pgjdbc autosave): check again next time.
      checked.clear();
      throw refused(e);
    } finally {
      if (kind.endsTransaction() || kind.rollsBackToSavepoint()) {
        checked.clear();
      }
    }
  }
}
