package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.FencingTestSupport.queryLong;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.testing.TestDatabaseExtension;
import java.io.IOException;
import java.io.StringWriter;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.postgresql.PGConnection;
import org.postgresql.jdbc.PreferQueryMode;

/**
 * A string (or batch) that ends the transaction after other statements: the check made before the
 * string ran before those statements, and the "if written" test found no transaction id yet; a
 * write they hide (a view calling a writing function, a cursor's query run by {@code MOVE}) was
 * then committed by the string's own {@code COMMIT} (or {@code END}, {@code COMMIT AND CHAIN}), a
 * stale token's write with it (plain, prepared, batched, through the COPY API). With a token bound
 * such a string is now refused before anything is sent (0A000), in a transaction and in autocommit,
 * whatever the query mode; a transaction's end is a string of its own, checked right before it
 * runs.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class CommitAfterStatementTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final AtomicInteger RESOURCES = new AtomicInteger();
  private static final long CURRENT = 5;
  private static final long STALE = 4;
  private static final String DECLARE = "DECLARE cas CURSOR FOR SELECT x FROM cas_view";

  private static DataSource plain;

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    exec(plain, "CREATE TABLE cas_log (id serial PRIMARY KEY, tag text NOT NULL)");
    exec(
        plain,
        "CREATE FUNCTION cas_write() RETURNS int LANGUAGE sql"
            + " AS 'INSERT INTO cas_log (tag) VALUES (''hidden'') RETURNING 7'");
    exec(plain, "CREATE VIEW cas_view AS SELECT cas_write() AS x");
  }

  /** A string (or batch) whose statements write unseen, then end the transaction. */
  enum Attack {
    SELECT_COMMIT(false) {
      @Override
      void run(Connection c) throws SQLException {
        statement(c, "SELECT x FROM cas_view; COMMIT");
      }
    },
    TABLE_END(false) {
      @Override
      void run(Connection c) throws SQLException {
        statement(c, "TABLE cas_view; END");
      }
    },
    SELECT_COMMIT_AND_CHAIN(false) {
      @Override
      void run(Connection c) throws SQLException {
        statement(c, "SELECT x FROM cas_view; COMMIT AND CHAIN");
      }
    },
    SAVEPOINT_RELEASE_COMMIT(false) {
      @Override
      void run(Connection c) throws SQLException {
        statement(c, "SAVEPOINT a; SELECT x FROM cas_view; RELEASE a; COMMIT");
      }
    },
    MOVE_COMMIT(false) {
      @Override
      void run(Connection c) throws SQLException {
        statement(c, DECLARE);
        statement(c, "MOVE ALL IN cas; COMMIT");
      }
    },
    BATCH_MOVE_COMMIT(false) {
      @Override
      void run(Connection c) throws SQLException {
        statement(c, DECLARE);
        try (Statement s = c.createStatement()) {
          s.addBatch("MOVE ALL IN cas");
          s.addBatch("COMMIT");
          s.executeBatch();
        }
      }
    },
    PREPARED_SELECT_COMMIT(false) {
      @Override
      void run(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT x FROM cas_view; COMMIT")) {
          ps.execute();
        }
      }
    },
    COPY_OUT_COMMIT(false) {
      @Override
      void run(Connection c) throws SQLException {
        try {
          c.unwrap(PGConnection.class)
              .getCopyAPI()
              .copyOut("COPY (SELECT x FROM cas_view) TO STDOUT; COMMIT", new StringWriter());
        } catch (IOException e) {
          throw new SQLException(e);
        }
      }
    },
    AUTOCOMMIT_SELECT_COMMIT(true) {
      @Override
      void run(Connection c) throws SQLException {
        statement(c, "SELECT x FROM cas_view; COMMIT");
      }
    },
    AUTOCOMMIT_BEGIN_SELECT_COMMIT(true) {
      @Override
      void run(Connection c) throws SQLException {
        statement(c, "BEGIN; SELECT x FROM cas_view; COMMIT");
      }
    },
    AUTOCOMMIT_BEGIN_THEN_SELECT_COMMIT(true) {
      @Override
      void run(Connection c) throws SQLException {
        statement(c, "BEGIN");
        statement(c, "SELECT x FROM cas_view; COMMIT");
      }
    },
    AUTOCOMMIT_BATCH(true) {
      @Override
      void run(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
          s.addBatch("BEGIN");
          s.addBatch(DECLARE);
          s.addBatch("MOVE ALL IN cas");
          s.addBatch("COMMIT");
          s.executeBatch();
        }
      }
    },
    AUTOCOMMIT_PREPARED(true) {
      @Override
      void run(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT x FROM cas_view; COMMIT")) {
          ps.execute();
        }
      }
    };

    final boolean autoCommit;

    Attack(boolean autoCommit) {
      this.autoCommit = autoCommit;
    }

    abstract void run(Connection c) throws SQLException;

    static void statement(Connection c, String sql) throws SQLException {
      try (Statement s = c.createStatement()) {
        s.execute(sql);
      }
    }
  }

  static Stream<Arguments> cases() {
    return FencingTestSupport.underEachQueryMode(Attack.values());
  }

  private static FencedDataSource fenced(PreferQueryMode mode) {
    return FencingTestSupport.fenced(db, mode);
  }

  private static long written() throws SQLException {
    return queryLong(plain, "SELECT count(*) FROM cas_log");
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("cases")
  void aZombiesStringThatCommitsItsHiddenWriteIsRefused(Attack attack, PreferQueryMode mode)
      throws Exception {
    String resource = externalResource(plain, "cas-stale-" + RESOURCES.incrementAndGet(), CURRENT);
    long before = written();
    Throwable refused;
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, STALE));
        Connection c = fenced(mode).getConnection()) {
      c.setAutoCommit(attack.autoCommit);
      refused = catchThrowable(() -> attack.run(c));
      if (c.getAutoCommit()) {
        FencingTestSupport.exec(c, "ROLLBACK"); // a BEGIN the attack sent before its refusal
      } else {
        c.rollback();
      }
    }
    assertThat(written()).as("%s %s: written by a stale token", attack, mode).isEqualTo(before);
    assertThat(refused).as("%s %s", attack, mode).isInstanceOf(SQLException.class);
    assertThat(((SQLException) refused).getSQLState()).isEqualTo("0A000");
    assertThat(refused).hasMessageContaining("must be a SQL string (or batch) of its own");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("modes")
  void theCurrentHolderIsRefusedTheStringAndCommitsItsTransactionAlone(PreferQueryMode mode)
      throws Exception {
    String resource = externalResource(plain, "cas-ok-" + RESOURCES.incrementAndGet(), CURRENT);
    long before = written();
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, CURRENT));
        Connection c = fenced(mode).getConnection()) {
      c.setAutoCommit(false);
      Attack.statement(c, "SELECT x FROM cas_view");
      Throwable refused =
          catchThrowable(() -> Attack.statement(c, "SELECT x FROM cas_view; COMMIT"));
      assertThat(refused).isInstanceOf(SQLException.class);
      assertThat(((SQLException) refused).getSQLState()).isEqualTo("0A000");
      // nothing was sent: the transaction is open, and its own COMMIT checks and commits it
      Attack.statement(c, "COMMIT");
    }
    assertThat(written()).isEqualTo(before + 1);
  }

  static Stream<PreferQueryMode> modes() {
    return Stream.of(
        PreferQueryMode.EXTENDED, PreferQueryMode.EXTENDED_FOR_PREPARED, PreferQueryMode.SIMPLE);
  }
}
