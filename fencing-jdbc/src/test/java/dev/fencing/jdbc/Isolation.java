package dev.fencing.jdbc;

import java.sql.Connection;

/**
 * The isolation levels the concurrency tests run their transactions at ({@link
 * ExternalTokenHandoverTest}, {@link HandoverTimeoutTest}, {@link HandoverInterruptTest}, {@link
 * HiddenHoldCursorTest}).
 */
enum Isolation {
  READ_COMMITTED(Connection.TRANSACTION_READ_COMMITTED),
  REPEATABLE_READ(Connection.TRANSACTION_REPEATABLE_READ),
  SERIALIZABLE(Connection.TRANSACTION_SERIALIZABLE);

  /** The JDBC level, for {@link Connection#setTransactionIsolation}. */
  final int level;

  Isolation(int level) {
    this.level = level;
  }

  /** Whether a transaction keeps one snapshot throughout (not a new one per statement). */
  boolean snapshotPerTransaction() {
    return this != READ_COMMITTED;
  }
}
