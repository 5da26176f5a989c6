package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.MatrixFixture.drain;
import static dev.fencing.jdbc.MatrixFixture.exception;
import static dev.fencing.jdbc.MatrixFixture.rows;
import static dev.fencing.jdbc.MatrixFixture.warnings;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.MatrixFixture.Operation;
import dev.fencing.jdbc.MatrixFixture.PreparedBody;
import dev.fencing.testing.RoundTrips;
import dev.fencing.testing.TestDatabaseExtension;
import java.io.StringReader;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.postgresql.PGStatement;
import org.postgresql.ds.PGSimpleDataSource;
import org.postgresql.jdbc.AutoSave;
import org.postgresql.jdbc.PreferQueryMode;

/**
 * {@link InvisibilityMatrixTest} for the executions that carry the check (issue 13): every
 * execution of a {@code PreparedStatement} that may carry it, and the ones that fall back, under
 * every {@code preferQueryMode}, both {@code autosave} settings, in autocommit and in a
 * transaction. What the caller sees (return values, update counts, result sets, {@code
 * getMoreResults}, {@code getStatement()}, warnings, exceptions with their messages, the rows
 * committed) is the same as unfenced; and the round trips prove the check was carried: as many as
 * unfenced (one more for a fallback), in autocommit too except with {@code preferQueryMode=simple}
 * (one more: the COMMIT of the transaction block the check and the statement run in).
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class CarriedCheckMatrixTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;
  private static String resource;

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    exec(plain, "CREATE TABLE m (id serial PRIMARY KEY, v int NOT NULL)");
    exec(
        plain,
        "CREATE FUNCTION m_add(p int) RETURNS int LANGUAGE plpgsql AS"
            + " 'BEGIN INSERT INTO m (v) VALUES (p); RAISE WARNING ''added %'', p; RETURN p * 2; END'");
    resource = externalResource(plain, "carried-matrix", 5);
  }

  /**
   * An operation, and the round trips it takes fenced beyond unfenced: in a transaction, in
   * autocommit.
   */
  record Case(Operation op, int extraInTransaction, int extraInAutocommit, boolean carried) {
    Case(Operation op, int extraInTransaction, int extraInAutocommit) {
      this(op, extraInTransaction, extraInAutocommit, false);
    }
  }

  private static final int UNCOUNTED = -1;

  static Stream<Arguments> settings() {
    return MatrixFixture.settings();
  }

  @ParameterizedTest(name = "autocommit={0} {1} autosave={2}")
  @MethodSource("settings")
  void carriedLooksExactlyLikeUnfenced(boolean autoCommit, PreferQueryMode mode, AutoSave autosave)
      throws Exception {
    PGSimpleDataSource driver = MatrixFixture.driver(db, mode, autosave);
    FencedDataSource fenced = FencedDataSource.wrap(driver);
    SoftAssertions softly = new SoftAssertions();
    try (RoundTrips trips = new RoundTrips()) {
      for (Map.Entry<String, Case> op : cases().entrySet()) {
        List<String> unfenced = transcript(driver, autoCommit, op.getValue().op(), false, trips);
        List<String> seen = transcript(fenced, autoCommit, op.getValue().op(), true, trips);
        softly
            .assertThat(seen.subList(1, seen.size()))
            .as(op.getKey())
            .isEqualTo(unfenced.subList(1, unfenced.size()));
        // in autocommit, a carried execution is one implicit transaction (extended protocol)
        int extra =
            !autoCommit
                ? op.getValue().extraInTransaction()
                : op.getValue().carried() && mode != PreferQueryMode.SIMPLE
                    ? 0
                    : op.getValue().extraInAutocommit();
        if (extra != UNCOUNTED) {
          softly
              .assertThat(Integer.parseInt(seen.get(0)))
              .as("round trips of %s", op.getKey())
              .isEqualTo(Integer.parseInt(unfenced.get(0)) + extra);
        }
      }
    }
    softly.assertAll();
    assertThat(FencingTestSupport.rejections(plain, resource, "stale_token")).isZero();
  }

  /** The round trips, then what the operation returned, then the rows committed. */
  private static List<String> transcript(
      DataSource ds, boolean autoCommit, Operation op, boolean bound, RoundTrips trips)
      throws SQLException {
    return MatrixFixture.transcript(plain, "m", resource, ds, autoCommit, op, bound, trips);
  }

  private static Map<String, Case> cases() {
    Map<String, Case> ops = new LinkedHashMap<>();
    String insert = "INSERT INTO m (v) VALUES (?)";
    ops.put("execute", carried(insert, ps -> ps.execute() + " " + drain(ps)));
    ops.put(
        "execute of a query that writes",
        carried(
            "SELECT m_add(?) AS r",
            ps -> ps.execute() + " " + (ps.getResultSet().getStatement() == ps) + " " + drain(ps)));
    ops.put("executeQuery", carried("SELECT m_add(?) AS r", ps -> rows(ps.executeQuery())));
    ops.put(
        "executeQuery RETURNING",
        carried(
            "INSERT INTO m (v) VALUES (?), (8) RETURNING id, v",
            ps -> {
              ResultSet rs = ps.executeQuery();
              return (rs.getStatement() == ps) + " " + rows(rs) + " " + drain(ps);
            }));
    ops.put("executeQuery without rows", carried(insert, ps -> rows(ps.executeQuery())));
    ops.put("executeUpdate", carried(insert, ps -> ps.executeUpdate() + " " + drain(ps)));
    ops.put(
        "executeUpdate of nothing",
        carried("UPDATE m SET v = ? WHERE id < 0", ps -> ps.executeUpdate() + " " + drain(ps)));
    ops.put(
        "executeUpdate of a query",
        carried("SELECT m_add(g) FROM generate_series(1, ?) g", ps -> ps.executeUpdate()));
    ops.put(
        "executeUpdate RETURNING",
        carried("INSERT INTO m (v) VALUES (?) RETURNING v", ps -> ps.executeUpdate()));
    ops.put(
        "executeLargeUpdate",
        carried(
            "INSERT INTO m (v) SELECT generate_series(1, ?)",
            ps -> ps.executeLargeUpdate() + " " + drain(ps)));
    ops.put("trailing semicolon", carried(insert + ";", ps -> ps.executeUpdate()));
    ops.put(
        "parameter types, executed twice",
        new Case(
            (c, seen) -> {
              try (PreparedStatement ps =
                  c.prepareStatement(
                      "INSERT INTO m (v) VALUES (coalesce(?::int, 0) + length(?) + octet_length(?)"
                          + " + extract(day from ?::timestamp)::int + ?)")) {
                ps.setNull(1, Types.INTEGER);
                ps.setString(2, "abc");
                byte[] bytes = {1, 2};
                ps.setBytes(3, bytes);
                bytes[0] = 9; // the driver copied them
                ps.setTimestamp(4, Timestamp.valueOf("2026-01-03 10:00:00"));
                ps.setObject(5, 100, Types.INTEGER);
                seen.add(String.valueOf(ps.executeUpdate()));
                ps.setObject(1, 1000);
                seen.add(String.valueOf(ps.executeUpdate()));
                warnings(ps, seen);
              }
            },
            0,
            2,
            true));
    ops.put(
        "parameters cleared",
        new Case(
            (c, seen) -> {
              try (PreparedStatement ps = c.prepareStatement(insert)) {
                ps.setInt(1, 3);
                ps.clearParameters();
                seen.add(String.valueOf(ps.executeUpdate()));
              }
            },
            // the driver refuses before sending anything: then the check of its own, and the
            // commit checks (or the wrapper's rollback)
            2,
            2));
    ops.put(
        "maxRows",
        carried(
            "INSERT INTO m (v) SELECT generate_series(1, ?) RETURNING v",
            ps -> {
              ps.setMaxRows(2);
              return rows(ps.executeQuery());
            }));
    ops.put(
        "exception, then the same statement again",
        new Case(
            (c, seen) -> {
              try (PreparedStatement ps =
                  c.prepareStatement("INSERT INTO m (id, v) VALUES (?, 1)")) {
                ps.setInt(1, 1);
                seen.add(String.valueOf(ps.executeUpdate()));
                try {
                  ps.executeUpdate();
                } catch (SQLException e) {
                  seen.add(exception(e));
                }
                warnings(ps, seen);
                ps.setInt(1, 2);
                seen.add(String.valueOf(ps.executeUpdate()));
              }
            },
            0,
            UNCOUNTED)); // autocommit: the rollbacks after the error depend on autosave
    ops.put(
        "an error with its position in the statement",
        new Case(
            (c, seen) -> {
              try (PreparedStatement ps =
                  c.prepareStatement("INSERT INTO m (v) VALUES (? + no_such_column)")) {
                ps.setInt(1, 7);
                seen.add(String.valueOf(ps.executeUpdate()));
              }
            },
            0,
            UNCOUNTED, // autocommit: the rollbacks after the error depend on autosave
            true));
    ops.put(
        "an earlier result set is closed by the next execution",
        new Case(
            (c, seen) -> {
              try (PreparedStatement ps = c.prepareStatement("SELECT m_add(?) AS r")) {
                ps.setInt(1, 1);
                ResultSet first = ps.executeQuery();
                ResultSet second = ps.executeQuery();
                seen.add(first.isClosed() + " " + rows(second));
              }
            },
            0,
            2,
            true));
    // falling back to the check of its own
    ops.put(
        "reader parameter (not carried)",
        new Case(
            (c, seen) -> {
              try (PreparedStatement ps = c.prepareStatement("INSERT INTO m (v) VALUES (?::int)")) {
                ps.setCharacterStream(1, new StringReader("12"), 2);
                seen.add(String.valueOf(ps.executeUpdate()));
              }
            },
            1,
            2));
    ops.put(
        "fetch size (not carried)",
        new Case(
            (c, seen) -> {
              try (PreparedStatement ps = c.prepareStatement("SELECT m_add(?) AS r")) {
                ps.setFetchSize(10);
                ps.setInt(1, 4);
                seen.add(rows(ps.executeQuery()));
              }
            },
            1,
            2));
    ops.put(
        "unwrapped to the driver's statement (not carried)",
        new Case(
            (c, seen) -> {
              try (PreparedStatement ps = c.prepareStatement(insert)) {
                ps.setInt(1, 3);
                // the driver's statement, its parameter set behind the wrapper's recording
                ((PreparedStatement) ps.unwrap(PGStatement.class)).setInt(1, 4);
                seen.add(String.valueOf(ps.executeUpdate()));
              }
            },
            1,
            2));
    ops.put(
        "two statements (not carried)",
        new Case(
            (c, seen) -> {
              try (PreparedStatement ps = c.prepareStatement(insert + "; SELECT 1")) {
                ps.setInt(1, 4);
                seen.add(ps.execute() + " " + drain(ps));
              }
            },
            1,
            2));
    return ops;
  }

  /** A statement of {@code sql}, parameter 1 set to 7, run once by {@code body}: carried. */
  private static Case carried(String sql, PreparedBody body) {
    return new Case(
        (c, seen) -> {
          try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setInt(1, 7);
            try {
              seen.add(String.valueOf(body.run(ps)));
            } finally {
              warnings(ps, seen);
            }
          }
        },
        0,
        1,
        true);
  }
}
