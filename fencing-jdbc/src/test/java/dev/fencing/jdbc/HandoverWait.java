package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.PATIENCE;
import static dev.fencing.jdbc.FencingTestSupport.queryLong;
import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;

/**
 * A fencing check made to wait as in a handover (another session keeps its advance of the
 * resource's {@code max_seen} open, so the check waits for its lock, seen in {@code pg_locks}), and
 * how a test sees the caller's {@code cancel()} or query timeout stop it: {@link
 * HiddenCheckCancelTest}, {@link SimpleDescribeCancelTest}. Test code only.
 */
final class HandoverWait {
  /** How long a cancelled or timed-out execution may take to end: far less than the lock held. */
  static final long PROMPT_SECONDS = 10;

  private HandoverWait() {}

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
