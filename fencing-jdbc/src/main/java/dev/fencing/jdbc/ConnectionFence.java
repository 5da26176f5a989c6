package dev.fencing.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.postgresql.core.TransactionState;
import org.postgresql.util.PSQLException;

/**
 * Carry: how the executions of one {@link FencedConnection} are fenced. Each statement execution
 * (and each later call of a streaming COPY) passes here: a table of a fenced entity needs its own
 * resource's token; with tokens bound, the execution runs in a transaction whose commit checks
 * them, the check carried by the execution where it can be; a refusal in the caller's transaction
 * keeps that transaction failed ({@link RefusedTransaction}) until the caller rolls back.
 */
final class ConnectionFence {
  /** An execution known to write, whatever its text (nothing known of it: not carried alone). */
  static final SqlClassifier.Classification WRITE =
      new SqlClassifier.Classification(true, false, false, false, false, false, true, false);

  /** A JDBC call to make once the fence has had its say. */
  @FunctionalInterface
  interface JdbcCall {
    @Nullable Object call() throws Throwable;
  }

  private final Connection raw;
  private final TokenChecker checker;
  private final boolean requireToken;
  private final TransactionChecks tx;
  private final RefusedTransaction refused = new RefusedTransaction();
  // The caller is in autocommit and the execution under way runs in the wrapper's transaction.
  private boolean wrapperTransaction;

  ConnectionFence(Connection raw, TokenChecker checker, boolean requireToken) {
    this.raw = raw;
    this.checker = checker;
    this.requireToken = requireToken;
    this.tx = new TransactionChecks(raw, checker);
  }

  /** The open transaction's checks (commit, rollback and savepoints end or forget them). */
  TransactionChecks transaction() {
    return tx;
  }

  /**
   * Whether the execution under way runs in the wrapper's own transaction, the caller being in
   * autocommit: the driver must then behave as it does in autocommit ({@link
   * StatementInFlight#call()}: no cursor for a fetch size).
   */
  boolean inWrapperTransaction() {
    return wrapperTransaction;
  }

  /** The refused state of the caller's transaction (commit, rollback and savepoints consult it). */
  RefusedTransaction refusedState() {
    return refused;
  }

  /**
   * Runs {@code call}, the execution of {@code sql}, fenced if tokens are bound (see {@link
   * #execute(SqlClassifier.Classification, JdbcCall)}).
   */
  @Nullable Object execute(String sql, JdbcCall call) throws Throwable {
    List<TableGuards.Guard> guards = checker.guards().targets(raw, sql);
    return execute(
        sql,
        SqlClassifier.classify(sql),
        guards,
        !guards.isEmpty() && !TableGuards.announced(guards),
        call,
        null,
        null);
  }

  /**
   * Runs {@code call}, an execution whose SQL is not known, classified as {@code kind}, that writes
   * no declared table.
   */
  @Nullable Object execute(SqlClassifier.Classification kind, JdbcCall call) throws Throwable {
    return execute(null, kind, List.of(), false, call, null, null);
  }

  /**
   * Runs {@code call}, an execution classified as {@code kind}. With tokens bound it runs in a
   * transaction whose commit checks them if it wrote anything ({@link
   * TransactionChecks#commitChecked()}): in autocommit mode the wrapper makes each execution such a
   * transaction of its own. A recognised write is also checked before it runs, so the handover is
   * fenced at the first write and protected tables see the check; a write the text hides is caught
   * at the commit. A {@code carrier} sends that check with the write, in the write's own round
   * trip. A check in a round trip of its own honours the query timeout and {@code cancel()} of
   * {@code caller}, the fenced statement whose execution (or describe run as one) {@code call} is.
   *
   * <p>In a refused transaction ({@link RefusedTransaction}) only {@code sql} that rolls the whole
   * transaction back ({@link SqlClassifier#rollsBackTransaction}) runs, and ends it as {@code
   * rollback()} does; everything else is refused (25P02).
   *
   * @param sql the text that runs, or null if it is not known (then it never ends a refused
   *     transaction)
   */
  @Nullable Object execute(
      @Nullable String sql,
      SqlClassifier.Classification kind,
      List<TableGuards.Guard> guards,
      boolean unannounced,
      JdbcCall call,
      @Nullable Carrier carrier,
      @Nullable StatementInFlight caller)
      throws Throwable {
    boolean endsRefusal =
        refused.isFailed() && sql != null && SqlClassifier.rollsBackTransaction(sql);
    if (!endsRefusal) {
      refused.requireUsable("a statement");
    }
    boolean callersTransaction = !raw.getAutoCommit();
    // a check made in a round trip of its own honours the caller's query timeout and cancel()
    // (TokenChecker): a field written per execution, nothing made
    StatementInFlight before = tx.caller(caller);
    try {
      Object result = fenced(sql, kind, guards, unannounced, call, carrier);
      if (endsRefusal) {
        refused.clear(); // a ROLLBACK string ended it, as rollback() does
        checker.recordPending(raw);
      }
      return result;
    } catch (Throwable e) {
      // a refused COMMIT string ended the transaction, like a refused commit(), and says so
      throw kept(e, callersTransaction && !kind.endsTransaction());
    } finally {
      tx.caller(before);
      if (kind.endsTransaction() && tx.transactionState() != TransactionState.OPEN) {
        // the string ended the transaction, or a refusal of its check rolled it back; not a string
        // refused before anything ran (0A000 below), whose transaction goes on and is checked at
        // its end
        endTransaction();
      }
    }
  }

