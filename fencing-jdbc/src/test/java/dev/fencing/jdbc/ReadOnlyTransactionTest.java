package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.FencingTestSupport.query;
import static dev.fencing.jdbc.FencingTestSupport.rejections;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A {@code FencedDataSource} connection made read-only with {@code Connection.setReadOnly(true)}
 * (pgjdbc begins its transactions {@code READ ONLY}, as Spring's {@code Transactional(readOnly =
 * true)} asks), a token bound. The check's paths past the lease fast path (an external token, a
 * snapshot per transaction, a stale token) locked the resource row, which PostgreSQL refuses in a
 * read-only transaction: a checked read failed with 25006 "cannot execute SELECT FOR SHARE" (V45
 * fixed it). The standby's side is {@link HotStandbyTest}.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class ReadOnlyTransactionTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final AtomicInteger RESOURCES = new AtomicInteger();
  private static DataSource plain;
  private static FencedDataSource fenced;

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    fenced = FencedDataSource.wrap(plain);
    exec(plain, "CREATE TABLE ro_t (id int PRIMARY KEY, v int NOT NULL)");
    exec(plain, "INSERT INTO ro_t VALUES (1, 0)");
    // a read the wrapper cannot tell from a write: a call of a function it does not know
    exec(plain, "CREATE FUNCTION ro_value() RETURNS int LANGUAGE sql STABLE AS 'SELECT 7'");
  }

  private static String external() throws SQLException {
    return externalResource(plain, "ro-ext-" + RESOURCES.incrementAndGet(), 5);
  }

  /**
   * A read the wrapper checks, and a {@code WITH HOLD} cursor whose commit the check runs for
   * (V37), in a read-only transaction of each isolation, an external token bound (its check locks
   * the row under every isolation). Red before V45: 25006 "cannot execute SELECT FOR SHARE in a
   * read-only transaction".
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void checkedReadsAndAHeldCursorCommitInAReadOnlyTransaction(Isolation isolation)
      throws SQLException {
    String resource = external();
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 5));
        Connection c = fenced.getConnection()) {
      c.setReadOnly(true);
      c.setAutoCommit(false);
      c.setTransactionIsolation(isolation.level);
      assertThat(query(c, "SELECT ro_value()")).isEqualTo(7);
      exec(c, "DECLARE ro_held CURSOR WITH HOLD FOR SELECT v FROM ro_t");
      c.commit();
      assertThat(query(c, "FETCH ro_held")).as("the cursor outlived the commit").isEqualTo(0);
      exec(c, "CLOSE ro_held");
      c.commit();
    }
    assertThat(FencingTestSupport.maxSeen(plain, resource)).as("nothing advanced").isEqualTo(5);
  }

  /**
   * A lease's token under REPEATABLE READ: its check leaves the fast path. Red before V45: 25006
   * "cannot execute SELECT FOR SHARE in a read-only transaction".
   */
  @Test
  void aLeasesTokenUnderRepeatableReadChecksAReadOnlyRead() throws SQLException {
    try (LeaseClient client = LeaseClient.builder(plain).holder("ro-rr").build();
        Lease lease = client.tryAcquire("ro-rr", Duration.ofMinutes(1)).orElseThrow();
        FencingScope scope = Fencing.bind(lease);
        Connection c = fenced.getConnection()) {
      c.setReadOnly(true);
      c.setAutoCommit(false);
      c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      assertThat(query(c, "SELECT ro_value()")).isEqualTo(7);
      c.commit();
    }
  }

  /**
   * The current holder's write in a read-only transaction gets PostgreSQL's own error for it, under
   * each isolation. Red before V45 (external token): 25006 naming SELECT FOR SHARE, a statement the
   * caller never sent.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void aWriteFailsWithTheReadOnlyErrorForTheWrite(Isolation isolation) throws SQLException {
    String resource = external();
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 5));
        Connection c = fenced.getConnection()) {
      c.setReadOnly(true);
      c.setAutoCommit(false);
      c.setTransactionIsolation(isolation.level);
      Throwable write = catchThrowable(() -> exec(c, "UPDATE ro_t SET v = v + 1 WHERE id = 1"));
      assertThat(write)
          .isInstanceOf(SQLException.class)
          .isNotInstanceOf(FencingRefusedException.class);
      assertThat(((SQLException) write).getSQLState()).isEqualTo("25006");
      assertThat(write).hasMessageContaining("cannot execute UPDATE in a read-only transaction");
      c.rollback();
    }
    assertThat(query(plain, "SELECT v FROM ro_t WHERE id = 1")).isEqualTo(0);
  }

  /**
   * A zombie's write in a read-only transaction: the fence's refusal, recorded (in a read-write
   * transaction of its own: the connection's read-only setting is the application's, not the
   * record's). Red before V45: 25006 "cannot execute SELECT FOR SHARE"; before the recorder's fix
   * the record failed with 25006 and waited for a later commit.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void aZombiesWriteIsRefusedAndRecorded(Isolation isolation) throws SQLException {
    String resource = "ro-zombie-" + RESOURCES.incrementAndGet();
    FencingToken stale;
    try (LeaseClient client = LeaseClient.builder(plain).holder("ro-zombie").build()) {
      try (Lease first = client.tryAcquire(resource, Duration.ofMinutes(1)).orElseThrow()) {
        stale = first.token();
      }
      client.tryAcquire(resource, Duration.ofMinutes(1)).orElseThrow();
    }
    long before = rejections(plain, resource, "stale_token");
    try (FencingScope scope = Fencing.bind(stale);
        Connection c = fenced.getConnection()) {
      c.setReadOnly(true);
      c.setAutoCommit(false);
      c.setTransactionIsolation(isolation.level);
      Throwable write = catchThrowable(() -> exec(c, "UPDATE ro_t SET v = v + 1 WHERE id = 1"));
      assertThat(write).isInstanceOf(StaleFencingTokenException.class);
      assertThat(write.getSuppressed()).as("the record did not fail").isEmpty();
      assertThat(c.isReadOnly()).as("the application's setting, kept").isTrue();
      c.rollback();
    }
    assertThat(rejections(plain, resource, "stale_token")).isEqualTo(before + 1);
  }

  /**
   * pgjdbc's {@code readOnlyMode=always}: the session is read-only, autocommit statements too. A
   * checked read in autocommit works; a zombie's write is refused and recorded, and the session is
   * read-only again after the record.
   */
  @Test
  void readOnlyModeAlwaysInAutocommit() throws SQLException {
    String resource = external();
    FencedDataSource always =
        FencedDataSource.wrap(
            FencingTestSupport.plain(
                db,
                ds -> {
                  ds.setReadOnlyMode("always");
                  return ds;
                }));
    long before = rejections(plain, resource, "stale_token");
    try (Connection c = always.getConnection()) {
      c.setReadOnly(true);
      try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 5))) {
        assertThat(query(c, "SELECT ro_value()")).isEqualTo(7);
        Throwable write = catchThrowable(() -> exec(c, "UPDATE ro_t SET v = v + 1 WHERE id = 1"));
        assertThat(((SQLException) write).getSQLState()).isEqualTo("25006");
        assertThat(write).hasMessageContaining("cannot execute UPDATE in a read-only transaction");
      }
      try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 4))) {
        Throwable write = catchThrowable(() -> exec(c, "UPDATE ro_t SET v = v + 1 WHERE id = 1"));
        assertThat(write).isInstanceOf(StaleFencingTokenException.class);
        assertThat(write.getSuppressed()).as("the record did not fail").isEmpty();
      }
      assertThat(query(c, "SHOW default_transaction_read_only")).isEqualTo("on");
    }
    assertThat(rejections(plain, resource, "stale_token")).isEqualTo(before + 1);
    assertThat(query(plain, "SELECT v FROM ro_t WHERE id = 1")).isEqualTo(0);
  }
}
