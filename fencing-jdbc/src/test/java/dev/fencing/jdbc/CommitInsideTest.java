package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.PATIENCE;
import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.FencingTestSupport.maxSeen;
import static dev.fencing.jdbc.FencingTestSupport.query;
import static dev.fencing.jdbc.FencingTestSupport.waitingOnLock;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.postgresql.jdbc.PreferQueryMode;

/**
 * A procedure or {@code DO} block that commits inside itself, run in autocommit with a token bound.
 * Outside a transaction block PostgreSQL runs {@code CALL} and {@code DO} non-atomically: a {@code
 * COMMIT} inside ends the transaction that holds the check's lock, and what follows would be
 * written after a handover could have happened. The wrapper runs them in its own transaction block,
 * where PostgreSQL refuses that {@code COMMIT}: the execution fails (2D000, saying why) and writes
 * nothing. The interleaving is forced: the block waits on a row the test holds after its {@code
 * COMMIT}, and a new holder then advances the resource. Without the transaction block (the carried
 * check and the statement as one implicit transaction, as for other autocommit writes) the zombie's
 * second row lands after the new holder's, with the stale token.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class CommitInsideTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final AtomicInteger RESOURCES = new AtomicInteger();
  private static final String BODY =
      "INSERT INTO ci_log (tag) VALUES ('zombie-before'); COMMIT;"
          + " PERFORM 1 FROM ci_gate WHERE id = 1 FOR UPDATE;"
          + " INSERT INTO ci_log (tag) VALUES ('zombie-after');";

  private static DataSource plain;
  private static final ExecutorService THREADS = Executors.newCachedThreadPool();

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    exec(plain, "CREATE TABLE ci_gate (id int PRIMARY KEY)");
    exec(plain, "INSERT INTO ci_gate VALUES (1)");
    exec(plain, "CREATE TABLE ci_log (n serial PRIMARY KEY, tag text NOT NULL)");
    exec(
        plain,
        "CREATE PROCEDURE ci_commit_inside() LANGUAGE plpgsql AS $$ BEGIN " + BODY + " END $$");
  }

  @AfterAll
  static void stop() {
    THREADS.shutdownNow();
  }

  /** One way of running the committing procedure or block. */
  enum Way {
    STATEMENT_CALL {
      @Override
      void run(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
          s.execute("CALL ci_commit_inside()");
        }
      }
    },
    PREPARED_CALL {
      @Override
      void run(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("/* ci */ call ci_commit_inside()")) {
          ps.execute();
        }
      }
    },
    CALLABLE_CALL {
      @Override
      void run(Connection c) throws SQLException {
        try (CallableStatement cs = c.prepareCall("CALL ci_commit_inside()")) {
          cs.execute();
        }
      }
    },
    CALLABLE_ESCAPE {
      @Override
      void run(Connection c) throws SQLException {
        // escapeSyntaxCallMode=call: pgjdbc sends the escape as CALL
        try (CallableStatement cs = c.prepareCall("{call ci_commit_inside()}")) {
          cs.execute();
        }
      }
    },
    STATEMENT_DO {
      @Override
      void run(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
          s.execute("DO $$ BEGIN " + BODY + " END $$");
        }
      }
    },
    PREPARED_DO {
      @Override
      void run(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("DO $$ BEGIN " + BODY + " END $$")) {
          ps.executeUpdate();
        }
      }
    };

    abstract void run(Connection c) throws SQLException;
  }

  static Stream<Arguments> cases() {
    List<Arguments> cases = new ArrayList<>();
    for (Way way : Way.values()) {
      for (PreferQueryMode mode :
          new PreferQueryMode[] {
            PreferQueryMode.EXTENDED, PreferQueryMode.EXTENDED_FOR_PREPARED, PreferQueryMode.SIMPLE
          }) {
        for (int isolation :
            new int[] {
              Connection.TRANSACTION_READ_COMMITTED,
              Connection.TRANSACTION_REPEATABLE_READ,
              Connection.TRANSACTION_SERIALIZABLE
            }) {
          cases.add(Arguments.of(way, mode, isolation));
        }
      }
    }
    return cases.stream();
  }

  @ParameterizedTest(name = "{0} {1} isolation {2}")
  @MethodSource("cases")
  void aCommitInsideAProcedureCannotEndTheFencedTransaction(
      Way way, PreferQueryMode mode, int isolation) throws Exception {
    exec(plain, "TRUNCATE ci_log");
    String resource = externalResource(plain, "ci-" + RESOURCES.incrementAndGet(), 5);
    FencedDataSource fenced =
        FencedDataSource.wrap(
            FencingTestSupport.plain(
                db,
                ds -> {
                  ds.setPreferQueryMode(mode);
                  ds.setEscapeSyntaxCallMode("call");
                  return ds;
                }));
    Future<?> zombie;
    try (Connection gate = plain.getConnection()) {
      gate.setAutoCommit(false);
      exec(gate, "SELECT 1 FROM ci_gate WHERE id = 1 FOR UPDATE");
      zombie =
          THREADS.submit(
              () -> {
                try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 5));
                    Connection c = fenced.getConnection()) {
                  c.setTransactionIsolation(isolation);
                  assertThat(c.getAutoCommit()).isTrue();
                  way.run(c);
                }
                return null;
              });
      // the block either fails at its COMMIT or, past it, waits for the gate
      await().atMost(PATIENCE).until(() -> zombie.isDone() || waitingOnLock(plain, "ci_") > 0);
      // the new holder: not held off when the zombie's check no longer holds the resource
      try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 6));
          Connection c = fenced.getConnection()) {
        c.setAutoCommit(false);
        exec(c, "INSERT INTO ci_log (tag) VALUES ('new holder')");
        c.commit();
      }
      gate.rollback();
    }
    ExecutionException failed = null;
    try {
      zombie.get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      failed = e;
    }
    assertThat(failed).as("the zombie's procedure must fail").isNotNull();
    assertThat(failed.getCause())
        .isInstanceOf(SQLException.class)
        .hasMessageContaining("commits or rolls back inside itself cannot be fenced")
        .hasMessageContaining("invalid transaction termination");
    assertThat(((SQLException) failed.getCause()).getSQLState()).isEqualTo("2D000");
    assertThat(query(plain, "SELECT string_agg(tag, ',' ORDER BY n) FROM ci_log"))
        .as("nothing of the zombie's procedure was written")
        .isEqualTo("new holder");
    assertThat(maxSeen(plain, resource)).isEqualTo(6);
  }

  @Test
  void aProcedureThatDoesNotCommitInsideRunsAsBefore() throws Exception {
    exec(plain, "TRUNCATE ci_log");
    exec(
        plain,
        "CREATE OR REPLACE PROCEDURE ci_plain(p_tag text) LANGUAGE plpgsql"
            + " AS $$ BEGIN INSERT INTO ci_log (tag) VALUES (p_tag); END $$");
    String resource = externalResource(plain, "ci-" + RESOURCES.incrementAndGet(), 5);
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 5));
        Connection c = fenced.getConnection();
        Statement s = c.createStatement()) {
      assertThat(s.execute("CALL ci_plain('call')")).isFalse();
      assertThat(s.getUpdateCount()).isEqualTo(-1);
      assertThat(s.execute("DO $$ BEGIN INSERT INTO ci_log (tag) VALUES ('do'); END $$")).isFalse();
      assertThat(s.getUpdateCount()).isEqualTo(0);
      assertThat(c.getAutoCommit()).isTrue();
    }
    assertThat(query(plain, "SELECT string_agg(tag, ',' ORDER BY n) FROM ci_log"))
        .isEqualTo("call,do");
  }
}
