package dev.fencing.jdbc;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Array;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGConnection;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;
import org.postgresql.jdbc.PreferQueryMode;
import org.postgresql.util.PSQLException;

/**
 * Carry: the connection of a {@link FencedDataSource}. Every statement it creates reports its
 * executions here; the first write of a transaction runs the check for the tokens bound on the
 * writing thread.
 */
final class FencedConnection implements InvocationHandler {
  /** An execution known to write, whatever its text. */
  static final SqlClassifier.Classification WRITE =
      new SqlClassifier.Classification(true, false, false);

  /** A JDBC call to make once the fence has had its say. */
  @FunctionalInterface
  interface JdbcCall {
    @Nullable Object call() throws Throwable;
  }

  private static final Object NOT_CARRIED = new Object();

  private final Connection raw;
  private final TokenChecker checker;
  private final boolean requireToken;
  private final Connection proxy;
  // Tokens checked in the current transaction; cleared whenever the transaction (or the savepoint
  // that may hold the check) could have ended.
  private final Set<FencingToken> checked = new HashSet<>();
  // Tokens bound at any execution of the current transaction: its commit checks them.
  private final Map<FencingToken, FencingContext.Binding> written = new LinkedHashMap<>();
  private @Nullable PGConnection pgProxy;
  private @Nullable BaseConnection base;

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
            this, (Statement) Delegation.invoke(raw, method, args), PreparedStatement.class, args);
      case "prepareCall":
        return FencedStatement.wrap(
            this, (Statement) Delegation.invoke(raw, method, args), CallableStatement.class, args);
      case "commit":
      case "rollback":
      case "setAutoCommit":
      case "close":
        Object result = null;
        try {
          if (method.getName().equals("commit")
              || method.getName().equals("setAutoCommit") && isTrue(args) && !raw.getAutoCommit()) {
            // switching autocommit on commits the open transaction: with the check, like commit()
            commit();
          }
          if (!method.getName().equals("commit")) {
            result = Delegation.invoke(raw, method, args);
          }
        } finally {
          checked.clear();
          if (args == null || args.length == 0 || !(args[0] instanceof Savepoint)) {
            written.clear();
            checker.guards().forgetAnnouncements();
          }
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

  private static boolean isTrue(Object @Nullable [] args) {
    return args != null && args.length == 1 && Boolean.TRUE.equals(args[0]);
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

  /** The tables of fenced entities declared for this connection's data source. */
  TableGuards guards() {
    return checker.guards();
  }

  /** The tokens this connection checks: those bound for its database's resources. */
  FencingContext bound() {
    return checker.bound();
  }

  /**
   * Runs {@code call}, the execution of {@code sql}, fenced if tokens are bound (see {@link
   * #execute(SqlClassifier.Classification, JdbcCall)}).
   */
  @Nullable Object execute(String sql, JdbcCall call) throws Throwable {
    List<TableGuards.Guard> guards = checker.guards().targets(sql);
    return execute(
        SqlClassifier.classify(sql),
        guards,
        !guards.isEmpty() && !TableGuards.announced(guards),
        call,
        null);
  }

  /** Runs {@code call}, an execution classified as {@code kind} that writes no declared table. */
  @Nullable Object execute(SqlClassifier.Classification kind, JdbcCall call) throws Throwable {
    return execute(kind, List.of(), false, call, null);
  }

  /**
   * Runs {@code call}, an execution classified as {@code kind}. With tokens bound it runs in a
   * transaction whose commit checks them if it wrote anything ({@link #commit()}): in autocommit
   * mode the wrapper makes each execution such a transaction of its own. A recognised write is also
   * checked before it runs, so the handover is fenced at the first write and protected tables see
   * the check; a write the text hides is caught at the commit. A {@code carrier} sends that check
   * with the write, in the write's own round trip.
   */
  @Nullable Object execute(
      SqlClassifier.Classification kind,
      List<TableGuards.Guard> guards,
      boolean unannounced,
      JdbcCall call,
      CarriedCheck.@Nullable Carrier carrier)
      throws Throwable {
    FencingContext context = checker.bound();
    if (!guards.isEmpty() && kind.mayWrite()) {
      // a table of a fenced entity (FencedTables): its own resource's token, whatever else is bound
      FencingRefusedException refusal = TableGuards.refusal(raw, guards, context, unannounced);
      if (refusal != null) {
        throw checker.refuse(raw, refusal, false);
      }
    }
    if (context.isEmpty()) {
      if (!kind.mayWrite() || !requireToken) {
        return run(call, kind);
      }
      ensureChecked(context); // refuses: a write needs a token
    }
    if (kind.writesAfterBoundary() || kind.runsAfterEnd()) {
      // The commit check would cover only the transaction the string starts in.
      throw new SQLException(
          "with a fencing token bound, nothing may follow COMMIT, ROLLBACK or another end of the"
              + " transaction in the same SQL string, nor a write follow ROLLBACK TO SAVEPOINT;"
              + " send the statements separately, and end transactions with Connection.commit()",
          "0A000");
    }
    if (transactionState() == TransactionState.IDLE) {
      // whatever ended the last transaction (a refusal's rollback too), this one starts afresh
      endTransaction();
    }
    remember(context);
    if (!raw.getAutoCommit()) {
      Object carried = carried(context, kind, carrier);
      if (carried != NOT_CARRIED) {
        return carried;
      }
      beforeRun(context, kind);
      return run(call, kind);
    }
    if (carrier != null && oneImplicitTransaction()) {
      // The check and the write before one Sync: the server runs them as one implicit transaction,
      // committed at the Sync, rolled back if either fails. One round trip, as unfenced.
      Object carried;
      try {
        carried = carried(context, kind, carrier);
      } catch (Throwable e) {
        endTransaction();
        throw e;
      }
      if (carried != NOT_CARRIED) {
        endTransaction();
        checker.recordPending(raw);
        return carried;
      }
    }
    // Autocommit: make the execution and its check one transaction, never half-applied.
    raw.setAutoCommit(false);
    Object result = null;
    SQLException ranThenRefused = null;
    try {
      try {
        result = carried(context, kind, carrier);
        if (result == NOT_CARRIED) {
          beforeRun(context, kind);
          result = run(call, kind);
        }
      } catch (PSQLException e) {
        if (!CarriedCheck.ranThenRefused(e)) {
          throw e;
        }
        ranThenRefused = e; // committed without the wrapper too: commit (checked), then throw
      }
      commitChecked();
    } catch (Throwable primary) {
      // The refusal (or the write's own error) is what the caller must see, even when the
      // connection broke too and cannot roll back.
      endTransaction();
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
    endTransaction();
    raw.setAutoCommit(true);
    checker.recordPending(raw);
    if (ranThenRefused != null) {
      throw ranThenRefused;
    }
    return result;
  }

  private void beforeRun(FencingContext context, SqlClassifier.Classification kind)
      throws SQLException {
    if (kind.mayWrite()) {
      ensureChecked(context);
    } else if (kind.endsTransaction()) {
      // COMMIT in SQL text: whatever the transaction wrote is checked before it commits
      List<FencingContext.Binding> unchecked = unchecked(written.values());
      if (!unchecked.isEmpty() && checker.checkIfWritten(raw, unchecked)) {
        unchecked.forEach(b -> checked.add(b.token()));
      }
    }
  }

  /** Adds the tokens bound now to those the open transaction's commit checks. */
  private void remember(FencingContext context) {
    for (FencingContext.Binding b : context.bindings()) {
      written.putIfAbsent(b.token(), b);
    }
  }

  /**
   * {@code Connection.commit()}: with tokens bound in the transaction and not yet checked in it,
   * "check if it wrote, then COMMIT" in one round trip; else a plain commit.
   */
  private void commit() throws SQLException {
    try {
      commitChecked();
    } finally {
      endTransaction();
    }
  }

  private void commitChecked() throws SQLException {
    remember(checker.bound());
    List<FencingContext.Binding> unchecked = unchecked(written.values());
    if (unchecked.isEmpty() || raw.getAutoCommit() || !transactionOpen()) {
      raw.commit(); // nothing to check, or the driver's own answer (no transaction, a failed one)
      return;
    }
    try {
      checker.checkAndCommit(raw, unchecked);
    } catch (SQLException e) {
      rollbackAfterFailedCommit(e);
      throw e instanceof FencingRefusedException ? e : refused(e);
    } catch (RuntimeException e) {
      rollbackAfterFailedCommit(e);
      throw e;
    }
  }

  /** A failed commit ends the transaction, as the driver's own commit does. */
  private void rollbackAfterFailedCommit(Exception e) {
    try {
      if (transactionState() != TransactionState.IDLE) {
        raw.rollback();
      }
    } catch (SQLException again) {
      e.addSuppressed(again);
    }
  }

  /** Whether a transaction is open and not failed (the driver's own state, not the SQL's). */
  private boolean transactionOpen() throws SQLException {
    return transactionState() == TransactionState.OPEN;
  }

  private TransactionState transactionState() throws SQLException {
    return driver().getTransactionState();
  }

  /**
   * In autocommit, whether a multi-statement execution runs as one implicit transaction: no
   * transaction block open, and the extended protocol (one Sync for all its statements). Not with
   * {@code preferQueryMode=simple}: pgjdbc sends each statement as a query message of its own, each
   * its own transaction.
   */
  private boolean oneImplicitTransaction() throws SQLException {
    BaseConnection driver = driver();
    return driver.getPreferQueryMode() != PreferQueryMode.SIMPLE
        && driver.getTransactionState() == TransactionState.IDLE;
  }

  private BaseConnection driver() throws SQLException {
    BaseConnection driver = base;
    if (driver == null) {
      driver = raw.unwrap(BaseConnection.class);
      base = driver;
    }
    return driver;
  }

  private void endTransaction() {
    checked.clear();
    written.clear();
  }

  private List<FencingContext.Binding> unchecked(Collection<FencingContext.Binding> bindings) {
    List<FencingContext.Binding> unchecked = new ArrayList<>(bindings.size());
    for (FencingContext.Binding b : bindings) {
      if (!checked.contains(b.token())) {
        unchecked.add(b);
      }
    }
    return unchecked;
  }

  /**
   * A recognised write that needs the check, run by {@code carrier} with the check in front of it
   * (one round trip); {@link #NOT_CARRIED} if it needs no check or the carrier sent nothing.
   */
  private @Nullable Object carried(
      FencingContext context,
      SqlClassifier.Classification kind,
      CarriedCheck.@Nullable Carrier carrier)
      throws SQLException {
    if (carrier == null
        || !kind.mayWrite()
        || kind.endsTransaction()
        || kind.rollsBackToSavepoint()
        || context.isEmpty()) {
      return NOT_CARRIED;
    }
    List<FencingContext.Binding> unchecked = toCheck(context);
    if (unchecked.isEmpty()) {
      return NOT_CARRIED;
    }
    Array[] arguments = checker.arguments(raw, unchecked); // refuses a lease known lost
    long start = System.nanoTime();
    CarriedCheck.Carried carried;
    try {
      carried = carrier.call(checker.checkSql(), arguments[0], arguments[1]);
    } catch (SQLException e) {
      // as run(): the check or the statement failed; either way nothing of it stays checked
      checked.clear();
      throw checker.carriedFailed(raw, e, unchecked);
    }
    if (carried == null) {
      return NOT_CARRIED;
    }
    unchecked.forEach(b -> checked.add(b.token()));
    checker.carried(unchecked.size(), carried.advanced(), System.nanoTime() - start);
    return carried.result();
  }

  /**
   * The bindings of {@code context} the open transaction has not checked (or whose lease is lost).
   */
  private List<FencingContext.Binding> toCheck(FencingContext context) {
    List<FencingContext.Binding> unchecked = new ArrayList<>(context.bindings().size());
    for (FencingContext.Binding b : context.bindings()) {
      Lease lease = b.lease();
      if (!checked.contains(b.token()) || (lease != null && lease.isLost())) {
        unchecked.add(b);
      }
    }
    return unchecked;
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
    List<FencingContext.Binding> unchecked = toCheck(context);
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
      if (kind.endsTransaction()) {
        endTransaction();
      } else if (kind.rollsBackToSavepoint()) {
        checked.clear();
      }
    }
  }
}