  /**
   * The caller's transaction ended ({@code commit()}, {@code rollback()}, a SQL {@code COMMIT} or
   * {@code ROLLBACK}, autocommit switched on, {@code close()}): the one place that forgets its
   * fencing state: the tokens it checked and those its commit was to check, and the row writes
   * announced in it ({@link FencedTables#announceRowWrite}) that no statement used, which must not
   * let a bulk write of a later transaction through unjudged. Not the refused state ({@link
   * RefusedTransaction}): only a rollback by the caller ends that. The wrapper's own transaction
   * around one execution in autocommit ends only the checks ({@link
   * TransactionChecks#endTransaction}): the announcements belong to the caller's statements, which
   * run on in autocommit.
   */
  void endTransaction() {
    tx.endTransaction();
    checker.guards().forgetAnnouncements();
  }

  /**
   * {@code thrown}, after keeping the caller's transaction failed if it is a refusal that rolled
   * that transaction back ({@code callersTransaction}: autocommit was off when the call began).
   */
  private <T extends Throwable> T kept(T thrown, boolean callersTransaction) {
    if (callersTransaction) {
      refused.keepIfRefused(thrown);
    }
    return thrown;
  }

  /**
   * Whether {@code sql} runs as unfenced, with no check before it: a ROLLBACK string, which commits
   * nothing (a stale token's refusal would keep it from ending an aborted transaction block, and
   * tell the caller its rollback failed); and, with no token bound, a read, or anything where no
   * token is required. Not a string that ends a transaction in which tokens were bound: it checks
   * them, bound now or not (as {@code commit()} does), for no token bound now is no reason to
   * commit unchecked what it wrote. A write with no token bound where one is required is refused.
   */
  private boolean runsUnchecked(
      @Nullable String sql, SqlClassifier.Classification kind, FencingContext context)
      throws SQLException {
    if (kind.endsTransaction() && sql != null && SqlClassifier.rollsBackTransaction(sql)) {
      return true;
    }
    if (!context.isEmpty() || (kind.endsTransaction() && tx.hasWritten())) {
      return false; // the hot path: tokens bound
    }
    if (kind.mayWrite() && requireToken) {
      tx.ensureChecked(context); // refuses: a write needs a token
      return false;
    }
    return true;
  }

