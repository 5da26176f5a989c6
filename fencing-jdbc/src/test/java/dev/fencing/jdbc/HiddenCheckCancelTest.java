package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.PATIENCE;
import static dev.fencing.jdbc.FencingTestSupport.backendPid;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.FencingTestSupport.insert;
import static dev.fencing.jdbc.FencingTestSupport.nextBlock;
import static dev.fencing.jdbc.FencingTestSupport.present;
import static dev.fencing.jdbc.FencingTestSupport.queryLong;
import static dev.fencing.jdbc.HandoverWait.assertCancelledByPostgres;
import static dev.fencing.jdbc.HandoverWait.outcome;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.jdbc.HandoverWait.Mode;
import dev.fencing.jdbc.HandoverWait.Stop;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The caller's {@code Statement.cancel()} and {@code setQueryTimeout} reach the fencing check that
 * runs for its execution, also when that check goes in a round trip of its own, on a statement the
 * caller never sees (a multi-statement {@code Statement}, a {@code PreparedStatement} with a fetch
 * size, a {@code CallableStatement}, a prepared statement closed on completion), not only when it
 * rides in the statement's own round trip (carried). The check is made to wait as in a handover:
 * another session is advancing the external resource's {@code max_seen} in a transaction it keeps
 * open (the new holder's first write), so the check waits for its lock, seen in {@code pg_locks}. A
 * cancelled or timed-out check fails as PostgreSQL's cancel ({@code 57014}) long before that lock
 * is let go; nothing is written, nothing is recorded as a refusal, the caller's transaction is
 * aborted as PostgreSQL aborts it ({@code 25P02}) and the connection is usable after rollback.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class HiddenCheckCancelTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final AtomicInteger NAMES = new AtomicInteger();
  private static DataSource plain;
  private static FencedDataSource fenced;
  private static ExecutorService threads;

  @BeforeAll
  static void setUp() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = FencingTestSupport.plain(db, ds -> ds);
    FencingTestSupport.createTestSchema(plain);
    FencingTestSupport.createHiddenWrite(plain, "hc");
    fenced = FencedDataSource.wrap(plain);
    threads = Executors.newCachedThreadPool();
  }

  @AfterAll
  static void tearDown() {
    threads.shutdownNow();
  }

  /** A write whose execution needs the check, and whether that check is carried. */
  enum Shape {
    /** {@code <insert>; SELECT 1}: a {@code ;} inside, not carried. */
    MULTI_STATEMENT(false, null),
    /** A prepared write with a fetch size (cursor fetching): not carried. */
    FETCH_SIZE(false, ps -> ps.setFetchSize(10)),
    /** {@code prepareCall}: not carried. */
    CALLABLE(false, null),
    /** A prepared write closed on completion: not carried. */
    CLOSE_ON_COMPLETION(false, PreparedStatement::closeOnCompletion),
    /** A plain prepared write: the check rides in its round trip (the common case). */
    CARRIED_PREPARED(true, ps -> {}),
    /** A plain statement's write of one statement: carried. */
    CARRIED_STATEMENT(true, null);

    final boolean carried;
    // the prepared insert's setting, null for the shapes that are no prepared insert
    private final @Nullable PreparedSetting setting;

    Shape(boolean carried, @Nullable PreparedSetting setting) {
      this.carried = carried;
      this.setting = setting;
    }

    Statement prepare(Connection c, int id) throws SQLException {
      if (this == CALLABLE) {
        CallableStatement cs = c.prepareCall("CALL my_proc(?)");
        cs.setInt(1, id);
        return cs;
      }
      if (setting == null) {
        return c.createStatement();
      }
      PreparedStatement ps = c.prepareStatement("INSERT INTO t (id, v) VALUES (?, 1)");
      setting.apply(ps);
      ps.setInt(1, id);
      return ps;
    }

    void execute(Statement s, int id) throws SQLException {
      if (this == MULTI_STATEMENT) {
        s.execute("INSERT INTO t (id, v) VALUES (" + id + ", 1); SELECT 1");
      } else if (this == CARRIED_STATEMENT) {
        s.executeUpdate("INSERT INTO t (id, v) VALUES (" + id + ", 1)");
      } else if (s instanceof CallableStatement cs) {
        cs.execute();
      } else {
        ((PreparedStatement) s).executeUpdate();
      }
    }
  }

  /** A setting of the prepared insert before it runs. */
  @FunctionalInterface
  interface PreparedSetting {
    void apply(PreparedStatement ps) throws SQLException;
  }

  static Stream<Arguments> everyShape() {
    return Stream.of(Shape.values())
        .flatMap(
            shape ->
                Stream.of(Stop.values())
                    .flatMap(
                        stop ->
                            Stream.of(Mode.AUTOCOMMIT, Mode.READ_COMMITTED)
                                .map(mode -> Arguments.of(shape, stop, mode))));
  }

  @ParameterizedTest(name = "{0} {1} {2}")
  @MethodSource("everyShape")
  void theCallersCancelAndQueryTimeoutReachTheCheckWaitingForAHandover(
      Shape shape, Stop stop, Mode mode) throws Exception {
    stoppedWhileTheCheckWaits(shape, stop, mode);
  }

  /** A snapshot's check waits for the advance too; the cancel reaches it all the same. */
  @ParameterizedTest
  @EnumSource(
      value = Mode.class,
      names = {"REPEATABLE_READ", "SERIALIZABLE"})
  void underSnapshotIsolationTooTheCancelReachesTheHiddenCheck(Mode mode) throws Exception {
    stoppedWhileTheCheckWaits(Shape.MULTI_STATEMENT, Stop.CANCEL, mode);
    stoppedWhileTheCheckWaits(Shape.CALLABLE, Stop.QUERY_TIMEOUT, mode);
  }

  private void stoppedWhileTheCheckWaits(Shape shape, Stop stop, Mode mode) throws Exception {
    String res =
        externalResource(
            plain,
            "hidden-cancel-"
                + shape.name().toLowerCase(Locale.ROOT)
                + "-"
                + stop.name().toLowerCase(Locale.ROOT)
                + "-"
                + mode.name().toLowerCase(Locale.ROOT)
                + "-"
                + NAMES.incrementAndGet(),
            5);
    int block = nextBlock();
    HandoverWait.stoppedWhileTheCheckWaits(
        plain,
        fenced,
        threads,
        res,
        block,
        stop,
        mode,
        c -> shape.prepare(c, block),
        s -> shape.execute(s, block),
        shape.toString());
  }

  /**
   * A {@code COMMIT} in SQL after a write a read hid: its check (the commit's, "if written") runs
   * in a round trip of its own before the {@code COMMIT} and waits for the handover; the caller's
   * cancel reaches it, nothing is committed.
   */
  @ParameterizedTest
  @EnumSource(Stop.class)
  void theCheckOfACommitInSqlObeysTheCallersCancelAndTimeout(Stop stop) throws Exception {
    String res = externalResource(plain, "hidden-cancel-commit-" + NAMES.incrementAndGet(), 5);
    FencingToken token = FencingToken.of(res, 20);
    long before = queryLong(plain, "SELECT count(*) FROM hc_rows");
    try (Connection handover = HandoverWait.openHandover(plain, res);
        FencingScope scope = Fencing.bind(token);
        Connection c = fenced.getConnection()) {
      int pid = backendPid(c);
      c.setAutoCommit(false);
      Statement s = c.createStatement();
      s.executeQuery("SELECT r FROM hc_hidden").close(); // a write the text hides: not checked
      if (stop == Stop.QUERY_TIMEOUT) {
        s.setQueryTimeout(1);
      }
      Future<Void> execution =
          threads.submit(
              () -> {
                try (FencingScope inner = Fencing.bind(token)) {
                  s.execute("COMMIT");
                }
                return null;
              });
      if (stop == Stop.CANCEL) {
        await().atMost(PATIENCE).until(() -> waitingForALock(pid) || execution.isDone());
        assertThat(execution).as("the commit's check waits for the handover").isNotDone();
        s.cancel();
      }
      Throwable thrown = outcome(execution, handover);
      assertCancelledByPostgres(thrown, "COMMIT " + stop);
      c.rollback();
      handover.rollback();
      assertThat(queryLong(plain, "SELECT count(*) FROM hc_rows")).isEqualTo(before);
      int block = nextBlock();
      insert(c, block);
      c.commit();
      assertThat(present(plain, block)).isTrue();
    }
    assertThat(queryLong(plain, "SELECT count(*) FROM fencing.rejection WHERE resource = ?", res))
        .isZero();
  }

  /**
   * A cancel of a statement that is not executing, or that comes after its check and execution
   * ended, cancels nothing later: the next executions, hidden checks and all, run to their end.
   */
  @ParameterizedTest
  @EnumSource(
      value = Shape.class,
      names = {"MULTI_STATEMENT", "FETCH_SIZE", "CALLABLE"})
  void aCancelOutsideAnExecutionCancelsNothingLater(Shape shape) throws Exception {
    String res = externalResource(plain, "hidden-cancel-idle-" + NAMES.incrementAndGet(), 5);
    int block = nextBlock();
    try (FencingScope scope = Fencing.bind(FencingToken.of(res, 20));
        Connection c = fenced.getConnection()) {
      c.setAutoCommit(false);
      Statement s = shape.prepare(c, block);
      s.cancel(); // idle: nothing to cancel
      shape.execute(s, block);
      s.cancel(); // after the execution: nothing to cancel
      c.commit();
      Statement next = shape.prepare(c, block + 1);
      shape.execute(next, block + 1); // a new transaction: its check runs alone again
      c.commit();
    }
    assertThat(present(plain, block)).isTrue();
    assertThat(present(plain, block + 1)).isTrue();
  }

  private static boolean waitingForALock(int pid) throws SQLException {
    return HandoverWait.waitingForALock(plain, pid);
  }
}
