package dev.fencing.jdbc;

import static dev.fencing.jdbc.TransactionEndFixture.CURRENT;
import static dev.fencing.jdbc.TransactionEndFixture.IDS;
import static dev.fencing.jdbc.TransactionEndFixture.IN_TRANSACTION;
import static dev.fencing.jdbc.TransactionEndFixture.STALE;
import static dev.fencing.jdbc.TransactionEndFixture.assertRefused;
import static dev.fencing.jdbc.TransactionEndFixture.insert;
import static dev.fencing.jdbc.TransactionEndFixture.run;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * How a fenced transaction the caller opened ends through a {@link FencedDataSource} connection:
 * every way the JDBC API or a SQL string ends it (or keeps it open), savepoints included, by a
 * zombie whose token is stale (nothing it wrote may commit, not even a write the text hides, {@code
 * te_hidden}) and by the current holder (no false refusal, nothing committed that the holder rolled
 * back). Blocks opened in SQL in autocommit, ROLLBACK strings, close and abort: {@link
 * TransactionBlockEndTest}.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class TransactionEndTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static TransactionEndFixture f;

  @BeforeAll
  static void setUp() throws SQLException {
    f = new TransactionEndFixture(db);
  }

  /** setAutoCommit(true) commits the open transaction: with the commit's check. */
  @Test
  void switchingAutocommitOnChecksTheCommit() throws SQLException {
    f.zombie(
        c -> {
          run(c, "SELECT * FROM te_hidden");
          assertRefused(catchThrowable(() -> c.setAutoCommit(true)));
        });

    int id = IDS.getAndIncrement();
    f.holder(
        c -> {
          c.setAutoCommit(false);
          insert(c, id);
          c.setAutoCommit(true);
        });
    assertThat(f.present(id)).isTrue();
  }

  /**
   * A string refused before anything ran (0A000: COMMIT must be a string of its own) leaves the
   * transaction open: what it wrote is still checked when it ends, though the token is no longer
   * bound.
   */
  @Test
  void aStringRefusedBeforeItRanKeepsTheTransactionsChecks() throws SQLException {
    f.zombie(
        IN_TRANSACTION,
        c -> {
          run(c, "SELECT * FROM te_hidden");
          SQLException e = (SQLException) catchThrowable(() -> run(c, "SELECT 1; COMMIT"));
          assertThat(e.getSQLState()).isEqualTo("0A000");
        },
        c -> assertRefused(catchThrowable(c::commit)));
  }

  /** SQL savepoints, released or rolled back to, and COMMIT AND CHAIN: the commit is checked. */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "RELEASE SAVEPOINT x",
        "RELEASE x",
        "ROLLBACK TO SAVEPOINT x",
      })
  void aSqlSavepointDoesNotEscapeTheCommitsCheck(String end) throws SQLException {
    f.zombie(
        c -> {
          run(c, "SELECT * FROM te_hidden");
          run(c, "SAVEPOINT x");
          run(c, "SELECT * FROM te_hidden");
          run(c, end);
          assertRefused(catchThrowable(c::commit));
        });

    int id = IDS.getAndIncrement();
    f.holder(
        c -> {
          c.setAutoCommit(false);
          run(c, "SAVEPOINT x");
          insert(c, id);
          run(c, end);
          insert(c, id + 10_000);
          c.commit();
        });
    assertThat(f.present(id)).isEqualTo(!end.startsWith("ROLLBACK"));
    assertThat(f.present(id + 10_000)).isTrue();
  }

  /** JDBC savepoints: rolled back to after the checked write, released; the commit is checked. */
  @Test
  void aJdbcSavepointDoesNotEscapeTheCommitsCheck() throws SQLException {
    f.zombie(
        c -> {
          run(c, "SELECT * FROM te_hidden");
          Savepoint first = c.setSavepoint();
          run(c, "SELECT * FROM te_hidden");
          c.rollback(first);
          Savepoint second = c.setSavepoint("second");
          run(c, "SELECT * FROM te_hidden");
          c.releaseSavepoint(second);
          assertRefused(catchThrowable(c::commit));
        });

    int id = IDS.getAndIncrement();
    f.holder(
        c -> {
          c.setAutoCommit(false);
          Savepoint first = c.setSavepoint();
          insert(c, id);
          c.rollback(first);
          insert(c, id + 10_000);
          Savepoint second = c.setSavepoint();
          insert(c, id + 20_000);
          c.releaseSavepoint(second);
          c.commit();
        });
    assertThat(f.present(id)).isFalse();
    assertThat(f.present(id + 10_000)).isTrue();
    assertThat(f.present(id + 20_000)).isTrue();
  }

  /** COMMIT AND CHAIN: checked; the chained transaction is checked again at its own end. */
  @Test
  void commitAndChainIsCheckedAndSoIsTheChainedTransaction() throws SQLException {
    long before = f.hidden();
    f.zombie(
        IN_TRANSACTION,
        c -> {
          run(c, "SELECT * FROM te_hidden");
          assertRefused(catchThrowable(() -> run(c, "COMMIT AND CHAIN")));
        },
        Connection::rollback);

    int id = IDS.getAndIncrement();
    try (Connection c = f.fenced.getConnection()) {
      c.setAutoCommit(false);
      try (FencingScope holder = f.bind(CURRENT)) {
        insert(c, id);
        run(c, "COMMIT AND CHAIN");
      }
      // the holder's lease is handed over while the chained transaction is open
      try (FencingScope zombie = f.bind(STALE)) {
        run(c, "SELECT * FROM te_hidden");
        assertRefused(catchThrowable(c::commit));
      }
    }
    assertThat(f.present(id)).isTrue();
    assertThat(f.hidden()).isEqualTo(before);
  }

  /** How a write reaches its end with the token no longer bound. */
  enum Unbound {
    /** COMMIT sent as SQL after the scope closed. */
    COMMIT_STRING,
    /** setAutoCommit(false), a no-op in an open transaction, then commit(). */
    NO_OP_AUTOCOMMIT_OFF,
    /** In a block opened in SQL: setAutoCommit(true), a no-op in autocommit, then COMMIT. */
    BLOCK_NO_OP_AUTOCOMMIT_ON,
    /** In a block opened in SQL: setAutoCommit(false) (no commit), then commit(). */
    BLOCK_AUTOCOMMIT_OFF;

    void open(Connection c) throws SQLException {
      if (name().startsWith("BLOCK")) {
        run(c, "BEGIN");
      } else {
        c.setAutoCommit(false);
      }
    }

    void end(Connection c) throws SQLException {
      switch (this) {
        case COMMIT_STRING -> run(c, "COMMIT");
        case NO_OP_AUTOCOMMIT_OFF -> {
          c.setAutoCommit(false);
          c.commit();
        }
        case BLOCK_NO_OP_AUTOCOMMIT_ON -> {
          c.setAutoCommit(true);
          run(c, "COMMIT");
        }
        case BLOCK_AUTOCOMMIT_OFF -> {
          c.setAutoCommit(false);
          c.commit();
        }
      }
    }
  }

  /**
   * A hidden write with a stale token bound, the scope closed before the transaction ends: its end
   * still checks the token it was written with, whatever way it ends.
   */
  @ParameterizedTest
  @EnumSource(Unbound.class)
  void theEndChecksTheTokensBoundInTheTransactionThoughNoLongerBound(Unbound way)
      throws SQLException {
    f.zombie(
        way::open,
        c -> run(c, "SELECT * FROM te_hidden"),
        c -> assertRefused(catchThrowable(() -> way.end(c))));

    int id = IDS.getAndIncrement();
    f.onConnection(CURRENT, way::open, c -> insert(c, id), way::end);
    assertThat(f.present(id)).isTrue();
  }
}
