package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.query;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.testing.StreamingPair;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A {@code FencedDataSource} on a hot standby (a read replica), a token bound: every transaction
 * there is read-only. One primary and streaming standby for the class ({@link StreamingPair}); the
 * fence, its leases and the table {@code accounts} (protected by the resource {@code ledger}, so a
 * passed check leaves its marker) are made on the primary and replayed. Red before V45: the lease's
 * fast path failed in {@code mark_checked} with 25006 "cannot execute pg_current_xact_id() during
 * recovery", every other check with 25006 "cannot execute SELECT FOR SHARE".
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class HotStandbyTest {
  private static StreamingPair pair;
  private static DataSource primary;
  private static PGSimpleDataSource standby;
  private static LeaseClient leases;
  private static Lease current;
  private static FencingToken stale;

  @BeforeAll
  static void pair() throws SQLException {
    pair = StreamingPair.start();
    FailoverJdbcTest.install(pair.primary());
    primary = dataSource(pair.primary().port());
    standby = dataSource(pair.standby().port());
    leases = LeaseClient.builder(primary).holder("hot-standby").build();
    try (Lease first = leases.tryAcquire("ledger", Duration.ofMinutes(5)).orElseThrow()) {
      stale = first.token();
    }
    current = leases.tryAcquire("ledger", Duration.ofMinutes(5)).orElseThrow();
    try (Connection c = pair.primary().connect(FailoverJdbcTest.DATABASE)) {
      exec(c, "SELECT fencing.protect('accounts', 'ledger')");
      exec(c, "SELECT fencing.create_resource('zk-job', true)");
      exec(c, "SELECT fencing.check_token('zk-job', 5)");
      exec(
          c,
          "CREATE FUNCTION balance_of(p bigint) RETURNS bigint LANGUAGE sql STABLE"
              + " AS 'SELECT balance FROM accounts WHERE id = p'");
    }
    pair.awaitReplayed();
  }

  @AfterAll
  static void close() {
    try (StreamingPair p = pair;
        LeaseClient l = leases;
        Lease c = current) {
      // closed in reverse order: the lease, its client, the servers
    }
  }

  private static PGSimpleDataSource dataSource(int port) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setUrl(
        "jdbc:postgresql://127.0.0.1:"
            + port
            + "/"
            + FailoverJdbcTest.DATABASE
            + "?user="
            + FailoverJdbcTest.APP_USER);
    return ds;
  }

  /** The tokens a standby's reader may have bound: a lease's, an external issuer's. */
  enum Bound {
    LEASE,
    EXTERNAL;

    FencingScope bind() {
      return this == LEASE ? Fencing.bind(current) : Fencing.bind(FencingToken.of("zk-job", 5));
    }
  }

  /**
   * Reads the wrapper checks (a function call it does not know), a {@code WITH HOLD} cursor's
   * commit (the held-cursor test, V37), under READ COMMITTED and REPEATABLE READ, and a checked
   * read in autocommit.
   */
  @ParameterizedTest
  @EnumSource(Bound.class)
  void checkedReadsAndAHeldCursorCommitOnTheStandby(Bound bound) throws SQLException {
    FencedDataSource fenced = FencedDataSource.wrap(standby);
    try (FencingScope scope = bound.bind();
        Connection c = fenced.getConnection()) {
      assertThat(query(c, "SELECT balance_of(1)")).as("autocommit").isEqualTo(0L);
      c.setAutoCommit(false);
      for (Isolation isolation :
          new Isolation[] {Isolation.READ_COMMITTED, Isolation.REPEATABLE_READ}) {
        c.setTransactionIsolation(isolation.level);
        assertThat(query(c, "SELECT balance_of(1)")).as(isolation.name()).isEqualTo(0L);
        exec(c, "DECLARE held CURSOR WITH HOLD FOR SELECT balance FROM accounts");
        c.commit();
        assertThat(query(c, "FETCH held")).as("the cursor outlived the commit").isEqualTo(0L);
        exec(c, "CLOSE held");
        c.commit();
      }
    }
  }

  /**
   * {@code carry} (a plain client's token for the protected tables' triggers) keeps it with {@code
   * set_config}, which a standby allows: nothing written.
   */
  @Test
  void carryKeepsItsTokenOnTheStandby() throws SQLException {
    try (Connection c = standby.getConnection()) {
      c.setAutoCommit(false);
      exec(c, "SELECT fencing.carry('ledger', ?)", current.token().value());
      assertThat((String) query(c, "SELECT current_setting('fencing.tokens')"))
          .endsWith("|ledger " + current.token().value() + ",");
      c.commit();
    }
  }

  /** SERIALIZABLE is PostgreSQL's to refuse on a standby: its own error, not the fence's. */
  @Test
  void serializableIsRefusedByPostgreSQLPlainly() throws SQLException {
    FencedDataSource fenced = FencedDataSource.wrap(standby);
    try (FencingScope scope = Bound.LEASE.bind();
        Connection c = fenced.getConnection()) {
      c.setAutoCommit(false);
      c.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
      Throwable read = catchThrowable(() -> query(c, "SELECT balance_of(1)"));
      assertThat(read)
          .isInstanceOf(SQLException.class)
          .isNotInstanceOf(FencingRefusedException.class);
      assertThat(((SQLException) read).getSQLState()).isEqualTo("0A000");
      assertThat(read).hasMessageContaining("cannot use serializable mode in a hot standby");
      c.rollback();
    }
  }

  /** The current holder's write on the standby: PostgreSQL's read-only error for the write. */
  @ParameterizedTest
  @EnumSource(Bound.class)
  void aWriteGetsTheReadOnlyError(Bound bound) throws SQLException {
    FencedDataSource fenced = FencedDataSource.wrap(standby);
    try (FencingScope scope = bound.bind();
        Connection c = fenced.getConnection()) {
      c.setAutoCommit(false);
      Throwable write = catchThrowable(() -> exec(c, "UPDATE accounts SET balance = 1"));
      assertThat(write)
          .isInstanceOf(SQLException.class)
          .isNotInstanceOf(FencingRefusedException.class);
      assertThat(((SQLException) write).getSQLState()).isEqualTo("25006");
      assertThat(write).hasMessageContaining("cannot execute UPDATE in a read-only transaction");
      c.rollback();
    }
  }

  /**
   * A zombie's write on the standby: the fence's refusal. The standby cannot record it; the refusal
   * waits, untried there, and is recorded after the next commit on the primary through the same
   * {@code FencedDataSource}.
   */
  @Test
  void aZombiesWriteIsRefusedAndRecordedOnThePrimaryLater() throws SQLException {
    PGSimpleDataSource moving = dataSource(pair.standby().port());
    FencedDataSource fenced = FencedDataSource.wrap(moving);
    long before = recorded();
    try (FencingScope scope = Fencing.bind(stale);
        Connection c = fenced.getConnection()) {
      c.setAutoCommit(false);
      Throwable write = catchThrowable(() -> exec(c, "UPDATE accounts SET balance = 1"));
      assertThat(write).isInstanceOf(StaleFencingTokenException.class);
      assertThat(write.getSuppressed()).as("no record tried on the standby").isEmpty();
      c.rollback();
      assertThat(query(c, "SELECT balance FROM accounts WHERE id = 1"))
          .as("reads go on without it")
          .isEqualTo(0L);
      c.commit();
    }
    assertThat(recorded()).isEqualTo(before);
    moving.setPortNumbers(new int[] {pair.primary().port()});
    try (Connection c = fenced.getConnection()) {
      c.setAutoCommit(false);
      assertThat(query(c, "SELECT balance_of(1)")).isEqualTo(0L);
      c.commit();
    }
    assertThat(recorded()).as("recorded after a commit on the primary").isEqualTo(before + 1);
  }

  private static long recorded() throws SQLException {
    try (Connection c = pair.primary().connect(FailoverJdbcTest.DATABASE)) {
      Object count =
          query(
              c,
              "SELECT count(*) FROM fencing.rejection WHERE resource = 'ledger' AND token = ?",
              stale.value());
      return ((Number) count).longValue();
    }
  }
}
