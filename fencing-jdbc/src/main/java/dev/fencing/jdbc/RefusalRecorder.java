package dev.fencing.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.Deque;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGConnection;
import org.postgresql.util.ServerErrorMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records refusals in the rejection log with {@code record_rejection}, for {@link TokenChecker}.
 *
 * <p>A refusal is recorded from the DETAIL the database sent with it (its receipt proves the
 * refusal happened); a write refused because the lease is known lost is recorded with the lease's
 * resource and token, which the database accepts once it agrees the lease is lost. A refusal whose
 * recording fails is kept (at most {@link #MAX_PENDING}) and recorded after the next successful
 * commit or rollback of any connection of the same {@link FencedDataSource}. One the database will
 * never take (no valid receipt) is logged and dropped. A record is made read-write on a connection
 * the application set read-only, and never tried on a hot standby.
 */
final class RefusalRecorder {
  // Under TokenChecker's name: one logger tells of refusals and of their records.
  private static final Logger log = LoggerFactory.getLogger(TokenChecker.class);

  /** At most this many refusals wait to be recorded; beyond, the oldest is dropped (logged). */
  static final int MAX_PENDING = 1_000;

  /**
   * A refusal still to be recorded: what {@code record_rejection} takes (the refusal's DETAIL with
   * its receipt, or a lease-lost refusal the database checks).
   */
  private record Pending(String resource, @Nullable Long token, String refusal) {}

  private final String recordSql;
  private final Deque<Pending> pending = new ArrayDeque<>(); // guarded by itself
  private volatile boolean hasPending;

  RefusalRecorder(String schema) {
    this.recordSql = "SELECT " + schema + ".record_rejection(?)";
  }

  /**
   * The refused transaction is gone; the record gets a transaction of its own, read-write even on a
   * connection the application made read-only (its setting is restored). A hot standby cannot
   * record: the refusal waits for a connection to a primary.
   */
  void record(Connection connection, FencingRefusedException refusal) {
    String recordable = recordable(refusal);
    if (recordable == null) {
      log.warn(
          "the refusal of token {} for {} carries no receipt from the database; not recorded",
          refusal.presentedToken(),
          refusal.resource());
      return;
    }
    Pending p = new Pending(refusal.resource(), refusal.presentedToken(), recordable);
    if (onStandby(connection)) {
      keep(p);
      log.warn(
          "a hot standby cannot record the refusal of token {} for {}; it will be recorded after"
              + " the next commit on a primary of this data source",
          p.token(),
          p.resource());
      return;
    }
    boolean autoCommit = true;
    boolean readOnly = false;
    try {
      autoCommit = connection.getAutoCommit();
      readOnly = readWrite(connection);
      insert(connection, p);
      if (!autoCommit) {
        connection.commit();
      }
    } catch (SQLException e) {
      refusal.addSuppressed(e);
      if (!autoCommit) {
        rollbackQuietly(connection);
      }
      restoreReadOnly(connection, readOnly, refusal);
      if (cannotBeRecorded(e)) {
        log.error("the refusal {} cannot be recorded: {}", p.refusal(), e.getMessage());
        return;
      }
      keep(p);
      log.warn(
          "could not record the refusal of token {} for {} ({}); it will be recorded after the"
              + " next commit on this data source",
          p.token(),
          p.resource(),
          e.toString());
      return;
    }
    restoreReadOnly(connection, readOnly, refusal);
    recordPending(connection);
  }

  /**
   * Records the refusals whose recording failed, on {@code connection}, which is between
   * transactions (right after a successful commit or rollback). Never throws: what cannot be
   * recorded now stays for the next time.
   */
  void recordPending(Connection connection) {
    if (!hasPending) {
      return;
    }
    if (onStandby(connection)) {
      return; // it cannot record: a primary's connection will
    }
    boolean autoCommit;
    boolean readOnly;
    try {
      autoCommit = connection.getAutoCommit();
      readOnly = readWrite(connection);
    } catch (SQLException e) {
      return;
    }
    try {
      recordPending(connection, autoCommit);
    } finally {
      restoreReadOnly(connection, readOnly, null);
    }
  }

  private void recordPending(Connection connection, boolean autoCommit) {
    while (true) {
      Pending p;
      synchronized (pending) {
        p = pending.pollFirst();
        hasPending = !pending.isEmpty();
      }
      if (p == null) {
        return;
      }
      try {
        insert(connection, p);
        if (!autoCommit) {
          connection.commit();
        }
        log.info("recorded the earlier refusal of token {} for {}", p.token(), p.resource());
      } catch (SQLException e) {
        if (!autoCommit) {
          rollbackQuietly(connection);
        }
        if (cannotBeRecorded(e)) {
          log.error("the refusal {} cannot be recorded: {}", p.refusal(), e.getMessage());
          continue;
        }
        // the connection broke, or the database does not agree yet (a lease-lost refusal of a
        // lease still valid by its clock): at the end of the queue, for the next time
        synchronized (pending) {
          pending.addLast(p);
          hasPending = true;
        }
        return;
      }
    }
  }

  /**
   * What {@code record_rejection} takes for {@code refusal}: the DETAIL the database sent with it
   * (with its receipt), or, for a write the client refused because it knows the lease lost, the
   * lease's resource and token (recorded once the database agrees the lease is lost). Null if the
   * database's DETAIL is not at hand.
   */
  static @Nullable String recordable(FencingRefusedException refusal) {
    if (refusal instanceof LeaseLostException lost && lost.presentedToken() != null) {
      // resource names never need escaping in JSON (FencingToken.requireValidResource)
      return "{\"resource\": \""
          + lost.resource()
          + "\", \"token\": "
          + lost.presentedToken()
          + ", \"reason\": \"lease_lost\"}";
    }
    ServerErrorMessage server = FencingExceptions.serverError(refusal);
    return server == null ? null : server.getDetail();
  }

  /** record_rejection refused the record itself (no valid receipt): retrying cannot help. */
  private static boolean cannotBeRecorded(SQLException e) {
    return FencingSqlState.of(e.getSQLState()).orElse(null) == FencingSqlState.INVALID_ARGUMENT;
  }

  private void insert(Connection connection, Pending p) throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(recordSql)) {
      ps.setString(1, p.refusal());
      ps.executeQuery().close();
    }
  }

  private void keep(Pending p) {
    Pending dropped = null;
    synchronized (pending) {
      if (pending.size() >= MAX_PENDING) {
        dropped = pending.pollFirst();
      }
      pending.addLast(p);
      hasPending = true;
    }
    if (dropped != null) {
      log.error(
          "more than {} refusals wait to be recorded; dropped the refusal of token {} for {}",
          MAX_PENDING,
          dropped.token(),
          dropped.resource());
    }
  }

  /**
   * Whether {@code connection} is to a hot standby (PostgreSQL 14 and later report {@code
   * in_hot_standby}): read from what the driver was told, no round trip.
   */
  private static boolean onStandby(Connection connection) {
    try {
      return "on"
          .equals(connection.unwrap(PGConnection.class).getParameterStatus("in_hot_standby"));
    } catch (SQLException e) {
      return false; // not pgjdbc's: the record tries, and keeps the refusal if it fails
    }
  }

  /**
   * Makes a connection the application set read-only ({@code setReadOnly(true)}: pgjdbc begins its
   * transactions {@code READ ONLY}) read-write for the record; returns whether it was read-only.
   */
  private static boolean readWrite(Connection connection) throws SQLException {
    if (!connection.isReadOnly()) {
      return false;
    }
    connection.setReadOnly(false);
    return true;
  }

  /** Gives the application its read-only setting back, between transactions. */
  private static void restoreReadOnly(
      Connection connection, boolean readOnly, @Nullable FencingRefusedException refusal) {
    if (!readOnly) {
      return;
    }
    try {
      connection.setReadOnly(true);
    } catch (SQLException e) {
      if (refusal != null) {
        refusal.addSuppressed(e);
      }
      log.warn(
          "could not make the connection read-only again after a refusal's record: {}",
          e.toString());
    }
  }

  private static void rollbackQuietly(Connection connection) {
    try {
      connection.rollback();
    } catch (SQLException again) {
      // the connection is gone; nothing was recorded on it
    }
  }
}
