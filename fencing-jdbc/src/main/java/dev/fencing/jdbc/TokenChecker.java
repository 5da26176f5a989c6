package dev.fencing.jdbc;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Compare, seen from Java: the one place that asks PostgreSQL to check tokens (the fence's SQL
 * function {@code check_tokens}) and turns a refusal into the library's exception, after rolling
 * the transaction back and recording the refusal.
 */
final class TokenChecker {
  private static final Logger log = LoggerFactory.getLogger(TokenChecker.class);

  private final String checkSql;
  private final String recordSql;
  private final boolean recordRejections;
  private final FencingMetrics metrics;

  TokenChecker(String schema, boolean recordRejections, FencingMetrics metrics) {
    this.checkSql = "SELECT " + schema + ".check_tokens(?, ?)";
    this.recordSql = "SELECT " + schema + ".record_rejection(?, ?, ?)";
    this.recordRejections = recordRejections;
    this.metrics = metrics;
  }

  /**
   * Checks {@code bindings} in the open transaction of {@code connection} (autocommit off). On
   * success the database holds the fence for them until the transaction ends.
   *
   * @throws FencingRefusedException after rolling the transaction back
   */
  void check(Connection connection, List<FencingContext.Binding> bindings) throws SQLException {
    for (FencingContext.Binding b : bindings) {
      Lease lease = b.lease();
      if (lease != null && lease.isLost()) {
        throw refuse(
            connection,
            new LeaseLostException(
                "lease on " + b.token() + " is lost; its token is no longer carried",
                FencingSqlState.LEASE_NOT_HELD.code(),
                b.token().resource(),
                b.token().value(),
                null,
                null),
            true);
      }
    }
    String[] resources = new String[bindings.size()];
    Long[] tokens = new Long[bindings.size()];
    for (int i = 0; i < resources.length; i++) {
      resources[i] = bindings.get(i).token().resource();
      tokens[i] = bindings.get(i).token().value();
    }
    long start = System.nanoTime();
    int advanced;
    try (PreparedStatement ps = connection.prepareStatement(checkSql)) {
      Array resourceArray = connection.createArrayOf("text", resources);
      Array tokenArray = connection.createArrayOf("bigint", tokens);
      ps.setArray(1, resourceArray);
      ps.setArray(2, tokenArray);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        advanced = rs.getInt(1);
      }
    } catch (SQLException e) {
      FencingRefusedException refusal =
          FencingExceptions.translate(
              e,
              resources.length == 1 ? resources[0] : null,
              tokens.length == 1 ? tokens[0] : null);
      if (refusal == null) {
        throw e;
      }
      throw refuse(connection, refusal, true);
    }
    metrics.checked(resources.length, advanced, System.nanoTime() - start);
  }

  /**
   * Rolls back, logs, counts and (if {@code record}) records {@code refusal}; returns it for the
   * caller to throw. Refusals of the database and of a lease the client knows lost are recorded
   * (the rejection log holds every refusal a client saw of a token); a write with no token bound
   * names no resource and is not.
   */
  FencingRefusedException refuse(
      Connection connection, FencingRefusedException refusal, boolean record) {
    try {
      connection.rollback();
    } catch (SQLException e) {
      refusal.addSuppressed(e);
    }
    log.warn(
        "fencing refused a write to {} with token {} (max_seen {}): {}",
        refusal.resource(),
        refusal.presentedToken(),
        refusal.maxSeen(),
        refusal.getMessage());
    metrics.refused(refusal);
    if (record && recordRejections) {
      record(connection, refusal);
    }
    return refusal;
  }

  /** The refused transaction is gone; the record gets a transaction of its own. */
  private void record(Connection connection, FencingRefusedException refusal) {
    try (PreparedStatement ps = connection.prepareStatement(recordSql)) {
      ps.setString(1, refusal.resource());
      ps.setObject(2, refusal.presentedToken(), java.sql.Types.BIGINT);
      ps.setString(3, refusal.getSQLState());
      ps.executeQuery().close();
      connection.commit();
    } catch (SQLException e) {
      refusal.addSuppressed(e);
      try {
        connection.rollback();
      } catch (SQLException again) {
        refusal.addSuppressed(again);
      }
    }
  }
}