  private @Nullable Object fenced(
      @Nullable String sql,
      SqlClassifier.Classification kind,
      List<TableGuards.Guard> guards,
      boolean unannounced,
      JdbcCall call,
      @Nullable Carrier carrier)
      throws Throwable {
    FencingContext context = checker.bound();
    if (!guards.isEmpty() && kind.mayWrite()) {
      // a table of a fenced entity (FencedTables): its own resource's token, whatever else is bound
      FencingRefusedException refusal = TableGuards.refusal(raw, guards, context, unannounced);
      if (refusal != null) {
        throw checker.refuse(raw, refusal, false);
      }
    }
    if (runsUnchecked(sql, kind, context)) {
      return run(call, kind);
    }
    if (kind.writesAfterBoundary() || kind.runsAfterEnd() || kind.endsAfterStatement()) {
      // The commit check would cover only the transaction the string starts in; and a check made
      // before a string that ends the transaction after other statements ran before their writes
      // (hidden in a view, an operator, a cursor's query), which the string itself commits.
      throw new SQLException(
          "with a fencing token bound, COMMIT, ROLLBACK or another end of the transaction must be"
              + " a SQL string (or batch) of its own: nothing may precede or follow it in the same"
              + " string, nor a write follow ROLLBACK TO SAVEPOINT; send the statements"
              + " separately, and end transactions with Connection.commit()",
          "0A000");
    }
    boolean idle = tx.transactionState() == TransactionState.IDLE;
    if (idle) {
      // whatever ended the last transaction (a refusal's rollback too), this one starts afresh
      tx.endTransaction();
    }
    // In autocommit, a transaction block the caller opened in SQL (BEGIN, START TRANSACTION) is
    // the caller's transaction too: the caller ends it, with COMMIT (checked) or ROLLBACK. The
    // wrapper's own transaction below would commit it after the next execution.
    boolean callersTransaction = !raw.getAutoCommit() || !idle;
    if (!callersTransaction
        && sql != null
        && !kind.mayWrite()
        && !kind.endsTransaction()
        && SqlClassifier.beginsTransaction(sql)) {
      // BEGIN in SQL in autocommit opens the caller's block: run in the wrapper's transaction, it
      // would be committed with it. It writes nothing; what runs in the block is checked as in a
      // transaction the caller opened with setAutoCommit(false).
      return run(call, kind);
    }
    if (kind.outsideTransaction() && !callersTransaction) {
      return checkedFirst(context, kind, call);
    }
    tx.remember(context);
    if (callersTransaction) {
      Object carried = tx.carried(context, kind, carrier);
      if (carried != TransactionChecks.NOT_CARRIED) {
        return carried;
      }
      tx.beforeRun(context, kind);
      return run(call, kind);
    }
    // A CALL or DO outside a transaction block runs non-atomically: its procedure or block could
    // COMMIT inside itself, ending the implicit transaction that holds the check, and write on
    // unfenced. It runs in the wrapper's transaction block below, where PostgreSQL refuses such a
    // COMMIT (2D000).
    if (carrier != null
        && !kind.nonAtomic()
        && tx.oneImplicitTransaction(carrier, context.bindings().size())) {
      // A read: its commit's check behind it as one implicit transaction, so a write it hides is
      // checked before that transaction commits. Anything else: the check and the write before one
      // Sync, which the server runs as one implicit transaction, committed at the Sync, rolled back
      // if either fails. One round trip either way, as unfenced.
      boolean read = !kind.mayWrite() && !kind.endsTransaction() && !kind.rollsBackToSavepoint();
      Object carried;
      try {
        carried = read ? tx.readCarried(context, carrier) : tx.carried(context, kind, carrier);
      } catch (Throwable e) {
        tx.endTransaction();
        throw e;
      }
      if (carried != TransactionChecks.NOT_CARRIED) {
        tx.endTransaction();
        checker.recordPending(raw);
        return carried;
      }
    }
    // Autocommit: make the execution and its check one transaction, never half-applied.
    raw.setAutoCommit(false);
    Object result = null;
    SQLException ranThenRefused = null;
    try {
      wrapperTransaction = true;
      try {
        result = tx.carried(context, kind, carrier);
        if (result == TransactionChecks.NOT_CARRIED) {
          tx.beforeRun(context, kind);
          result = run(call, kind);
        }
      } catch (PSQLException e) {
        if (!DriverResult.ranThenRefused(e)) {
          throw e;
        }
        ranThenRefused = e; // committed without the wrapper too: commit (checked), then throw
      } finally {
        wrapperTransaction = false;
      }
      tx.commitChecked();
    } catch (Throwable thrown) {
      // The refusal (or the write's own error) is what the caller must see, even when the
      // connection broke too and cannot roll back.
      Throwable primary = kind.nonAtomic() ? FencingExceptions.commitInside(thrown) : thrown;
      tx.endTransaction();
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
    tx.endTransaction();
    raw.setAutoCommit(true);
    checker.recordPending(raw);
    if (ranThenRefused != null) {
      throw ranThenRefused;
    }
    return result;
  }

  /**
   * A command that PostgreSQL refuses inside a transaction block (25001) and that runs no user code
   * (a plain {@code VACUUM}, {@code CREATE DATABASE}, ...: {@link
   * SqlClassifier.Classification#outsideTransaction()}) in autocommit cannot share a transaction
   * with its check, carried or in the wrapper's transaction. The check runs first, in a round trip
   * and an implicit transaction of its own, then the command alone: a stale token is refused before
   * the command runs, but the check's share lock ends before it, so a handover in that moment is
   * not seen (none of these commands writes table rows).
   */
  private @Nullable Object checkedFirst(
      FencingContext context, SqlClassifier.Classification kind, JdbcCall call) throws Throwable {
    try {
      checker.check(raw, context.bindings(), tx.caller());
    } finally {
      tx.endTransaction();
    }
    checker.recordPending(raw);
    return run(call, kind);
  }

  /**
   * A refusal by the database (a protected table's trigger, a check in the SQL itself) as the
   * library's exception, rolled back and recorded like the check's own; any other failure as it is
   * ({@link TransactionChecks#refused}).
   */
  private SQLException refused(SQLException e) {
    return tx.refused(e);
  }

  /**
   * {@link #refused(SQLException)} for a streaming COPY's later call, in the caller's transaction
   * (streaming needs one): a refusal keeps that transaction failed until {@code rollback()}.
   */
  SQLException streamRefused(SQLException e) throws SQLException {
    boolean callersTransaction = !raw.getAutoCommit();
    return kept(refused(e), callersTransaction);
  }

  private @Nullable Object run(JdbcCall call, SqlClassifier.Classification kind) throws Throwable {
    try {
      return call.call();
    } catch (SQLException e) {
      // The failed statement may have been rolled back to a savepoint taken before the check
      // (pgjdbc autosave): check again next time.
      tx.forgetChecks();
      throw refused(e);
    } finally {
      if (kind.endsTransaction()) {
        endTransaction();
      } else if (kind.rollsBackToSavepoint()) {
        tx.forgetChecks();
      }
    }
  }
}
