package dev.fencing.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.Reader;
import java.io.Writer;
import java.lang.reflect.Proxy;
import java.sql.SQLException;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyDual;
import org.postgresql.copy.CopyIn;
import org.postgresql.copy.CopyManager;
import org.postgresql.copy.CopyOut;
import org.postgresql.core.BaseConnection;
import org.postgresql.util.ByteStreamWriter;

/**
 * pgjdbc's COPY API, fenced: what {@code unwrap(PGConnection.class).getCopyAPI()} returns on a
 * {@link FencedDataSource} connection. COPY ... FROM is a write and is checked first; a streaming
 * COPY ({@link #copyIn(String)}, {@link #copyDual(String)}) in autocommit mode cannot be made one
 * transaction with its check and is refused.
 */
final class FencedCopyManager extends CopyManager {
  private final FencedConnection connection;

  private FencedCopyManager(FencedConnection connection, BaseConnection base) throws SQLException {
    super(base);
    this.connection = connection;
  }

  /** A PGConnection view of {@code connection} whose COPY API is fenced. */
  static PGConnection pgConnection(FencedConnection connection, PGConnection raw) {
    return (PGConnection)
        Proxy.newProxyInstance(
            FencedCopyManager.class.getClassLoader(),
            new Class<?>[] {PGConnection.class},
            (self, method, args) -> {
              switch (method.getName()) {
                case "getCopyAPI":
                  return new FencedCopyManager(
                      connection, connection.raw().unwrap(BaseConnection.class));
                case "getFastpathAPI":
                case "getLargeObjectAPI":
                  // their calls write past the statements: not in a refused transaction either
                  connection.fence().refusedState().requireUsable(method.getName() + "()");
                  requireTransaction(connection, method.getName() + "()");
                  break;
                default:
                  break;
              }
              // an array (createArrayOf) leads back to the fenced connection, as the Connection's
              return FencedChild.fence(connection, Delegation.invoke(raw, method, args), null);
            });
  }

  @Override
  public CopyIn copyIn(String sql) throws SQLException {
    requireTransactionForStreaming(sql);
    return refusing(
        CopyIn.class,
        (CopyIn) sqlOnly(() -> connection.fence().execute(sql, () -> super.copyIn(sql))));
  }

  @Override
  public CopyDual copyDual(String sql) throws SQLException {
    requireTransactionForStreaming(sql);
    return refusing(
        CopyDual.class,
        (CopyDual) sqlOnly(() -> connection.fence().execute(sql, () -> super.copyDual(sql))));
  }

  /**
   * A streaming COPY whose later calls report the database's refusal as the library's exception: a
   * protected table refuses the COPY once its data starts, so it surfaces at {@code endCopy}.
   */
  private <T> T refusing(Class<T> type, T copy) {
    return type.cast(
        Proxy.newProxyInstance(
            FencedCopyManager.class.getClassLoader(),
            new Class<?>[] {type},
            (self, method, args) -> {
              try {
                return Delegation.invoke(copy, method, args);
              } catch (SQLException e) {
                throw connection.fence().streamRefused(e);
              }
            }));
  }

  @Override
  public long copyIn(String sql, Reader from) throws SQLException, IOException {
    return (Long) io(() -> connection.fence().execute(sql, () -> super.copyIn(sql, from)));
  }

  @Override
  public long copyIn(String sql, Reader from, int bufferSize) throws SQLException, IOException {
    return (Long)
        io(() -> connection.fence().execute(sql, () -> super.copyIn(sql, from, bufferSize)));
  }

  @Override
  public long copyIn(String sql, InputStream from) throws SQLException, IOException {
    return (Long) io(() -> connection.fence().execute(sql, () -> super.copyIn(sql, from)));
  }

  @Override
  public long copyIn(String sql, InputStream from, int bufferSize)
      throws SQLException, IOException {
    return (Long)
        io(() -> connection.fence().execute(sql, () -> super.copyIn(sql, from, bufferSize)));
  }

  @Override
  public long copyIn(String sql, ByteStreamWriter from) throws SQLException, IOException {
    return (Long) io(() -> connection.fence().execute(sql, () -> super.copyIn(sql, from)));
  }

  @Override
  public CopyOut copyOut(String sql) throws SQLException {
    requireTransactionForStreaming(sql);
    return refusing(
        CopyOut.class,
        (CopyOut) sqlOnly(() -> connection.fence().execute(sql, () -> super.copyOut(sql))));
  }

  @Override
  public long copyOut(String sql, Writer to) throws SQLException, IOException {
    return (Long) io(() -> connection.fence().execute(sql, () -> super.copyOut(sql, to)));
  }

  @Override
  public long copyOut(String sql, OutputStream to) throws SQLException, IOException {
    return (Long) io(() -> connection.fence().execute(sql, () -> super.copyOut(sql, to)));
  }

  private void requireTransactionForStreaming(String sql) throws SQLException {
    if (connection.raw().getAutoCommit() && !connection.bound().isEmpty()) {
      throw new SQLException(
          "a streaming COPY cannot be fenced in autocommit mode (its check and its rows would be"
              + " separate transactions): call setAutoCommit(false) first, or use copyIn(sql,"
              + " Reader/InputStream) or copyOut(sql, Writer/OutputStream), which run as one"
              + " transaction: "
              + sql,
          "25000");
    }
  }

  /**
   * The fastpath and large object APIs call functions that may write, one autocommitted call at a
   * time: with tokens bound they are handed out only in a transaction, whose commit checks them.
   */
  private static void requireTransaction(FencedConnection connection, String api)
      throws SQLException {
    if (connection.raw().getAutoCommit() && !connection.bound().isEmpty()) {
      throw new SQLException(
          "with a fencing token bound, "
              + api
              + " is available only in a transaction: call setAutoCommit(false) first, so that"
              + " the commit checks what its calls wrote",
          "25000");
    }
  }

  private static @Nullable Object sqlOnly(ConnectionFence.JdbcCall call) throws SQLException {
    try {
      return call.call();
    } catch (SQLException | RuntimeException | Error e) {
      throw e;
    } catch (Throwable t) {
      throw new SQLException(t);
    }
  }

  private static @Nullable Object io(ConnectionFence.JdbcCall call)
      throws SQLException, IOException {
    try {
      return call.call();
    } catch (SQLException | IOException | RuntimeException | Error e) {
      throw e;
    } catch (Throwable t) {
      throw new SQLException(t);
    }
  }
}
