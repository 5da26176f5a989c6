package dev.fencing.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
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
  // Up to this many tokens the sets below are lists searched in order (a transaction binds one or
  // a few: no hash table, no entry object per token); past it, hash sets index them too.
  private static final int LINEAR = 8;
  // Tokens checked in the current transaction; cleared whenever the transaction (or the savepoint
  // that may hold the check) could have ended.
  private final List<FencingToken> checked = new ArrayList<>(2);
  private @Nullable Set<FencingToken> checkedIndex;
  // Bindings of the tokens bound at any execution of the current transaction, each token once, in
  // the order first bound: its commit checks them.
  private final List<FencingContext.Binding> written = new ArrayList<>(2);
  private @Nullable Set<FencingToken> writtenIndex;
  private @Nullable BaseConnection base;
  // The fenced statement whose execution is under way, if one is: a check made in a round trip of
  // its own for it takes over its query timeout and is cancelled by its cancel() (TokenChecker).
  private @Nullable StatementInFlight caller;

  TransactionChecks(Connection raw, TokenChecker checker) {
    this.raw = raw;
    this.checker = checker;
  }

  /**
   * {@code statement}'s execution is under way (null: none, or not a statement's): the checks made
   * for it honour its query timeout and {@code cancel()}. Returns the one it replaces. A field
   * written per execution, nothing made.
   */
  @Nullable StatementInFlight caller(@Nullable StatementInFlight statement) {
    StatementInFlight before = caller;
    caller = statement;
    return before;
  }

  /**
   * The fenced statement whose execution is under way, if any ({@link #caller(StatementInFlight)}).
   */
  @Nullable StatementInFlight caller() {
    return caller;
  }

  /** Adds the tokens bound now to those the open transaction's commit checks. */
  void remember(FencingContext context) {
    List<FencingContext.Binding> bindings = context.bindings();
    for (int i = 0; i < bindings.size(); i++) { // per execution: no iterator
      FencingContext.Binding b = bindings.get(i);
      if (!isWritten(b.token())) {
        written.add(b);
        Set<FencingToken> index = writtenIndex;
        if (index != null) {
          index.add(b.token());
        } else if (written.size() > LINEAR) {
          index = new HashSet<>();
          for (int j = 0; j < written.size(); j++) {
            index.add(written.get(j).token());
          }
          writtenIndex = index;
        }
      }
    }
  }

  private boolean isWritten(FencingToken token) {
    Set<FencingToken> index = writtenIndex;
    if (index != null) {
      return index.contains(token);
    }
    for (int i = 0; i < written.size(); i++) {
      if (written.get(i).token().equals(token)) {
        return true;
      }
    }
    return false;
  }

  private boolean isChecked(FencingToken token) {
    Set<FencingToken> index = checkedIndex;
    if (index != null) {
      return index.contains(token);
    }
    for (int i = 0; i < checked.size(); i++) {
      if (checked.get(i).equals(token)) {
        return true;
      }
    }
    return false;
  }

  /** The tokens of {@code bindings} are checked in the open transaction. */
  private void markChecked(List<FencingContext.Binding> bindings) {
    for (int i = 0; i < bindings.size(); i++) {
      FencingToken token = bindings.get(i).token();
      if (isChecked(token)) {
        continue;
      }
      checked.add(token);
      Set<FencingToken> index = checkedIndex;
      if (index != null) {
        index.add(token);
      } else if (checked.size() > LINEAR) {
        checkedIndex = new HashSet<>(checked);
      }
    }
  }

  /** The transaction (or the savepoint that may hold a check) may have ended: check again. */
  void forgetChecks() {
    checked.clear();
    checkedIndex = null;
  }

  /** Whether tokens were bound at an execution of the open transaction: its end checks them. */
  boolean hasWritten() {
    return !written.isEmpty();
  }

  /**
   * The transaction ended: nothing checked, nothing to check. The caller's transaction ends through
   * {@link ConnectionFence#endTransaction}, which forgets its announced row writes too.
   */
  void endTransaction() {
    forgetChecks();
    written.clear();
    writtenIndex = null;
  }

  /** Before a plain execution of {@code kind}: the check of a write, or of a COMMIT in SQL. */
  void beforeRun(FencingContext context, SqlClassifier.Classification kind) throws SQLException {
    if (kind.mayWrite()) {
      ensureChecked(context);
    } else if (kind.endsTransaction()) {
      // COMMIT in SQL text: whatever the transaction wrote is checked before it commits
      List<FencingContext.Binding> unchecked = unchecked(written);
      if (!unchecked.isEmpty() && checker.checkIfWritten(raw, unchecked, caller)) {
        markChecked(unchecked);
      }
    }
  }

  /**
   * {@code Connection.commit()}: with tokens bound in the transaction and not yet checked in it,
   * "check if it wrote, then COMMIT" in one round trip; else a plain commit. The caller ends the
   * bookkeeping ({@link ConnectionFence#endTransaction}, or {@link #endTransaction} for the
   * wrapper's own transaction in autocommit).
   */
  void commitChecked() throws SQLException {
    remember(checker.bound());
    List<FencingContext.Binding> unchecked = unchecked(written);
    if (unchecked.isEmpty() || raw.getAutoCommit() || !transactionOpen()) {
      raw.commit(); // nothing to check, or the driver's own answer (no transaction, a failed one)
      return;
    }
    try {
      checker.checkAndCommit(raw, unchecked, caller);
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

  /** The bindings whose tokens are not checked: a new list, or an empty one of no one's. */
  private List<FencingContext.Binding> unchecked(List<FencingContext.Binding> bindings) {
    List<FencingContext.Binding> unchecked = null;
    for (int i = 0; i < bindings.size(); i++) {
      FencingContext.Binding b = bindings.get(i);
      if (!isChecked(b.token())) {
        if (unchecked == null) {
          unchecked = new ArrayList<>(bindings.size() - i);
        }
        unchecked.add(b);
      }
    }
    return unchecked == null ? List.of() : unchecked;
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
      forgetChecks();
      throw checker.carriedFailed(raw, e, unchecked);
    }
    if (carried == null) {
      return NOT_CARRIED;
    }
    markChecked(unchecked);
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
    List<FencingContext.Binding> bindings = context.bindings();
    List<FencingContext.Binding> unchecked = null; // none made for a transaction's later writes
    for (int i = 0; i < bindings.size(); i++) {
      FencingContext.Binding b = bindings.get(i);
      Lease lease = b.lease();
      if (!isChecked(b.token()) || (lease != null && lease.isLost())) {
        if (unchecked == null) {
          unchecked = new ArrayList<>(bindings.size() - i);
        }
        unchecked.add(b);
      }
    }
    return unchecked == null ? List.of() : unchecked;
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
    checker.check(raw, unchecked, caller);
    markChecked(unchecked);
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
