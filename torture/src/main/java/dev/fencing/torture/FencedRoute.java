package dev.fencing.torture;

import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingExceptions;
import dev.fencing.jdbc.FencingRefusedException;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.Lease;
import dev.fencing.torture.Worker.HoldPoint;
import dev.fencing.torture.Worker.Route;
import dev.fencing.torture.Worker.Step;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * A worker's writes on {@link Route#DIRECT} and {@link Route#HIDDEN}: through its one long-lived
 * connection of the {@link FencedDataSource} (fenced runs; unfenced, the plain data source), with
 * its lease (or only the lease's token) bound for the transaction. A refusal is rolled back (the
 * fenced connection records it) and logged with its SQLSTATE; at {@link HoldPoint#CARRY_ON} the
 * refused transaction is not rolled back but carried on with no token bound, and must stay failed.
 */
final class FencedRoute {
  /**
   * What a write came to: {@code result} {@code ACK}, {@code REFUSED} or {@code ERROR} (as the
   * harness reads it), {@code committed} whether it committed its own transaction on the connection
   * (a carried-on write that committed is an {@code ACK} the checker judges, not one the worker
   * goes on from).
   */
  record Outcome(String result, boolean committed) {}

  /** PostgreSQL's "current transaction is aborted", as the fenced connection raises it too. */
  private static final String IN_FAILED_TRANSACTION = "25P02";

  private final WorkerConnection connection;
  private final boolean bindLease;
  private final int worker;
  private final WorkerLog log;

  FencedRoute(DataSource writes, boolean bindLease, int worker, WorkerLog log) {
    this.connection = new WorkerConnection(writes);
    this.bindLease = bindLease;
    this.worker = worker;
    this.log = log;
  }

  /**
   * One write on {@code route} ({@link Route#DIRECT} or {@link Route#HIDDEN}) under {@code lease};
   * {@code hold} runs at {@code at} ({@link HoldPoint#MID} or {@link HoldPoint#COMMIT}; the caller
   * holds before the write itself), {@code pause} after a failure outside the transaction.
   */
  Outcome write(Lease lease, Route route, long seq, @Nullable HoldPoint at, Step hold, Step pause)
      throws IOException {
    String resource = lease.resource();
    long token = lease.token().value();
    String result;
    boolean committed = false;
    @Nullable Connection refusedTransaction = null;
    try (FencingScope scope = bindLease ? Fencing.bind(lease) : Fencing.bind(lease.token())) {
      Connection c = connection.get();
      try {
        long n =
            WriteStatements.commit(
                c, route, "torture_write", resource, token, worker, seq, at, hold);
        log.acknowledged(resource, token, seq, n);
        committed = true;
        result = "ACK";
      } catch (SQLException e) {
        Optional<FencingRefusedException> refusal = FencingExceptions.find(e);
        if (refusal.isPresent()) {
          log.refused(resource, token, seq, refusal.get().getSQLState());
          result = "REFUSED";
        } else {
          log.error(seq, e);
          close();
          result = "ERROR";
        }
        if (refusal.isPresent() && at == HoldPoint.CARRY_ON) {
          refusedTransaction =
              c; // no rollback: the worker goes on in the transaction, its scope ended
        } else {
          rollbackQuietly(c);
        }
      }
    } catch (SQLException e) {
      log.error(seq, e);
      close();
      pause.run();
      result = "ERROR";
    }
    if (refusedTransaction != null) {
      result = carryOn(refusedTransaction, route, resource, token, seq);
    }
    return new Outcome(result, committed);
  }

  /**
   * {@link HoldPoint#CARRY_ON}: after the refusal of write {@code seq}, with no rollback and no
   * token bound, the worker writes the record again in the same transaction and commits.
   *
   * @return {@code REFUSED} if that failed as the refused transaction kept failed ({@link
   *     #carriedOn}), {@code ACK} if it committed (the checker finds the refused write in the
   *     data), {@code ERROR} otherwise (logged with its SQLSTATE: a fresh refusal, say, shows among
   *     the report's other errors)
   */
  private String carryOn(Connection c, Route route, String resource, long token, long seq)
      throws IOException {
    try {
      WriteStatements.commit(
          c, route, "torture_write", resource, token, worker, seq, null, () -> {});
      return "ACK";
    } catch (SQLException e) {
      String outcome = carriedOn(e);
      if (!outcome.equals("REFUSED")) {
        log.error(seq, e);
      }
      return outcome;
    } finally {
      rollbackQuietly(c);
    }
  }

  /**
   * What a carried-on statement's (or commit's) failure {@code e} comes to: {@code REFUSED} only
   * for the refused transaction kept failed, SQLSTATE {@code 25P02} with the refusal as its cause.
   * The refusal itself came at the write's first statement with its own SQLSTATE ({@code ZF001},
   * logged as the write's refusal); a carried-on statement refused with a fence SQLSTATE of its own
   * was judged by a check of its own (a connection that forgot the refused transaction runs the
   * carried-on statements in a new one and refuses its commit anew): {@code ERROR}, as is anything
   * else.
   */
  static String carriedOn(SQLException e) {
    return IN_FAILED_TRANSACTION.equals(e.getSQLState()) && FencingExceptions.find(e).isPresent()
        ? "REFUSED"
        : "ERROR";
  }

  /**
   * The worker's clean end: a rollback on the connection (opened if need be), which records any
   * refusal whose recording was cut off earlier (FencedDataSource records them after the next
   * commit or rollback); a failure is logged against {@code seq}.
   */
  void rollback(long seq) throws IOException {
    try {
      connection.get().rollback();
    } catch (SQLException e) {
      log.error(seq, e);
    }
  }

  private void rollbackQuietly(Connection c) {
    try {
      if (!c.isClosed()) {
        c.rollback();
      }
    } catch (SQLException e) {
      close();
    }
  }

  /** Closes the connection, if open. */
  void close() {
    connection.close();
  }
}
