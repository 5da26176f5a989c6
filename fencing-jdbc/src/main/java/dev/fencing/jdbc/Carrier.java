package dev.fencing.jdbc;

import java.sql.SQLException;
import org.jspecify.annotations.Nullable;
import org.postgresql.jdbc.PreferQueryMode;

/**
 * An execution that can carry the check in its own round trip (issue 13): a prepared statement's
 * ({@link CarriedCheck}), a plain statement's ({@link CarriedStatement}), a batch ({@link
 * CarriedBatch}).
 */
@FunctionalInterface
interface Carrier {
  /**
   * Runs the execution behind {@code check}, in one round trip; null if nothing was sent (the check
   * then runs on its own, before the plain execution).
   */
  @Nullable Carried call(CheckArguments check) throws SQLException;

  /**
   * Whether this execution, carrying the check of {@code tokens} tokens, may run as more than one
   * implicit transaction in autocommit under {@code mode}: a prepared statement's with {@code
   * simple} (pgjdbc sends its statements as query messages of their own, each its own transaction).
   */
  default boolean manyTransactionsInAutocommit(PreferQueryMode mode, int tokens) {
    return mode == PreferQueryMode.SIMPLE;
  }

  /**
   * Runs a read in autocommit with {@code check} (the commit's check, literal arguments: {@link
   * CheckLiteral#ifWritten}) behind it, as one implicit transaction in one round trip ({@link
   * CheckedRead}); null if nothing the caller may see was sent (it then runs the long way).
   */
  default @Nullable Carried callRead(String check) throws SQLException {
    return null;
  }

  /** What a carried execution returns to its caller, and what the check returned. */
  record Carried(@Nullable Object result, @Nullable Object advanced) {}
}
