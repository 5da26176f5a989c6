package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.FencingTestSupport.queryLong;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.PGConnection;
import org.postgresql.core.TransactionState;
import org.postgresql.largeobject.LargeObjectManager;

/**
 * A refusal in the caller's transaction (autocommit off) rolls the whole transaction back; the
 * connection then keeps it failed, as PostgreSQL keeps an aborted transaction, until {@code
 * rollback()}: statements, {@code commit()}, savepoints and {@code setAutoCommit(true)} throw
 * SQLState 25P02 with the refusal as cause. Without it, the NESTED pattern (write, savepoint,
 * refused write, failed rollback to the savepoint, write on, commit) committed the last write in a
 * new transaction and lost the first silently.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class RefusedTransactionTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;
  private static DataSource fenced;
  private static String resource;

  /** The forms of the refused write: each reaches the check on its own path. */
  enum Write {
    STATEMENT {
      @Override
      void run(Connection c, int id) throws SQLException {
        try (Statement s = c.createStatement()) {
          s.executeUpdate("INSERT INTO refused_tx VALUES (" + id + ")");
        }
      }
    },
    PREPARED {
      @Override
      void run(Connection c, int id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO refused_tx VALUES (?)")) {
          ps.setInt(1, id);
          ps.executeUpdate();
        }
      }
    },
    BATCH {
      @Override
      void run(Connection c, int id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO refused_tx VALUES (?)")) {
          ps.setInt(1, id);
          ps.addBatch();
          ps.setInt(1, id + 1_000_000);
          ps.addBatch();
          ps.executeBatch();
        }
      }
    };

    abstract void run(Connection c, int id) throws SQLException;
  }

  @BeforeAll
  static void setUp() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    fenced = FencedDataSource.wrap(plain);
    resource = externalResource(plain, "refused-tx", 9);
    exec(plain, "CREATE TABLE refused_tx (id int PRIMARY KEY)");
  }

  private static long rows(int id) throws SQLException {
    return queryLong(
        plain, "SELECT count(*) FROM refused_tx WHERE id IN (?, ?)", id, id + 1_000_000);
  }

  /** {@code e} is the failed transaction's 25P02, its cause the stale token's refusal. */
  private static void assertFailedTransaction(Throwable e) {
    assertThat(e).isInstanceOf(SQLException.class);
    assertThat(((SQLException) e).getSQLState()).isEqualTo("25P02");
    assertThat(e.getCause()).isInstanceOf(StaleFencingTokenException.class);
    assertThat(e).hasMessageContaining("fencing check refused");
    assertThat(FencingExceptions.find(e)).containsSame((FencingRefusedException) e.getCause());
  }

  @ParameterizedTest
  @EnumSource(Write.class)
  void afterARefusalTheTransactionStaysFailedUntilRollback(Write write) throws SQLException {
    int id = 100 + write.ordinal() * 10;
    try (Connection c = fenced.getConnection()) {
      c.setAutoCommit(false);
      exec(c, "INSERT INTO refused_tx VALUES (?)", id); // no token bound: unfenced table
      Savepoint savepoint = c.setSavepoint();
      try (FencingScope stale = Fencing.bind(FencingToken.of(resource, 8))) {
        assertThat(catchThrowable(() -> write.run(c, id + 2)))
            .isInstanceOf(StaleFencingTokenException.class);
        assertFailedTransaction(catchThrowable(() -> write.run(c, id + 3)));
        assertFailedTransaction(catchThrowable(() -> exec(c, "SELECT 1")));
        assertFailedTransaction(catchThrowable(() -> c.rollback(savepoint)));
        assertFailedTransaction(catchThrowable(c::setSavepoint));
        assertFailedTransaction(catchThrowable(() -> c.setSavepoint("again")));
        assertFailedTransaction(catchThrowable(() -> c.releaseSavepoint(savepoint)));
        assertFailedTransaction(catchThrowable(() -> c.setAutoCommit(true)));
        assertFailedTransaction(catchThrowable(c::commit));
      }
      assertFailedTransaction(catchThrowable(() -> write.run(c, id + 4))); // no token either
      assertFailedTransaction(catchThrowable(c::commit));
      c.rollback();
      // usable again: a write with a valid token commits
      try (FencingScope valid = Fencing.bind(FencingToken.of(resource, 9))) {
        write.run(c, id + 5);
        c.commit();
      }
      assertThat(c.getAutoCommit()).isFalse();
    }
    assertThat(rows(id)).isZero();
    assertThat(rows(id + 2)).isZero();
    assertThat(rows(id + 4)).isZero();
    assertThat(rows(id + 5)).isPositive();
  }

  /**
   * Spring's {@code Propagation.NESTED} in plain JDBC: W1, a savepoint, the inner write refused,
   * the rollback to the savepoint attempted (and caught), W3, commit. Neither W1 nor W3 commits,
   * and the rollback to the savepoint carries the refusal.
   */
  @ParameterizedTest
  @EnumSource(Write.class)
  void theNestedPatternCommitsNeitherTheWriteBeforeNorTheWriteAfter(Write write)
      throws SQLException {
    int id = 200 + write.ordinal() * 10;
    try (Connection c = fenced.getConnection()) {
      c.setAutoCommit(false);
      exec(c, "INSERT INTO refused_tx VALUES (?)", id); // W1
      Savepoint nested = c.setSavepoint();
      try (FencingScope stale = Fencing.bind(FencingToken.of(resource, 8))) {
        assertThat(catchThrowable(() -> write.run(c, id + 2)))
            .isInstanceOf(StaleFencingTokenException.class);
      }
      Throwable toSavepoint = catchThrowable(() -> c.rollback(nested));
      assertFailedTransaction(toSavepoint); // the application catches it and carries on
      assertFailedTransaction(catchThrowable(() -> write.run(c, id + 4))); // W3
      assertFailedTransaction(catchThrowable(c::commit));
      c.rollback();
    }
    assertThat(rows(id)).isZero();
    assertThat(rows(id + 4)).isZero();
  }

  /** Autocommit: each execution is its own transaction; a refusal leaves nothing failed. */
  @ParameterizedTest
  @EnumSource(Write.class)
  void inAutocommitTheNextExecutionIsNotAffected(Write write) throws SQLException {
    int id = 300 + write.ordinal() * 10;
    try (Connection c = fenced.getConnection()) {
      try (FencingScope stale = Fencing.bind(FencingToken.of(resource, 8))) {
        assertThat(catchThrowable(() -> write.run(c, id)))
            .isInstanceOf(StaleFencingTokenException.class);
      }
      write.run(c, id + 2);
      c.setAutoCommit(false);
      c.setAutoCommit(true);
    }
    assertThat(rows(id)).isZero();
    assertThat(rows(id + 2)).isPositive();
  }

  /**
   * A refused transaction ended by a SQL string instead of {@code Connection.rollback()}: each
   * string that rolls back the whole transaction in PostgreSQL (also in an aborted one) ends the
   * refused state, as {@code rollback()} does. Before, the string itself was refused (25P02), so a
   * caller that ends transactions with SQL text (a framework, a script runner) saw every later
   * statement refused: a false refusal.
   */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "ROLLBACK",
        "rollback work",
        "ROLLBACK TRANSACTION",
        "ABORT",
        "abort transaction",
        "ROLLBACK AND NO CHAIN",
        "/* ends it */ rollback; ",
        "ROLLBACK AND CHAIN",
        "ABORT WORK AND CHAIN",
        "PREPARED:ROLLBACK"
      })
  void aRollbackSentAsSqlEndsTheRefusedTransaction(String text) throws SQLException {
    int id = 400 + nextRow();
    boolean prepared = text.startsWith("PREPARED:");
    String sql = prepared ? text.substring("PREPARED:".length()) : text;
    boolean chain = sql.toLowerCase(java.util.Locale.ROOT).contains("and chain");
    try (Connection c = fenced.getConnection()) {
      c.setAutoCommit(false);
      exec(c, "INSERT INTO refused_tx VALUES (?)", id); // no token bound: unfenced table
      try (FencingScope stale = Fencing.bind(FencingToken.of(resource, 8))) {
        assertThat(catchThrowable(() -> Write.STATEMENT.run(c, id + 2)))
            .isInstanceOf(StaleFencingTokenException.class);
      }
      if (prepared) {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
          ps.execute();
        }
      } else {
        try (Statement s = c.createStatement()) {
          s.execute(sql);
        }
      }
      if (chain) {
        assertThat(c.unwrap(org.postgresql.core.BaseConnection.class).getTransactionState())
            .as("AND CHAIN opens the next transaction at once")
            .isEqualTo(TransactionState.OPEN);
      }
      // usable again: a write with a valid token commits
      try (FencingScope valid = Fencing.bind(FencingToken.of(resource, 9))) {
        Write.STATEMENT.run(c, id + 4);
        c.commit();
      }
      assertThat(c.getAutoCommit()).isFalse();
    }
    assertThat(rows(id)).isZero();
    assertThat(rows(id + 2)).isZero();
    assertThat(rows(id + 4)).isPositive();
  }

  /** With the refused token still bound, the ROLLBACK string ends the transaction all the same. */
  @ParameterizedTest
  @ValueSource(strings = {"ROLLBACK", "PREPARED:ROLLBACK", "ABORT AND CHAIN"})
  void aRollbackSentAsSqlWithTheRefusedTokenStillBoundEndsIt(String text) throws SQLException {
    int id = 400 + nextRow();
    boolean prepared = text.startsWith("PREPARED:");
    String sql = prepared ? text.substring("PREPARED:".length()) : text;
    try (Connection c = fenced.getConnection()) {
      c.setAutoCommit(false);
      exec(c, "INSERT INTO refused_tx VALUES (?)", id);
      try (FencingScope stale = Fencing.bind(FencingToken.of(resource, 8))) {
        assertThat(catchThrowable(() -> Write.STATEMENT.run(c, id + 2)))
            .isInstanceOf(StaleFencingTokenException.class);
        if (prepared) {
          try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.execute();
          }
        } else {
          exec(c, sql);
        }
        // still stale: the next write is refused by the check again, not by the failed state
        assertThat(catchThrowable(() -> Write.STATEMENT.run(c, id + 3)))
            .isInstanceOf(StaleFencingTokenException.class);
        c.rollback();
      }
      try (FencingScope valid = Fencing.bind(FencingToken.of(resource, 9))) {
        Write.STATEMENT.run(c, id + 4);
        c.commit();
      }
    }
    assertThat(rows(id)).isZero();
    assertThat(rows(id + 3)).isZero();
    assertThat(rows(id + 4)).isPositive();
  }

  /**
   * Strings that do not roll the whole transaction back leave it refused, as {@code commit()},
   * {@code rollback(Savepoint)} and {@code releaseSavepoint} do: {@code COMMIT} / {@code END}
   * (PostgreSQL would end an aborted transaction with a silent ROLLBACK; here it is refused like
   * {@code commit()}, so the caller learns its writes are gone, and rolls back), {@code ROLLBACK TO
   * SAVEPOINT} (the refusal rolled back the whole transaction, the savepoint with it: carrying on
   * from it would commit what follows without what preceded it, the NESTED pattern), {@code
   * ROLLBACK PREPARED} (another, prepared transaction), and a string holding more than the
   * rollback.
   */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "COMMIT",
        "END",
        "COMMIT AND CHAIN",
        "ROLLBACK TO SAVEPOINT nested",
        "rollback transaction to nested",
        "ROLLBACK PREPARED 'none'",
        "PREPARE TRANSACTION 'none'",
        "RELEASE SAVEPOINT nested",
        "SELECT 1; ROLLBACK",
        "ROLLBACK; SELECT 1",
        "ROLLBACK; ROLLBACK"
      })
  void otherEndsLeaveTheRefusedTransactionFailed(String sql) throws SQLException {
    int id = 400 + nextRow();
    try (Connection c = fenced.getConnection()) {
      c.setAutoCommit(false);
      exec(c, "INSERT INTO refused_tx VALUES (?)", id);
      exec(c, "SAVEPOINT nested");
      try (FencingScope stale = Fencing.bind(FencingToken.of(resource, 8))) {
        assertThat(catchThrowable(() -> Write.STATEMENT.run(c, id + 2)))
            .isInstanceOf(StaleFencingTokenException.class);
      }
      assertFailedTransaction(catchThrowable(() -> exec(c, sql)));
      assertFailedTransaction(catchThrowable(() -> Write.STATEMENT.run(c, id + 4)));
      assertFailedTransaction(catchThrowable(c::commit));
      c.rollback();
    }
    assertThat(rows(id)).isZero();
    assertThat(rows(id + 4)).isZero();
  }

  private static final java.util.concurrent.atomic.AtomicInteger ROWS =
      new java.util.concurrent.atomic.AtomicInteger();

  private static int nextRow() {
    return ROWS.getAndIncrement() * 10;
  }

  private static long largeObjects() throws SQLException {
    return queryLong(plain, "SELECT count(*) FROM pg_catalog.pg_largeobject_metadata");
  }

  /**
   * The large object and fastpath APIs write through the driver's connection, not a statement: in
   * the refused transaction they are refused too. Before, both were handed out, and the large
   * object created in the transaction the refusal had left behind.
   */
  @org.junit.jupiter.api.Test
  void afterARefusalTheLargeObjectAndFastpathApisAreRefusedToo() throws SQLException {
    long before = largeObjects();
    try (Connection c = fenced.getConnection()) {
      c.setAutoCommit(false);
      try (FencingScope stale = Fencing.bind(FencingToken.of(resource, 8))) {
        assertThat(catchThrowable(() -> Write.STATEMENT.run(c, 900)))
            .isInstanceOf(StaleFencingTokenException.class);
        PGConnection pg = c.unwrap(PGConnection.class);
        assertFailedTransaction(catchThrowable(() -> pg.getLargeObjectAPI().createLO()));
        assertFailedTransaction(catchThrowable(pg::getFastpathAPI));
      }
      c.rollback();
    }
    assertThat(largeObjects()).isEqualTo(before);
  }

  /**
   * A write the wrapper does not see (a large object, through the driver's API) in a transaction
   * with a stale token bound, and the connection closed without commit(): HikariCP under the fence
   * resets autocommit on the way back to the pool, which in pgjdbc commits, unchecked. Closing
   * rolls back what is left open, as a pool does for its own statements' writes.
   */
  @org.junit.jupiter.api.Test
  void closingWithATransactionOpenCommitsNothingUnchecked() throws SQLException {
    long before = largeObjects();
    try (FencingTestSupport.Pool pool =
        FencingTestSupport.Wiring.FENCED_OVER_HIKARI.open(plain, 1)) {
      LargeObjectManager early;
      try (Connection c = pool.dataSource().getConnection();
          FencingScope stale = Fencing.bind(FencingToken.of(resource, 8))) {
        c.setAutoCommit(false);
        c.unwrap(PGConnection.class).getLargeObjectAPI().createLO();
      }
      assertThat(largeObjects()).as("closed with a stale token's write open").isEqualTo(before);

      // the API taken before a refusal, used after it, then the connection closed
      try (Connection c = pool.dataSource().getConnection();
          FencingScope stale = Fencing.bind(FencingToken.of(resource, 8))) {
        c.setAutoCommit(false);
        early = c.unwrap(PGConnection.class).getLargeObjectAPI();
        assertThat(catchThrowable(() -> Write.STATEMENT.run(c, 901)))
            .isInstanceOf(StaleFencingTokenException.class);
        early.createLO();
      }
      assertThat(largeObjects()).as("closed in the refused transaction").isEqualTo(before);
    }
  }
}
