package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.FencingTestSupport.queryLong;
import static dev.fencing.jdbc.FencingTestSupport.rejections;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Array;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
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
 * An {@link Array} of a fenced connection makes its result sets ({@code getResultSet()}) on a
 * statement of the driver's connection: {@code array.getResultSet().getStatement().getConnection()}
 * was the driver's connection, plain JDBC, and a write through it in autocommit committed with a
 * stale token bound (found by attack-carry, every way of getting an array, every query mode). Now
 * an array of a fenced connection is fenced: its result sets lead back to the fenced connection, a
 * zombie's write there is refused and writes nothing; for the current holder the array's values,
 * result sets and its use as a parameter are the driver's.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class ArrayWayBackTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final AtomicInteger RESOURCES = new AtomicInteger();
  private static final long CURRENT = 5;
  private static final long STALE = 4;

  private static DataSource plain;

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    exec(plain, "CREATE TABLE aw_log (id serial PRIMARY KEY, tag text NOT NULL)");
    exec(plain, "CREATE FUNCTION aw_out(OUT a int[]) LANGUAGE sql AS 'SELECT ARRAY[1, 2, 3]'");
  }

  /** One way of getting an array from the connection. */
  enum Way {
    CREATE_ARRAY_OF {
      @Override
      Array array(Connection c, List<AutoCloseable> open) throws SQLException {
        return c.createArrayOf("int4", new Object[] {1, 2, 3});
      }
    },
    PG_CONNECTION_CREATE_ARRAY_OF {
      @Override
      Array array(Connection c, List<AutoCloseable> open) throws SQLException {
        return c.unwrap(PGConnection.class).createArrayOf("int4", new int[] {1, 2, 3});
      }
    },
    RESULT_SET_GET_ARRAY {
      @Override
      Array array(Connection c, List<AutoCloseable> open) throws SQLException {
        return row(c, open).getArray(1);
      }
    },
    RESULT_SET_GET_ARRAY_BY_NAME {
      @Override
      Array array(Connection c, List<AutoCloseable> open) throws SQLException {
        return row(c, open).getArray("a");
      }
    },
    RESULT_SET_GET_OBJECT {
      @Override
      Array array(Connection c, List<AutoCloseable> open) throws SQLException {
        return (Array) row(c, open).getObject(1);
      }
    },
    RESULT_SET_GET_OBJECT_AS_ARRAY {
      @Override
      Array array(Connection c, List<AutoCloseable> open) throws SQLException {
        return row(c, open).getObject("a", Array.class);
      }
    },
    CALLABLE_GET_ARRAY {
      @Override
      Array array(Connection c, List<AutoCloseable> open) throws SQLException {
        return call(c, open).getArray(1);
      }
    },
    CALLABLE_GET_OBJECT {
      @Override
      Array array(Connection c, List<AutoCloseable> open) throws SQLException {
        return (Array) call(c, open).getObject(1);
      }
    },
    NESTED {
      @Override
      Array array(Connection c, List<AutoCloseable> open) throws SQLException {
        Statement s = c.createStatement();
        open.add(s);
        ResultSet rs = s.executeQuery("SELECT ARRAY[ARRAY[1, 2, 3], ARRAY[4, 5, 6]] AS a");
        rs.next();
        ResultSet inner = rs.getArray(1).getResultSet();
        inner.next();
        return inner.getArray(2);
      }
    };

    abstract Array array(Connection c, List<AutoCloseable> open) throws SQLException;

    static ResultSet row(Connection c, List<AutoCloseable> open) throws SQLException {
      Statement s = c.createStatement();
      open.add(s);
      ResultSet rs = s.executeQuery("SELECT ARRAY[1, 2, 3] AS a");
      rs.next();
      return rs;
    }

    static CallableStatement call(Connection c, List<AutoCloseable> open) throws SQLException {
      CallableStatement cs = c.prepareCall("{call aw_out(?)}");
      open.add(cs);
      cs.registerOutParameter(1, Types.ARRAY);
      cs.execute();
      return cs;
    }
  }

  static Stream<Arguments> cases() {
    // under simple pgjdbc sends an out parameter's placeholder as an argument (the driver's own
    // "function aw_out(unknown) does not exist", fenced or not)
    return FencingTestSupport.underEachQueryMode(Way.values())
        .filter(
            a ->
                a.get()[1] != PreferQueryMode.SIMPLE
                    || !a.get()[0].toString().startsWith("CALLABLE"));
  }

  private static long written() throws SQLException {
    return queryLong(plain, "SELECT count(*) FROM aw_log");
  }

  /** Writes a row through the connection the array's result set leads back to. */
  private static Connection wayBack(Array array) throws SQLException {
    return array.getResultSet().getStatement().getConnection();
  }

  private static void writeThrough(Connection back) throws SQLException {
    try (Statement s = back.createStatement()) {
      s.executeUpdate("INSERT INTO aw_log (tag) VALUES ('way back')");
    }
  }

  /** What the caller sees of the array: values, result set rows, the array as a parameter. */
  private static List<String> seen(Connection c, Way way) throws Exception {
    List<AutoCloseable> open = new ArrayList<>();
    List<String> seen = new ArrayList<>();
    try {
      Array array = way.array(c, open);
      seen.add(array.getBaseTypeName() + " " + array.getBaseType());
      seen.add(Arrays.toString((Object[]) array.getArray()));
      seen.add(Arrays.toString((Object[]) array.getArray(2, 2)));
      seen.add(String.valueOf(array));
      try (ResultSet rs = array.getResultSet(1, 2)) {
        while (rs.next()) {
          seen.add(rs.getInt(1) + "=" + rs.getInt(2));
        }
      }
      try (PreparedStatement ps = c.prepareStatement("SELECT ?::int[]::text")) {
        ps.setArray(1, array);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          seen.add(rs.getString(1));
        }
        ps.setObject(1, array);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          seen.add(rs.getString(1));
        }
      }
      array.free();
    } finally {
      for (AutoCloseable o : open) {
        o.close();
      }
    }
    return seen;
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("cases")
  void aZombiesWriteThroughAnArrayIsRefused(Way way, PreferQueryMode mode) throws Exception {
    String resource = externalResource(plain, "aw-stale-" + RESOURCES.incrementAndGet(), CURRENT);
    long before = written();
    Throwable refused;
    boolean fencedBack;
    try (Connection c = FencingTestSupport.fenced(db, mode).getConnection()) {
      List<AutoCloseable> open = new ArrayList<>();
      Array array = way.array(c, open); // made before the token is bound
      Connection back = wayBack(array);
      fencedBack = back instanceof FencedConnection;
      try (FencingScope scope = Fencing.bind(FencingToken.of(resource, STALE))) {
        refused = catchThrowable(() -> writeThrough(back));
      }
      for (AutoCloseable o : open) {
        o.close();
      }
    }
    assertThat(written()).as("%s %s: written by a stale token", way, mode).isEqualTo(before);
    assertThat(fencedBack).as("%s %s: the way back is fenced", way, mode).isTrue();
    assertThat(refused).as("%s %s", way, mode).isInstanceOf(StaleFencingTokenException.class);
    assertThat(rejections(plain, resource, "stale_token")).isEqualTo(1);
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("cases")
  void theCurrentHoldersArrayIsTheDrivers(Way way, PreferQueryMode mode) throws Exception {
    List<String> unfenced;
    try (Connection c =
        FencingTestSupport.plain(
                db,
                ds -> {
                  ds.setPreferQueryMode(mode);
                  return ds;
                })
            .getConnection()) {
      unfenced = seen(c, way);
    }
    String resource = externalResource(plain, "aw-ok-" + RESOURCES.incrementAndGet(), CURRENT);
    long before = written();
    List<String> fenced;
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, CURRENT));
        Connection c = FencingTestSupport.fenced(db, mode).getConnection()) {
      fenced = seen(c, way);
      List<AutoCloseable> open = new ArrayList<>();
      writeThrough(wayBack(way.array(c, open)));
      for (AutoCloseable o : open) {
        o.close();
      }
    }
    assertThat(fenced).as("%s %s", way, mode).isEqualTo(unfenced);
    assertThat(written()).isEqualTo(before + 1);
    assertThat(rejections(plain, resource, "stale_token")).isZero();
  }
}
