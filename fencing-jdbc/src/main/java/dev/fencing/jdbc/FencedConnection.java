package dev.fencing.jdbc;

import java.sql.Array;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGConnection;
import org.postgresql.core.TransactionState;

/**
 * Carry: the connection of a {@link FencedDataSource}. Every statement it creates reports its
 * executions here; the first write of a transaction runs the check for the tokens bound on the
 * writing thread.
 *
 * <p>Public, like the JDK proxy it replaced and the pools' and drivers' own connection classes, so
 * that a JDBC method found through the runtime class ({@code c.getClass().getMethod("commit")}, as
 * dynamic languages and some frameworks do) can be called; its API is {@link java.sql.Connection}'s
 * and nothing more: only {@link FencedDataSource} makes one.
 */
public final class FencedConnection extends DelegatingConnection implements FencingConnection {
  private final TokenChecker checker;
  private final ConnectionFence fence;
  private final TransactionChecks tx;
  private final RefusedTransaction refused;
  private @Nullable PGConnection pgProxy;

  private FencedConnection(Connection raw, TokenChecker checker, boolean requireToken) {
    super(raw);
    this.checker = checker;
    this.fence = new ConnectionFence(raw, checker, requireToken);
    this.tx = fence.transaction();
    this.refused = fence.refusedState();
  }

  static Connection wrap(Connection raw, TokenChecker checker, boolean requireToken) {
    return new FencedConnection(raw, checker, requireToken);
  }

  @Override
  public Statement createStatement() throws SQLException {
    return statement(raw.createStatement());
  }

  @Override
  public Statement createStatement(int p1, int p2) throws SQLException {
    return statement(raw.createStatement(p1, p2));
  }

  @Override
  public Statement createStatement(int p1, int p2, int p3) throws SQLException {
    return statement(raw.createStatement(p1, p2, p3));
  }

  // an array's result sets lead back to this connection (FencedArray)
  @Override
  public Array createArrayOf(String p1, Object[] p2) throws SQLException {
    return FencedArray.of(this, raw.createArrayOf(p1, p2));
  }

  private Statement statement(Statement statement) {
    return new FencedStatement(this, statement);
  }

  @Override
  public PreparedStatement prepareStatement(String p1) throws SQLException {
    return prepared(raw.prepareStatement(p1), p1);
  }

  @Override
  public PreparedStatement prepareStatement(String p1, int p2) throws SQLException {
    return prepared(raw.prepareStatement(p1, p2), p1, p2);
  }

  @Override
  public PreparedStatement prepareStatement(String p1, int[] p2) throws SQLException {
    return prepared(raw.prepareStatement(p1, p2), p1, p2);
  }

  @Override
  public PreparedStatement prepareStatement(String p1, String[] p2) throws SQLException {
    return prepared(raw.prepareStatement(p1, p2), p1, p2);
  }

  @Override
  public PreparedStatement prepareStatement(String p1, int p2, int p3) throws SQLException {
    return prepared(raw.prepareStatement(p1, p2, p3), p1, p2, p3);
  }

  @Override
  public PreparedStatement prepareStatement(String p1, int p2, int p3, int p4) throws SQLException {
    return prepared(raw.prepareStatement(p1, p2, p3, p4), p1, p2, p3, p4);
  }

  /** {@code statement} fenced; {@code args}: those of the {@code prepareStatement} call, boxed. */
  private PreparedStatement prepared(PreparedStatement statement, Object... args) {
    return new FencedPreparedStatement(this, statement, args);
  }

  @Override
  public CallableStatement prepareCall(String p1) throws SQLException {
    return callable(raw.prepareCall(p1), p1);
  }

  @Override
  public CallableStatement prepareCall(String p1, int p2, int p3) throws SQLException {
    return callable(raw.prepareCall(p1, p2, p3), p1, p2, p3);
  }

  @Override
  public CallableStatement prepareCall(String p1, int p2, int p3, int p4) throws SQLException {
    return callable(raw.prepareCall(p1, p2, p3, p4), p1, p2, p3, p4);
  }

  private CallableStatement callable(CallableStatement statement, Object... args) {
    return new FencedCallableStatement(this, statement, args);
  }

  @Override
  public void commit() throws SQLException {
    refused.requireUsable("commit()");
    try {
      tx.commitChecked();
    } finally {
      endTransaction();
    }
    // between transactions now: record refusals whose recording failed before
    checker.recordPending(raw);
  }

