package dev.fencing.jdbc;

import static dev.fencing.jdbc.TransactionEndFixture.CURRENT;
import static dev.fencing.jdbc.TransactionEndFixture.IDS;
import static dev.fencing.jdbc.TransactionEndFixture.NOTHING;
import static dev.fencing.jdbc.TransactionEndFixture.STALE;
import static dev.fencing.jdbc.TransactionEndFixture.assertRefused;
import static dev.fencing.jdbc.TransactionEndFixture.insert;
import static dev.fencing.jdbc.TransactionEndFixture.query1;
import static dev.fencing.jdbc.TransactionEndFixture.run;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * How a fenced transaction ends through a {@link FencedDataSource} connection when it is a block
 * opened in SQL in autocommit, ended by a ROLLBACK string, or left open when the connection is
 * closed or aborted (under both pool wirings): by a zombie whose token is stale (nothing it wrote
 * may commit, not even a write the text hides) and by the current holder. The transaction the
 * caller opened and its JDBC ends: {@link TransactionEndTest}.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class TransactionBlockEndTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static TransactionEndFixture f;

  @BeforeAll
  static void setUp() throws SQLException {
    f = new TransactionEndFixture(db);
  }

  /** How a transaction block is opened by SQL while the connection is in autocommit. */
  enum Begin {
    BEGIN("BEGIN"),
    START("START TRANSACTION"),
    BEGIN_RR("BEGIN ISOLATION LEVEL REPEATABLE READ");

    final String sql;

    Begin(String sql) {
      this.sql = sql;
    }
  }

  /**
   * BEGIN sent as SQL in autocommit opens a transaction block; the caller ends it with COMMIT or
   * ROLLBACK as SQL. The zombie's hidden write commits with neither; the holder's ROLLBACK undoes
   * its writes, and its COMMIT commits them.
   */
  @ParameterizedTest
  @EnumSource(Begin.class)
  void aTransactionBlockOpenedBySqlInAutocommitEndsAsTheCallerSays(Begin begin)
      throws SQLException {
    f.zombie(
        NOTHING,
        c -> {
          run(c, begin.sql);
          Throwable e = catchThrowable(() -> run(c, "SELECT * FROM te_hidden"));
          if (e == null) {
            e = catchThrowable(() -> run(c, "COMMIT"));
          }
          assertRefused(e);
        },
        c -> run(c, "ROLLBACK"));

    int rolledBack = IDS.getAndIncrement();
    int committed = IDS.getAndIncrement();
    f.holder(
        c -> {
          run(c, begin.sql);
          insert(c, rolledBack);
          run(c, "ROLLBACK");
          run(c, begin.sql);
          insert(c, committed);
          run(c, "COMMIT");
        });
    assertThat(f.present(rolledBack)).as("the holder rolled it back").isFalse();
    assertThat(f.present(committed)).isTrue();
  }

  /**
   * A transaction block opened by SQL in autocommit, a hidden write in it with a stale token, and
   * the connection closed with the block open: closing rolls it back. A pool over the fence does
   * not see the block and handed the connection on with it open: the next borrower's COMMIT
   * committed it, checked for the next borrower's token only. (A pool under the fence never closes
   * the fenced connection between borrowers: the next borrower's COMMIT checks the stale token the
   * block was written with, and is refused.)
   */
  @ParameterizedTest
  @EnumSource(FencingTestSupport.Wiring.class)
  void aTransactionBlockLeftOpenInAutocommitCommitsNothingOnClose(FencingTestSupport.Wiring wiring)
      throws SQLException {
    long before = f.hidden();
    int holderRow = IDS.getAndIncrement();
    try (FencingTestSupport.Pool pool = wiring.open(f.plain, 1)) {
      try (Connection c = pool.dataSource().getConnection();
          FencingScope zombie = f.bind(STALE)) {
        run(c, "BEGIN");
        run(c, "SELECT * FROM te_hidden"); // the block is left open
      }
      try (Connection c = pool.dataSource().getConnection();
          FencingScope holder = f.bind(CURRENT)) {
        run(c, "BEGIN");
        insert(c, holderRow);
        Throwable e = catchThrowable(() -> run(c, "COMMIT"));
        if (wiring == FencingTestSupport.Wiring.FENCED_OVER_HIKARI) {
          assertThat(e).isNull();
        } else if (e == null) {
          assertThat(f.present(holderRow)).isTrue();
        } else {
          assertRefused(e);
          run(c, "ROLLBACK");
        }
      }
    }
    assertThat(f.hidden()).as("the zombie's block, left open").isEqualTo(before);
    if (wiring == FencingTestSupport.Wiring.FENCED_OVER_HIKARI) {
      assertThat(f.present(holderRow)).isTrue();
    }
  }

  /**
   * ROLLBACK sent as SQL after a stale token's hidden write commits nothing, so it is not checked:
   * it was refused as stale (the rollback reported as failed), and in a block opened in SQL, which
   * the refusal aborted, the ROLLBACK never reached the server to end it.
   */
  @ParameterizedTest
  @ValueSource(strings = {"ROLLBACK", "abort work", "ROLLBACK AND CHAIN"})
  void aRollbackStringIsNotRefused(String rollback) throws SQLException {
    long before = f.hidden();
    try (Connection c = f.fenced.getConnection();
        FencingScope zombie = f.bind(STALE)) {
      c.setAutoCommit(false);
      run(c, "SELECT * FROM te_hidden");
      run(c, rollback);
      c.rollback();
    }
    try (Connection c = f.fenced.getConnection();
        FencingScope zombie = f.bind(STALE)) {
      run(c, "BEGIN");
      run(c, "SELECT * FROM te_hidden");
      assertRefused(catchThrowable(() -> run(c, "COMMIT AND CHAIN")));
      run(c, rollback);
      if (rollback.endsWith("CHAIN")) {
        run(c, "ROLLBACK");
      }
      assertThat(query1(c)).isOne();
    }
    assertThat(f.hidden()).isEqualTo(before);
  }

  /**
   * abort(executor) with a stale token's hidden write open: the server rolls it back, and the pool
   * hands out a working connection next.
   */
  @ParameterizedTest
  @EnumSource(FencingTestSupport.Wiring.class)
  void abortCommitsNothing(FencingTestSupport.Wiring wiring) throws SQLException {
    long before = f.hidden();
    try (FencingTestSupport.Pool pool = wiring.open(f.plain, 1)) {
      Connection c = pool.dataSource().getConnection();
      try (FencingScope zombie = f.bind(STALE)) {
        c.setAutoCommit(false);
        run(c, "SELECT * FROM te_hidden");
        c.abort(Runnable::run);
      } finally {
        // closing an aborted connection may throw, as it does without the fence (HikariCP rolls
        // back what it believes open): not what is tested here
        catchThrowable(c::close);
      }
      try (Connection next = pool.dataSource().getConnection();
          FencingScope holder = f.bind(CURRENT)) {
        assertThat(query1(next)).isOne();
      }
    }
    assertThat(f.hidden()).isEqualTo(before);
  }
}
