package dev.fencing.jdbc;

import java.sql.SQLException;
import org.jspecify.annotations.Nullable;

/**
 * The state of a {@link FencedConnection} whose caller's transaction (autocommit off) a refusal
 * rolled back: kept failed, as PostgreSQL keeps an aborted transaction, until the caller calls
 * {@code rollback()}. Without it the connection would be silently usable again: what the caller
 * writes next would run in a new transaction, and its {@code commit()} would succeed while what the
 * transaction wrote before the refusal is gone (Spring's {@code Propagation.NESTED}: the rollback
 * to the savepoint fails, the caller carries on in the outer transaction and commits).
 *
 * <p>While failed, every statement execution, {@code commit()}, {@code setAutoCommit(true)} (which
 * commits), {@code setSavepoint}, {@code rollback(Savepoint)} and {@code releaseSavepoint} throw an
 * {@link SQLException} with SQLState {@code 25P02} whose cause is the refusal, so {@link
 * FencingExceptions#find} finds it in whatever wraps that exception.
 *
 * <p>What ends it: {@code rollback()}, or a SQL string that rolls the whole transaction back as
 * PostgreSQL ends an aborted one ({@code ROLLBACK} / {@code ABORT} [{@code WORK} | {@code
 * TRANSACTION}] [{@code AND [NO] CHAIN}], alone in its string: {@link
 * SqlClassifier#rollsBackTransaction}). Not {@code COMMIT} or {@code END}: in an aborted
 * transaction PostgreSQL answers them with a silent ROLLBACK, which would tell the caller nothing
 * of the writes it lost; they are refused like {@code commit()}. Not {@code ROLLBACK TO SAVEPOINT}:
 * the refusal rolled back the whole transaction, the savepoint with it, so going on from it would
 * commit what follows without what preceded it; refused like {@code rollback(Savepoint)}.
 */
final class RefusedTransaction {
  /** PostgreSQL's "current transaction is aborted, commands ignored until end of block". */
  static final String IN_FAILED_TRANSACTION = "25P02";

  private @Nullable FencingRefusedException refusal;

  /** Keeps the transaction failed if {@code thrown} carries a refusal. */
  void keepIfRefused(Throwable thrown) {
    FencingExceptions.find(thrown).ifPresent(r -> refusal = r);
  }

  /** Whether a refusal rolled the caller's transaction back and the caller has not since. */
  boolean isFailed() {
    return refusal != null;
  }

  /** The caller rolled back: the connection is usable again. */
  void clear() {
    refusal = null;
  }

  /**
   * Throws if a refusal rolled the caller's transaction back and the caller has not rolled back
   * since; {@code call} names what the caller tried.
   */
  void requireUsable(String call) throws SQLException {
    FencingRefusedException r = refusal;
    if (r != null) {
      throw new SQLException(
          "current transaction is aborted: the fencing check refused a write ("
              + r.getMessage()
              + ") and the whole transaction was rolled back; "
              + call
              + " is refused until Connection.rollback() ends it",
          IN_FAILED_TRANSACTION,
          r);
    }
  }
}
