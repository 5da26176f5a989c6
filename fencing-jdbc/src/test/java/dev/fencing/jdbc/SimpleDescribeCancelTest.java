package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.FencingTestSupport.nextBlock;

import dev.fencing.jdbc.HandoverWait.Mode;
import dev.fencing.jdbc.HandoverWait.Stop;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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
    HandoverWait.stoppedWhileTheCheckWaits(
        plain,
        simple,
        threads,
        res,
        block,
        stop,
        mode,
        c -> {
          PreparedStatement ps = c.prepareStatement("INSERT INTO t (id, v) VALUES (?, 1)");
          ps.setInt(1, block);
          return ps;
        },
        s -> describe.call((PreparedStatement) s),
        describe.toString());
  }
}
