package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.PATIENCE;
import static dev.fencing.jdbc.FencingTestSupport.backendPid;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.FencingTestSupport.insert;
import static dev.fencing.jdbc.FencingTestSupport.maxSeen;
import static dev.fencing.jdbc.FencingTestSupport.nextBlock;
import static dev.fencing.jdbc.FencingTestSupport.present;
import static dev.fencing.jdbc.FencingTestSupport.queryLong;
import static dev.fencing.jdbc.HandoverWait.assertCancelledByPostgres;
import static dev.fencing.jdbc.HandoverWait.outcome;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencing.jdbc.HiddenCheckCancelTest.Mode;
import dev.fencing.jdbc.HiddenCheckCancelTest.Stop;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Under {@code preferQueryMode=simple} pgjdbc cannot describe a prepared statement: its {@code
 * getMetaData()} (no result set open) and {@code getParameterMetaData()} run it instead, an
 * execution the fence checks first ({@link SimpleMetaDataTest}), in a round trip of its own. The
 * statement's {@code cancel()} and {@code setQueryTimeout} reach that check as they reach the check
 * of any execution ({@link HiddenCheckCancelTest}): made to wait for a handover (another session's
 * open advance of {@code max_seen}, seen in {@code pg_locks}), it fails as PostgreSQL's cancel
 * ({@code 57014}) while that lock is held; nothing written, nothing recorded as a refusal, the
 * caller's transaction aborted ({@code 25P02}) and usable after rollback, in every isolation.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class SimpleDescribeCancelTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;
  private static DataSource simple;
  private static ExecutorService threads;

  @BeforeAll
  static void setUp() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = FencingTestSupport.plain(db, ds -> ds);
    FencingTestSupport.createTestSchema(plain);
    simple = MatrixFixture.simple(db);
    threads = Executors.newCachedThreadPool();
  }

  @AfterAll
  static void tearDown() {
    threads.shutdownNow();
  }

  /** The describe that pgjdbc runs as an execution under {@code simple}. */
  enum Describe {
    GET_META_DATA,
    GET_PARAMETER_META_DATA;

    void call(PreparedStatement ps) throws SQLException {
      if (this == GET_META_DATA) {
        ps.getMetaData();
      } else {
        ps.getParameterMetaData();
      }
    }
  }

  static Stream<Arguments> everyDescribe() {
    return Stream.of(Describe.values())
        .flatMap(
            describe ->
                Stream.of(Stop.values())
                    .flatMap(
                        stop ->
                            Stream.of(Mode.values())
                                .map(mode -> Arguments.of(describe, stop, mode))));
  }

  @ParameterizedTest(name = "{0} {1} {2}")
  @MethodSource("everyDescribe")
  void theCallersCancelAndQueryTimeoutReachTheCheckOfADescribe(
      Describe describe, Stop stop, Mode mode) throws Exception {
    String res =
        externalResource(plain, "describe-cancel-" + describe + "-" + stop + "-" + mode, 5);
    int block = nextBlock();
    FencingToken token = FencingToken.of(res, 20);

    // the new holder's first write, its advance of max_seen open: every check of res waits for it
    Connection handover = plain.getConnection();
    try (handover;
        FencingScope scope = Fencing.bind(token);
        Connection c = simple.getConnection()) {
      handover.setAutoCommit(false);
      FencingTestSupport.query(handover, "SELECT fencing.check_token(?, ?)", res, 10L);

      int pid = backendPid(c);
      if (mode.transaction()) {
        c.setTransactionIsolation(mode.level);
        c.setAutoCommit(false);
      }
      PreparedStatement ps = c.prepareStatement("INSERT INTO t (id, v) VALUES (?, 1)");
      ps.setInt(1, block);
      if (stop == Stop.QUERY_TIMEOUT) {
        ps.setQueryTimeout(1);
      }
      Future<Void> execution =
          threads.submit(
              () -> {
                try (FencingScope inner = Fencing.bind(token)) {
                  describe.call(ps);
                }
                return null;
              });
      if (stop == Stop.CANCEL) {
        await()
            .atMost(PATIENCE)
            .until(() -> HandoverWait.waitingForALock(plain, pid) || execution.isDone());
        assertThat(execution).as("the describe's check waits for the handover").isNotDone();
        ps.cancel();
      }

      Throwable thrown = outcome(execution, handover);
      assertCancelledByPostgres(thrown, describe + " " + stop + " " + mode);

      if (mode.transaction()) {
        assertThatThrownBy(() -> c.createStatement().executeQuery("SELECT 1"))
            .isInstanceOfSatisfying(
                SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("25P02"));
        c.rollback();
      } else {
        assertThat(c.getAutoCommit()).isTrue();
      }
      handover.rollback(); // the handover is over: max_seen 5 again
      ps.close();

      insert(c, block + 1); // the same token, the same connection: checked, written
      if (mode.transaction()) {
        c.commit();
      }
    }
    assertThat(present(plain, block)).as("the describe's write").isFalse();
    assertThat(present(plain, block + 1)).as("the write after it").isTrue();
    assertThat(maxSeen(plain, res)).isEqualTo(20);
    assertThat(queryLong(plain, "SELECT count(*) FROM fencing.rejection WHERE resource = ?", res))
        .as("a cancel is no refusal")
        .isZero();
  }
}
