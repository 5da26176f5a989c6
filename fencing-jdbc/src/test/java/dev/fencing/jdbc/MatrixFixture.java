package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.testing.RoundTrips;
import dev.fencing.testing.TestDatabaseExtension;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.postgresql.ds.PGSimpleDataSource;
import org.postgresql.jdbc.AutoSave;
import org.postgresql.jdbc.PreferQueryMode;

/**
 * What the tests comparing fenced with unfenced JDBC share ({@link InvisibilityMatrixTest}, {@link
 * CarriedCheckMatrixTest}, {@link CarriedKeysMatrixTest}, {@link CarriedCheckTest}): the driver
 * settings they run under, a zombie's refusal, and the transcript of an operation (what the caller
 * saw, the rows committed, the round trips).
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
final class MatrixFixture {
  private MatrixFixture() {}

  /** One operation on a connection, writing what it saw into the transcript. */
  @FunctionalInterface
  interface Operation {
    void run(Connection c, List<String> seen) throws SQLException;
  }

  /** What an operation does with its prepared statement; its result goes into the transcript. */
  @FunctionalInterface
  interface PreparedBody {
    Object run(PreparedStatement ps) throws SQLException;
  }

  /**
   * A test run in every setting of the matrices ({@link #settings}): its parameters are {@code
   * (boolean autoCommit, PreferQueryMode mode, AutoSave autosave)}.
   */
  @Target(ElementType.METHOD)
  @Retention(RetentionPolicy.RUNTIME)
  @ParameterizedTest(name = "autocommit={0} {1} autosave={2}")
  @MethodSource("dev.fencing.jdbc.MatrixFixture#settings")
  @interface EverySetting {}

  /**
   * Migrates {@code db} and creates the matrices' table {@code m (id serial, v int)}: the unfenced
   * data source.
   */
  static DataSource matrixTable(TestDatabaseExtension db) throws SQLException {
    FencingTestSupport.migrate(db);
    DataSource plain = db.dataSource();
    exec(plain, "CREATE TABLE m (id serial PRIMARY KEY, v int NOT NULL)");
    return plain;
  }

  /** {@code m_add(p)}: inserts {@code p} into {@code m}, warns, returns {@code p * 2}. */
  static void createAdd(DataSource plain) throws SQLException {
    exec(
        plain,
        "CREATE FUNCTION m_add(p int) RETURNS int LANGUAGE plpgsql AS"
            + " 'BEGIN INSERT INTO m (v) VALUES (p); RAISE WARNING ''added %'', p; RETURN p * 2; END'");
  }

  /**
   * Every setting of the matrices: autocommit on and off, each {@code preferQueryMode} and {@code
   * autosave}.
   */
  static Stream<Arguments> settings() {
    List<Arguments> all = new ArrayList<>();
    for (boolean autoCommit : new boolean[] {true, false}) {
      for (PreferQueryMode mode :
          new PreferQueryMode[] {
            PreferQueryMode.EXTENDED, PreferQueryMode.EXTENDED_FOR_PREPARED, PreferQueryMode.SIMPLE
          }) {
        for (AutoSave autosave : new AutoSave[] {AutoSave.NEVER, AutoSave.ALWAYS}) {
          all.add(Arguments.of(autoCommit, mode, autosave));
        }
      }
    }
    return all.stream();
  }

  /**
   * Every setting of {@link CarriedFastCheckMatrixTest}: autocommit on and off, every {@code
   * preferQueryMode} (extendedCacheEverything too) and every {@code autosave} (conservative too).
   */
  static Stream<Arguments> allSettings() {
    List<Arguments> all = new ArrayList<>();
    for (boolean autoCommit : new boolean[] {true, false}) {
      for (PreferQueryMode mode : PreferQueryMode.values()) {
        for (AutoSave autosave : AutoSave.values()) {
          all.add(Arguments.of(autoCommit, mode, autosave));
        }
      }
    }
    return all.stream();
  }

  /** A local resource's lease acquired by {@code holder} for an hour: its token. */
  static long acquireLocal(DataSource plain, String resource, String holder) throws SQLException {
    return FencingTestSupport.queryLong(
        plain, "SELECT token FROM fencing.try_acquire(?, ?, interval '1 hour')", resource, holder);
  }

  /**
   * {@code token}'s lease of the local {@code resource} released and acquired by another holder:
   * the new token ({@code token} is a zombie's from now on).
   */
  static long supersede(DataSource plain, String resource, long token) throws SQLException {
    FencingTestSupport.exec(plain, "SELECT fencing.release(?, ?)", resource, token);
    long next = acquireLocal(plain, resource, "next-holder");
    assertThat(next).isGreaterThan(token);
    return next;
  }

  /** The advisory key space: {@code resource.lock_space}'s default. */
  static long keySpace(DataSource plain) throws SQLException {
    return FencingTestSupport.queryLong(
        plain,
        "SELECT substring(pg_get_expr(d.adbin, d.adrelid), '^''?(-?[0-9]+)')::bigint"
            + " FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid"
            + " AND a.attnum = d.adnum WHERE d.adrelid = 'fencing.resource'::regclass"
            + " AND a.attname = 'lock_space'");
  }

  /**
   * The advisory share locks {@code c}'s backend holds on {@code resource}'s name in {@code space}
   * (read on the driver's connection: a read of the fenced one could carry a check).
   */
  static long nameLocks(Connection c, String resource, long space) throws SQLException {
    Object n =
        FencingTestSupport.query(
            c.unwrap(org.postgresql.jdbc.PgConnection.class),
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()"
                + " AND mode = 'ShareLock' AND granted AND objsubid = 2"
                + " AND classid::bigint = ((?::bigint % 4294967296) + 4294967296) % 4294967296"
                + " AND objid::bigint = ((hashtext(?)::bigint % 4294967296) + 4294967296)"
                + " % 4294967296",
            space,
            resource);
    return ((Number) n).longValue();
  }

  /** An unfenced data source of {@code db} with {@code preferQueryMode=mode}. */
  static PGSimpleDataSource driver(TestDatabaseExtension db, PreferQueryMode mode) {
    return FencingTestSupport.plain(
        db,
        ds -> {
          ds.setPreferQueryMode(mode);
          return ds;
        });
  }

  /** An unfenced data source of {@code db} with {@code preferQueryMode} and {@code autosave}. */
  static PGSimpleDataSource driver(
      TestDatabaseExtension db, PreferQueryMode mode, AutoSave autosave) {
    return FencingTestSupport.plain(
        db,
        ds -> {
          ds.setPreferQueryMode(mode);
          ds.setAutosave(autosave);
          return ds;
        });
  }

  /**
   * The unfenced data source of the tests of {@code preferQueryMode=simple} (autosave
   * conservative).
   */
  static PGSimpleDataSource simpleDriver(TestDatabaseExtension db) {
    return driver(db, PreferQueryMode.SIMPLE, AutoSave.CONSERVATIVE);
  }

  /** {@link #simpleDriver} fenced. */
  static DataSource simple(TestDatabaseExtension db) {
    return FencedDataSource.wrap(simpleDriver(db));
  }

  /** {@code write} is refused as stale, with the fence's SQLSTATE. */
  static void assertRefusedAsStale(ThrowingCallable write) {
    assertThatThrownBy(write)
        .isInstanceOf(StaleFencingTokenException.class)
        .extracting(e -> ((SQLException) e).getSQLState())
        .isEqualTo("ZF001");
  }

  /**
   * After a zombie's refused write: {@code countSql} (with {@code args}) counts none of its rows,
   * and its refusal of {@code resource} is recorded once.
   */
  static void assertNothingWrittenAndRefusalRecorded(
      DataSource plain, String resource, String countSql, Object... args) throws SQLException {
    assertThat(FencingTestSupport.queryLong(plain, countSql, args))
        .as("nothing of the zombie written")
        .isZero();
    assertThat(FencingTestSupport.rejections(plain, resource, "stale_token"))
        .as("the refusal recorded")
        .isEqualTo(1);
  }

  /**
   * The round trips, then what {@code op} returned on a connection of {@code ds} (bound to token 5
   * of {@code resource} if {@code bound}), then the rows of {@code table} committed; the table is
   * emptied first.
   */
  static List<String> transcript(
      DataSource plain,
      String table,
      String resource,
      DataSource ds,
      boolean autoCommit,
      Operation op,
      boolean bound,
      RoundTrips trips)
      throws SQLException {
    return transcript(plain, table, resource, 5, ds, autoCommit, op, bound, trips);
  }

  /** {@link #transcript} bound to {@code token} of {@code resource}. */
  static List<String> transcript(
      DataSource plain,
      String table,
      String resource,
      long token,
      DataSource ds,
      boolean autoCommit,
      Operation op,
      boolean bound,
      RoundTrips trips)
      throws SQLException {
    exec(plain, "TRUNCATE " + table + " RESTART IDENTITY");
    List<String> seen = new ArrayList<>();
    int roundTrips;
    try (FencingScope scope = bound ? Fencing.bind(FencingToken.of(resource, token)) : null;
        Connection c = ds.getConnection()) {
      c.setAutoCommit(autoCommit);
      trips.reset();
      try {
        op.run(c, seen);
      } catch (SQLException e) {
        seen.add(exception(e));
      }
      if (!autoCommit) {
        try {
          c.commit();
        } catch (SQLException e) {
          seen.add("commit failed " + e.getSQLState());
        }
      }
      roundTrips = trips.count();
      seen.add("autocommit " + c.getAutoCommit());
    }
    try (Connection c = plain.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT id, v FROM " + table + " ORDER BY id")) {
      seen.add("committed " + rows(rs));
    }
    seen.add(0, String.valueOf(roundTrips));
    return seen;
  }

  static String exception(SQLException e) {
    return "exception "
        + e.getClass().getSimpleName()
        + " "
        + e.getSQLState()
        + " "
        + e.getMessage();
  }

  static void warnings(Statement s, List<String> seen) throws SQLException {
    for (SQLWarning w = s.getWarnings(); w != null; w = w.getNextWarning()) {
      seen.add("warning " + w.getSQLState() + " " + w.getMessage());
    }
  }

  /** The results after the first, in order: result sets' rows and update counts. */
  static String drain(Statement s) throws SQLException {
    StringBuilder out = new StringBuilder();
    ResultSet rs = s.getResultSet();
    if (rs != null) {
      out.append(rs.isClosed() ? "closed" : rows(rs));
    } else {
      out.append("count ").append(s.getUpdateCount());
    }
    while (true) {
      boolean isResultSet = s.getMoreResults();
      if (isResultSet) {
        out.append(" | ").append(rows(s.getResultSet()));
      } else if (s.getUpdateCount() != -1) {
        out.append(" | count ").append(s.getUpdateCount());
      } else {
        return out.append(" | ").append(s.getLargeUpdateCount()).toString();
      }
    }
  }

  /** The rows of {@code rs}, each column as label=value. */
  static String rows(ResultSet rs) throws SQLException {
    StringBuilder out = new StringBuilder("[");
    int columns = rs.getMetaData().getColumnCount();
    while (rs.next()) {
      out.append("(");
      for (int i = 1; i <= columns; i++) {
        out.append(i > 1 ? ", " : "")
            .append(rs.getMetaData().getColumnLabel(i))
            .append("=")
            .append(rs.getString(i));
      }
      out.append(")");
    }
    return out.append("]").toString();
  }
}
