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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.postgresql.ds.PGSimpleDataSource;
import org.postgresql.jdbc.PreferQueryMode;

/**
 * A read with a fetch size, in autocommit with a token bound. pgjdbc ignores a fetch size in
 * autocommit and reads every row at once; the wrapper runs a read it cannot carry (a fetch size is
 * one) in a transaction of its own, where pgjdbc opened a cursor for the first rows and the
 * wrapper's COMMIT closed it: the caller's next fetch failed ({@code 34000} portal "C_1" does not
 * exist) and a query that writes had committed what the first fetch wrote (found by attack-carry,
 * extended query modes). Now the read is made as in autocommit: the current holder sees the rows,
 * fetch sizes and writes of the unfenced driver; a zombie is refused with nothing written.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class AutocommitFetchSizeTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final AtomicInteger RESOURCES = new AtomicInteger();
  private static final long CURRENT = 5;
  private static final long STALE = 4;
  private static final String QUERY = "SELECT fs_write(g) FROM generate_series(1, 10) g";

  private static DataSource plain;

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    exec(plain, "CREATE TABLE fs_log (id serial PRIMARY KEY, g int NOT NULL)");
    exec(
        plain,
        "CREATE FUNCTION fs_write(p int) RETURNS int LANGUAGE sql"
            + " AS 'INSERT INTO fs_log (g) VALUES (p) RETURNING p'");
  }

  /** How the fetch size is set and the read made. */
  enum Way {
    STATEMENT {
      @Override
      ResultSet read(Connection c) throws SQLException {
        Statement s = c.createStatement();
        s.setFetchSize(3);
        return s.executeQuery(QUERY);
      }
    },
    PREPARED {
      @Override
      ResultSet read(Connection c) throws SQLException {
        PreparedStatement ps = c.prepareStatement(QUERY);
        ps.setFetchSize(3);
        return ps.executeQuery();
      }
    },
    CALLABLE {
      @Override
      ResultSet read(Connection c) throws SQLException {
        PreparedStatement ps = c.prepareCall(QUERY);
        ps.setFetchSize(3);
        return ps.executeQuery();
      }
    },
    PREPARED_EXECUTE {
      @Override
      ResultSet read(Connection c) throws SQLException {
        PreparedStatement ps = c.prepareStatement(QUERY);
        ps.setFetchSize(3);
        assertThat(ps.execute()).isTrue();
        return ps.getResultSet();
      }
    },
    DEFAULT_ROW_FETCH_SIZE {
      @Override
      void configure(PGSimpleDataSource ds) {
        ds.setDefaultRowFetchSize(3);
      }

      @Override
      ResultSet read(Connection c) throws SQLException {
        return c.createStatement().executeQuery(QUERY);
      }
    };

    void configure(PGSimpleDataSource ds) {}

    abstract ResultSet read(Connection c) throws SQLException;
  }

  static Stream<Arguments> cases() {
    return FencingTestSupport.underEachQueryMode(Way.values());
  }

  private static DataSource driver(Way way, PreferQueryMode mode) {
    return FencingTestSupport.plain(
        db,
        ds -> {
          ds.setPreferQueryMode(mode);
          way.configure(ds);
          return ds;
        });
  }

  private static long written() throws SQLException {
    return queryLong(plain, "SELECT count(*) FROM fs_log");
  }

  /** What the caller sees of the read: rows, fetch sizes, rows written. */
  private static List<String> seen(DataSource ds, Way way) throws SQLException {
    long before = written();
    List<String> seen = new ArrayList<>();
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(true);
      try (ResultSet rs = way.read(c)) {
        seen.add("fetch size " + rs.getFetchSize() + " / " + rs.getStatement().getFetchSize());
        StringBuilder rows = new StringBuilder();
        while (rs.next()) {
          rows.append(rs.getInt(1)).append(' ');
        }
        seen.add("rows " + rows);
        rs.getStatement().close();
      }
    }
    seen.add("written " + (written() - before));
    return seen;
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("cases")
  void theCurrentHolderReadsAsUnfenced(Way way, PreferQueryMode mode) throws Exception {
    List<String> unfenced = seen(driver(way, mode), way);
    String resource = externalResource(plain, "fs-ok-" + RESOURCES.incrementAndGet(), CURRENT);
    List<String> fenced;
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, CURRENT))) {
      fenced = seen(FencedDataSource.wrap(driver(way, mode)), way);
    }
    assertThat(fenced).as("%s %s", way, mode).isEqualTo(unfenced);
    assertThat(unfenced).contains("rows 1 2 3 4 5 6 7 8 9 10 ", "written 10");
    assertThat(rejections(plain, resource, "stale_token")).isZero();
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("cases")
  void aZombiesReadWritesNothing(Way way, PreferQueryMode mode) throws Exception {
    String resource = externalResource(plain, "fs-stale-" + RESOURCES.incrementAndGet(), CURRENT);
    long before = written();
    Throwable refused;
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, STALE))) {
      refused = catchThrowable(() -> seen(FencedDataSource.wrap(driver(way, mode)), way));
    }
    assertThat(refused).as("%s %s", way, mode).isInstanceOf(StaleFencingTokenException.class);
    assertThat(written()).as("%s %s: written by a stale token", way, mode).isEqualTo(before);
    assertThat(rejections(plain, resource, "stale_token")).isEqualTo(1);
  }

  /**
   * A read that fails after its first fetch's rows (division by zero at row 5) in the wrapper's
   * transaction: the statement's fetch size, set to 0 for the read, is the caller's again, and the
   * same statement then reads as the unfenced driver does. Nothing of the failed read stays
   * written.
   */
  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("cases")
  void aFailedReadLeavesTheFetchSizeAsSet(Way way, PreferQueryMode mode) throws Exception {
    if (way == Way.DEFAULT_ROW_FETCH_SIZE || way == Way.PREPARED_EXECUTE) {
      return; // the same statements as STATEMENT and PREPARED
    }
    String resource = externalResource(plain, "fs-fail-" + RESOURCES.incrementAndGet(), CURRENT);
    long before = written();
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, CURRENT));
        Connection c = FencedDataSource.wrap(driver(way, mode)).getConnection()) {
      c.setAutoCommit(true);
      String failing = "SELECT fs_write(g) / (5 - g) FROM generate_series(1, 10) g";
      Statement s = way == Way.STATEMENT ? c.createStatement() : c.prepareStatement(failing);
      s.setFetchSize(3);
      Throwable failed =
          catchThrowable(
              () -> {
                try (ResultSet rs =
                    s instanceof PreparedStatement ps
                        ? ps.executeQuery()
                        : s.executeQuery(failing)) {
                  while (rs.next()) {
                    rs.getInt(1);
                  }
                }
              });
      assertThat(failed).as("%s %s", way, mode).isInstanceOf(SQLException.class);
      assertThat(((SQLException) failed).getSQLState()).isEqualTo("22012");
      assertThat(s.getFetchSize()).as("%s %s: the statement's fetch size", way, mode).isEqualTo(3);
      assertThat(written()).as("%s %s: written by the failed read", way, mode).isEqualTo(before);
      s.close();
    }
  }
}
