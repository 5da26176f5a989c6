package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.PATIENCE;
import static dev.fencing.jdbc.FencingTestSupport.backendPid;
import static dev.fencing.jdbc.FencingTestSupport.insert;
import static dev.fencing.jdbc.FencingTestSupport.maxSeen;
import static dev.fencing.jdbc.FencingTestSupport.present;
import static dev.fencing.jdbc.FencingTestSupport.queryLong;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;

/**
 * A fencing check made to wait as in a handover (another session keeps its advance of the
 * resource's {@code max_seen} open, so the check waits for its lock, seen in {@code pg_locks}), and
 * how a test sees the caller's {@code cancel()} or query timeout stop it: {@link
 * HiddenCheckCancelTest}, {@link SimpleDescribeCancelTest}, and the run they share ({@link
 * #stoppedWhileTheCheckWaits}). Test code only.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
final class HandoverWait {
  /** How long a cancelled or timed-out execution may take to end: far less than the lock held. */
  static final long PROMPT_SECONDS = 10;

  private HandoverWait() {}

  /** How the caller stops the execution. */
  enum Stop {
    CANCEL,
    QUERY_TIMEOUT
  }

  /** Where the execution runs: in autocommit, or in the caller's transaction at a level. */
  enum Mode {
    AUTOCOMMIT(-1),
    READ_COMMITTED(Connection.TRANSACTION_READ_COMMITTED),
    REPEATABLE_READ(Connection.TRANSACTION_REPEATABLE_READ),
    SERIALIZABLE(Connection.TRANSACTION_SERIALIZABLE);

    final int level;

    Mode(int level) {
      this.level = level;
    }

    boolean transaction() {
      return level >= 0;
    }
  }

  /** Makes, on {@code c}, the statement whose execution writes the row. */
  @FunctionalInterface
  interface Prepare {
    Statement prepare(Connection c) throws SQLException;
  }

  /** Runs the statement {@link Prepare} made: an execution whose check the fence runs first. */
  @FunctionalInterface
  interface Execution {
    void execute(Statement s) throws SQLException;
  }

  /**
   * The execution of a statement writing row {@code block} of {@code t}, with token 20 of the
   * external resource {@code res} (made at {@code max_seen} 5) bound, stopped by {@code stop} while
   * its check waits for a handover that another session keeps open: PostgreSQL's cancel ({@code
   * 57014}) while the handover's lock is held, the caller's transaction (in {@code mode}) aborted
   * as PostgreSQL aborts it ({@code 25P02}) and usable after rollback; once the handover is let go
   * the same token writes row {@code block + 1} on the same connection; nothing of the stopped
   * write, nothing recorded as a refusal.
   */
  static void stoppedWhileTheCheckWaits(
      DataSource plain,
      DataSource fenced,
      ExecutorService threads,
      String res,
      int block,
      Stop stop,
      Mode mode,
      Prepare prepare,
      Execution execution,
      String description)
      throws Exception {
    FencingToken token = FencingToken.of(res, 20);
    try (Connection handover = openHandover(plain, res);
        FencingScope scope = Fencing.bind(token);
        Connection c = fenced.getConnection()) {
      int pid = backendPid(c);
      if (mode.transaction()) {
        c.setTransactionIsolation(mode.level);
        c.setAutoCommit(false);
      }
      Statement s = prepare.prepare(c);
      if (stop == Stop.QUERY_TIMEOUT) {
        s.setQueryTimeout(1);
      }
      Future<Void> running =
          threads.submit(
              () -> {
                try (FencingScope inner = Fencing.bind(token)) {
                  execution.execute(s);
                }
                return null;
              });
      if (stop == Stop.CANCEL) {
        await().atMost(PATIENCE).until(() -> waitingForALock(plain, pid) || running.isDone());
        assertThat(running).as(description + ": the check waits for the handover").isNotDone();
        s.cancel();
      }

      Throwable thrown = outcome(running, handover);
      assertCancelledByPostgres(thrown, description + " " + stop + " " + mode);

      if (mode.transaction()) {
        assertThatThrownBy(() -> c.createStatement().executeQuery("SELECT 1"))
            .isInstanceOfSatisfying(
                SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("25P02"));
        c.rollback();
      } else {
        assertThat(c.getAutoCommit()).isTrue();
      }
      handover.rollback(); // the handover is over: max_seen 5 again
      s.close();

      insert(c, block + 1); // the same token, the same connection: checked, written
      if (mode.transaction()) {
        c.commit();
      }
    }
    assertThat(present(plain, block)).as(description + ": the stopped write").isFalse();
    assertThat(present(plain, block + 1)).as("the write after it").isTrue();
    assertThat(maxSeen(plain, res)).isEqualTo(20);
    assertThat(queryLong(plain, "SELECT count(*) FROM fencing.rejection WHERE resource = ?", res))
        .as("a cancel is no refusal")
        .isZero();
  }

  /**
   * What the execution threw, once it ended; it must end within {@link #PROMPT_SECONDS} while the
   * handover's lock is still held (else the handover is let go, so the thread ends, and it fails).
   */
  static Throwable outcome(Future<Void> execution, Connection handover) throws Exception {
    try {
      execution.get(PROMPT_SECONDS, TimeUnit.SECONDS);
      throw new AssertionError("the execution succeeded while the check was to wait");
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (TimeoutException e) {
      handover.rollback(); // let the check go on, so the thread ends
      Throwable late = null;
      try {
        execution.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      } catch (ExecutionException again) {
        late = again.getCause();
      }
      throw new AssertionError(
          "the execution ignored the cancel or query timeout, still running after "
              + PROMPT_SECONDS
              + " s while the handover's lock was held; once the lock was let go it ended with "
              + late,
          e);
    }
  }

  /**
   * The new holder's first write of {@code res} (an external resource at {@code max_seen} 5), its
   * advance to 10 left open on the connection returned: every check of {@code res} waits for it
   * until that connection rolls back.
   */
  static Connection openHandover(DataSource plain, String res) throws SQLException {
    Connection handover = plain.getConnection();
    try {
      handover.setAutoCommit(false);
      FencingTestSupport.query(handover, "SELECT fencing.check_token(?, ?)", res, 10L);
      return handover;
    } catch (SQLException | RuntimeException e) {
      handover.close();
      throw e;
    }
  }

  /** Whether the backend {@code pid} waits for a lock. */
  static boolean waitingForALock(DataSource plain, int pid) throws SQLException {
    return queryLong(plain, "SELECT count(*) FROM pg_locks WHERE pid = ? AND NOT granted", pid) > 0;
  }

  /** {@code thrown} is PostgreSQL's cancel ({@code 57014}), not a refusal. */
  static void assertCancelledByPostgres(Throwable thrown, String description) {
    assertThat(thrown)
        .as(description + ": PostgreSQL's cancel, not a refusal")
        .isInstanceOf(SQLException.class)
        .isNotInstanceOf(FencingRefusedException.class);
    assertThat(((SQLException) thrown).getSQLState()).as(thrown.toString()).isEqualTo("57014");
    assertThat(FencingExceptions.find(thrown)).isEmpty();
  }
}
