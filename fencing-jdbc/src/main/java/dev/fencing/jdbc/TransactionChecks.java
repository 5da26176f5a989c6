package dev.fencing.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;

/**
 * The bookkeeping of a {@link FencedConnection}'s open transaction: which bound tokens it has
 * checked, which its commit must check, and the checks themselves (before a write, carried by it,
 * with the {@code COMMIT}).
 */
final class TransactionChecks {
  /** What {@link #carried} returns when the execution did not carry the check. */
  static final Object NOT_CARRIED = new Object();

  private final Connection raw;
  private final TokenChecker checker;
  // Tokens checked in the current transaction; cleared whenever the transaction (or the savepoint
  // that may hold the check) could have ended.
  private final Set<FencingToken> checked = new HashSet<>();
  // Tokens bound at any execution of the current transaction: its commit checks them.
  private final Map<FencingToken, FencingContext.Binding> written = new LinkedHashMap<>();
  private @Nullable BaseConnection base;

  TransactionChecks(Connection raw, TokenChecker checker) {
    this.raw = raw;
    this.checker = checker;
  }

  /** Adds the tokens bound now to those the open transaction's commit checks. */
  void remember(FencingContext context) {
    for (FencingContext.Binding b : context.bindings()) {
      written.putIfAbsent(b.token(), b);
    }
  }

  /** The transaction (or the savepoint that may hold a check) may have ended: check again. */
  void forgetChecks() {
    checked.clear();
  }

  /** The transaction ended: nothing checked, nothing to check. */
  void endTransaction() {
    checked.clear();
    written.clear();
  }

  /** Before a plain execution of {@code kind}: the check of a write, or of a COMMIT in SQL. */
  void beforeRun(FencingContext context, SqlClassifier.Classification kind) throws SQLException {
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

  /**
   * {@code Connection.commit()}: with tokens bound in the transaction and not yet checked in it,
   * "check if it wrote, then COMMIT" in one round trip; else a plain commit.
   */
  void commit() throws SQLException {
    try {
      commitChecked();
    } finally {
      endTransaction();
    }
  }

  /** As {@link #commit()}, leaving the bookkeeping to the caller. */
  void commitChecked() throws SQLException {
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

  TransactionState transactionState() throws SQLException {
    return driver().getTransactionState();
  }

  /**
   * In autocommit, whether {@code carrier}'s execution runs as one implicit transaction: no
   * transaction block open, and one Sync (or one query message) for all its statements ({@link
   * Carrier#manyTransactionsInAutocommit}).
   */
  boolean oneImplicitTransaction(Carrier carrier, int tokens) throws SQLException {
    BaseConnection driver = driver();
    return !carrier.manyTransactionsInAutocommit(driver.getPreferQueryMode(), tokens)
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
  @Nullable Object carried(
      FencingContext context, SqlClassifier.Classification kind, @Nullable Carrier carrier)
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
    CheckArguments arguments = checker.arguments(raw, unchecked); // refuses a lease known lost
    long start = System.nanoTime();
    Carrier.Carried carried;
    try {
      carried = carrier.call(arguments);
    } catch (SQLException e) {
      // as a plain run: the check or the statement failed; either way nothing of it stays checked
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
   * A read in autocommit, run by {@code carrier} with the commit's check behind it as one implicit
   * transaction (one round trip, {@link CheckedRead}); {@link #NOT_CARRIED} if the carrier sent
   * nothing the caller may see.
   */
  @Nullable Object readCarried(FencingContext context, Carrier carrier) throws SQLException {
    List<FencingContext.Binding> bindings = context.bindings();
    String check = checker.checkIfWrittenLiteral(raw, bindings); // refuses a lease known lost
    long start = System.nanoTime();
    Carrier.Carried carried;
    try {
      carried = carrier.callRead(check);
    } catch (SQLException e) {
      throw checker.carriedFailed(raw, e, bindings);
    }
    if (carried == null) {
      return NOT_CARRIED;
    }
    checker.carried(bindings.size(), carried.advanced(), System.nanoTime() - start);
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

  /** Checks the tokens of {@code context} the transaction has not checked; refuses none bound. */
  void ensureChecked(FencingContext context) throws SQLException {
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
}
