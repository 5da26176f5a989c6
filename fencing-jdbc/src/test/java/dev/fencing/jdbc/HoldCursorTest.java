package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.FencingTestSupport.queryLong;
import static dev.fencing.jdbc.FencingTestSupport.rejections;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
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
import org.postgresql.jdbc.PreferQueryMode;

/**
 * A {@code WITH HOLD} cursor's query runs to its end when its transaction commits, inside {@code
 * COMMIT}: after the commit's check tested whether the transaction wrote. A query that writes (here
 * a view calling a writing function) used to find no transaction id at that test, so no check ran
 * and a stale token's hidden write committed. The test is now "wrote, or holds a holdable cursor"
 * (both in the JDBC check and in {@code check_tokens_if_written}, V37): a zombie is refused and
 * nothing is written, however the transaction ends; the current holder's cursor holds the rows it
 * holds unfenced.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class HoldCursorTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final AtomicInteger RESOURCES = new AtomicInteger();
  private static final long CURRENT = 5;
  private static final long STALE = 4;
  private static final String DECLARE = "DECLARE hc CURSOR WITH HOLD FOR SELECT x FROM hc_view";

  private static DataSource plain;

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    exec(plain, "CREATE TABLE hc_log (id serial PRIMARY KEY, tag text NOT NULL)");
    exec(
        plain,
        "CREATE FUNCTION hc_write() RETURNS int LANGUAGE sql"
            + " AS 'INSERT INTO hc_log (tag) VALUES (''held'') RETURNING 7'");
    exec(plain, "CREATE VIEW hc_view AS SELECT hc_write() AS x");
  }

  /** One way of declaring the cursor and ending its transaction. */
  enum End {
    COMMIT_METHOD(false) {
      @Override
      void run(Connection c) throws SQLException {
        declare(c);
        c.commit();
      }
    },
    AUTOCOMMIT_ON(false) {
      @Override
      void run(Connection c) throws SQLException {
        declare(c);
        c.setAutoCommit(true);
      }
    },
    COMMIT_IN_SQL(false) {
      @Override
      void run(Connection c) throws SQLException {
        declare(c);
        try (Statement s = c.createStatement()) {
          s.execute("COMMIT");
        }
      }
    },
    END_IN_SQL(false) {
      @Override
      void run(Connection c) throws SQLException {
        declare(c);
        try (Statement s = c.createStatement()) {
          s.execute("END");
        }
      }
    },
    AUTOCOMMIT_STATEMENT(true) {
      @Override
      void run(Connection c) throws SQLException {
        declare(c);
      }
    },
    AUTOCOMMIT_PREPARED(true) {
      @Override
      void run(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(DECLARE)) {
          ps.execute();
        }
      }
    };

    final boolean autoCommit;

    End(boolean autoCommit) {
      this.autoCommit = autoCommit;
    }

    abstract void run(Connection c) throws SQLException;

    static void declare(Connection c) throws SQLException {
      try (Statement s = c.createStatement()) {
        s.execute(DECLARE);
      }
    }
  }

  static Stream<Arguments> cases() {
    return FencingTestSupport.underEachQueryMode(End.values());
  }

  private static FencedDataSource fenced(PreferQueryMode mode) {
    return FencingTestSupport.fenced(db, mode);
  }

  private static long held() throws SQLException {
    return queryLong(plain, "SELECT count(*) FROM hc_log");
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("cases")
  void aZombiesHeldCursorWritesNothing(End end, PreferQueryMode mode) throws Exception {
    String resource = externalResource(plain, "hc-stale-" + RESOURCES.incrementAndGet(), CURRENT);
    long before = held();
    Throwable refused;
    Object cursors;
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, STALE));
        Connection c = fenced(mode).getConnection()) {
      c.setAutoCommit(end.autoCommit);
      refused = catchThrowable(() -> end.run(c));
      if (!c.getAutoCommit()) {
        c.rollback();
      }
      cursors = FencingTestSupport.query(c, "SELECT count(*) FROM pg_cursors WHERE name = 'hc'");
    }
    assertThat(held()).as("%s %s: written by a stale token", end, mode).isEqualTo(before);
    assertThat(refused).as("%s %s", end, mode).isInstanceOf(StaleFencingTokenException.class);
    assertThat(cursors).as("the refused transaction's cursor is gone").isEqualTo(0L);
    assertThat(rejections(plain, resource, "stale_token")).isEqualTo(1);
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("cases")
  void theCurrentHoldersCursorHoldsItsRows(End end, PreferQueryMode mode) throws Exception {
    String resource = externalResource(plain, "hc-ok-" + RESOURCES.incrementAndGet(), CURRENT);
    long before = held();
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, CURRENT));
        Connection c = fenced(mode).getConnection()) {
      c.setAutoCommit(end.autoCommit);
      end.run(c);
      c.setAutoCommit(true);
      try (Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("FETCH ALL FROM hc")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getInt(1)).isEqualTo(7);
        assertThat(rs.next()).isFalse();
      }
      exec(c, "CLOSE hc");
    }
    assertThat(held()).as("%s %s", end, mode).isEqualTo(before + 1);
    assertThat(rejections(plain, resource, "stale_token")).isZero();
  }
}