  @Override
  public void rollback() throws SQLException {
    try {
      raw.rollback();
      refused.clear();
    } finally {
      endTransaction();
    }
    checker.recordPending(raw);
  }

  @Override
  public void rollback(Savepoint p1) throws SQLException {
    refused.requireUsable("rollback(Savepoint)");
    try {
      raw.rollback(p1);
    } finally {
      if (p1 != null) {
        tx.forgetChecks();
      } else {
        endTransaction();
      }
    }
  }

  @Override
  public void setAutoCommit(boolean p1) throws SQLException {
    if (p1) {
      refused.requireUsable("setAutoCommit(true), which commits,");
    }
    boolean commits = p1 && !raw.getAutoCommit();
    try {
      if (commits) {
        // switching autocommit on commits the open transaction: with the check, like commit()
        tx.commitChecked();
      }
      raw.setAutoCommit(p1);
    } finally {
      // Not a call that changes nothing (JDBC: a no-op), in an open transaction, or in a block
      // opened in SQL in autocommit: that transaction goes on, and its end checks what it wrote.
      if (commits || tx.transactionState() == TransactionState.IDLE) {
        endTransaction();
      }
    }
  }

  /**
   * Rolls back a transaction the caller left open, then closes. A pool under the fence (HikariCP)
   * rolls back only what its own statements wrote, then resets autocommit, which in pgjdbc commits
   * the open transaction without the check: a write the wrapper does not see (the large object or
   * fastpath API) made with a stale token, or in a refused transaction, would commit. A block
   * opened in SQL ({@code BEGIN}) in autocommit too: the pool does not see it and hands the
   * connection on with it open, to be committed by the next borrower's {@code COMMIT}, checked for
   * that borrower's tokens only.
   */
  @Override
  public void close() throws SQLException {
    try {
      if (!raw.isClosed() && tx.transactionState() != TransactionState.IDLE) {
        if (!raw.getAutoCommit()) {
          raw.rollback();
        } else {
          try (Statement s = raw.createStatement()) {
            s.execute("ROLLBACK"); // pgjdbc's rollback() refuses in autocommit
          }
        }
      }
    } finally {
      try {
        raw.close();
      } finally {
        endTransaction();
      }
    }
  }

  @Override
  public Savepoint setSavepoint() throws SQLException {
    refused.requireUsable("setSavepoint()");
    return raw.setSavepoint();
  }

  @Override
  public Savepoint setSavepoint(String p1) throws SQLException {
    refused.requireUsable("setSavepoint(String)");
    return raw.setSavepoint(p1);
  }

  @Override
  public void releaseSavepoint(Savepoint p1) throws SQLException {
    refused.requireUsable("releaseSavepoint(Savepoint)");
    raw.releaseSavepoint(p1);
  }

  private void endTransaction() {
    fence.endTransaction();
  }

  @Override
  public DatabaseMetaData getMetaData() throws SQLException {
    return FencedChild.metaData(this, raw.getMetaData());
  }

  @Override
  @SuppressWarnings("unchecked")
  public <T> T unwrap(Class<T> p1) throws SQLException {
    if (p1.isInstance(this)) {
      return (T) this;
    }
    if (p1 == PGConnection.class) {
      if (pgProxy == null) {
        pgProxy = FencedCopyManager.pgConnection(this, raw.unwrap(PGConnection.class));
      }
      return (T) pgProxy;
    }
    return raw.unwrap(p1);
  }

  @Override
  public boolean isWrapperFor(Class<?> p1) throws SQLException {
    return p1.isInstance(this) || raw.isWrapperFor(p1);
  }

  @Override
  public String toString() {
    return "Fenced[" + raw + "]";
  }

  /** How this connection's executions are fenced: every statement execution passes there. */
  ConnectionFence fence() {
    return fence;
  }

  /** The connection the application holds: this one. */
  Connection proxy() {
    return this;
  }

  Connection raw() {
    return raw;
  }

  /** The tables of fenced entities declared for this connection's data source. */
  TableGuards guards() {
    return checker.guards();
  }

  /**
   * Every text a prepared statement may carry the check of {@code tokens} tokens with now ({@link
   * CheckForms}).
   */
  List<String> checkTexts(int tokens) {
    return checker.checkTexts(tokens);
  }

  /** The tokens this connection checks: those bound for its database's resources. */
  FencingContext bound() {
    return checker.bound();
  }
}
