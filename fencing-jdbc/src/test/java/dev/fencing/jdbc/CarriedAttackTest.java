package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.MatrixFixture.drain;
import static dev.fencing.jdbc.MatrixFixture.exception;
import static dev.fencing.jdbc.MatrixFixture.rows;
import static dev.fencing.jdbc.MatrixFixture.warnings;

import dev.fencing.jdbc.MatrixFixture.EverySetting;
import dev.fencing.jdbc.MatrixFixture.Operation;
import dev.fencing.testing.RoundTrips;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.BatchUpdateException;
import java.sql.ParameterMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.sql.Types;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;
import org.postgresql.jdbc.AutoSave;
import org.postgresql.jdbc.PreferQueryMode;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/**
 * What {@link CarriedCheckMatrixTest} leaves out, fenced against unfenced in every setting of the
 * matrices: notices and warnings of the caller's statement (their order, {@code clearWarnings}),
 * the connection's warnings from a deferred trigger at {@code commit()} (which may carry the
 * check), a deferred trigger's exception at commit, metadata before and after execution, repeated
 * {@code getResultSet}/{@code getUpdateCount}/{@code getLargeUpdateCount}, the same result set
 * object each time it is asked for, error positions of syntax errors, {@code setNull} with types,
 * max rows and field size, escape processing, a batch's second of three entries failing, and a
 * statement's state after an error.
 */
class CarriedAttackTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;
  private static String resource;

  @BeforeAll
  static void schema() throws SQLException {
    plain = MatrixFixture.matrixTable(db);
    exec(
        plain,
        "CREATE FUNCTION m_notes(p int) RETURNS int LANGUAGE plpgsql AS"
            + " 'BEGIN INSERT INTO m (v) VALUES (p); RAISE NOTICE ''one %'', p;"
            + " RAISE WARNING ''two %'', p; RAISE NOTICE ''three''; RETURN p * 2; END'");
    exec(
        plain,
        "CREATE FUNCTION m_late() RETURNS trigger LANGUAGE plpgsql AS"
            + " 'BEGIN RAISE WARNING ''at commit %'', NEW.v; IF NEW.v = 666 THEN"
            + " RAISE EXCEPTION ''late refusal'' USING ERRCODE = ''23514''; END IF;"
            + " RETURN NULL; END'");
    exec(
        plain,
        "CREATE CONSTRAINT TRIGGER m_late AFTER INSERT ON m DEFERRABLE INITIALLY DEFERRED"
            + " FOR EACH ROW EXECUTE FUNCTION m_late()");
    resource = externalResource(plain, "carried-attack", 5);
  }

  @EverySetting
  void looksExactlyLikeUnfenced(boolean autoCommit, PreferQueryMode mode, AutoSave autosave)
      throws Exception {
    PGSimpleDataSource driver = MatrixFixture.driver(db, mode, autosave);
    FencedDataSource fenced = FencedDataSource.wrap(driver);
    SoftAssertions softly = new SoftAssertions();
    try (RoundTrips trips = new RoundTrips()) {
      for (Map.Entry<String, Operation> op : cases(mode, autoCommit).entrySet()) {
        List<String> unfenced =
            MatrixFixture.transcript(
                plain,
                "m",
                resource,
                driver,
                autoCommit,
                withWarnings(op.getValue()),
                false,
                trips);
        List<String> seen =
            MatrixFixture.transcript(
                plain, "m", resource, fenced, autoCommit, withWarnings(op.getValue()), true, trips);
        softly
            .assertThat(seen.subList(1, seen.size()))
            .as(op.getKey())
            .isEqualTo(unfenced.subList(1, unfenced.size()));
      }
    }
    softly.assertAll();
  }

  /** The op, then the connection's warnings (after commit in the transcript: read here too). */
  private static Operation withWarnings(Operation op) {
    return (c, seen) -> {
      try {
        op.run(c, seen);
      } finally {
        if (!c.getAutoCommit()) {
          try {
            c.commit();
            seen.add("committed");
          } catch (SQLException e) {
            seen.add("commit " + exception(e));
          }
        }
        for (SQLWarning w = c.getWarnings(); w != null; w = w.getNextWarning()) {
          seen.add("connection warning " + w.getSQLState() + " " + w.getMessage());
        }
        c.clearWarnings();
      }
    };
  }

  private static String position(SQLException e) {
    ServerErrorMessage m = e instanceof PSQLException p ? p.getServerErrorMessage() : null;
    return m == null
        ? "no server message"
        : "position "
            + m.getPosition()
            + " internal "
            + m.getInternalPosition()
            + " "
            + m.getInternalQuery()
            + " where "
            + m.getWhere();
  }

  @FunctionalInterface
  interface Body {
    Object run(PreparedStatement ps) throws SQLException;
  }

  @FunctionalInterface
  interface PlainBody {
    Object run(Statement s) throws SQLException;
  }

  private static Operation prepared(String sql, Body body) {
    return (c, seen) -> {
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        try {
          seen.add(String.valueOf(body.run(ps)));
        } catch (SQLException e) {
          seen.add(exception(e) + " " + position(e));
        } finally {
          warnings(ps, seen);
          seen.add("closed " + ps.isClosed() + " same connection " + (ps.getConnection() == c));
        }
      }
    };
  }

  private static Operation plainStatement(PlainBody body) {
    return (c, seen) -> {
      try (Statement s = c.createStatement()) {
        try {
          seen.add(String.valueOf(body.run(s)));
        } catch (SQLException e) {
          seen.add(exception(e) + " " + position(e));
        } finally {
          warnings(s, seen);
          seen.add("closed " + s.isClosed() + " same connection " + (s.getConnection() == c));
        }
      }
    };
  }

  private static String meta(ResultSetMetaData md) throws SQLException {
    if (md == null) {
      return "no metadata";
    }
    StringBuilder out = new StringBuilder("columns " + md.getColumnCount());
    for (int i = 1; i <= md.getColumnCount(); i++) {
      out.append(" ").append(md.getColumnLabel(i)).append(":").append(md.getColumnTypeName(i));
    }
    return out.toString();
  }

  private static String params(ParameterMetaData md) throws SQLException {
    StringBuilder out = new StringBuilder("parameters " + md.getParameterCount());
    for (int i = 1; i <= md.getParameterCount(); i++) {
      out.append(" ").append(md.getParameterTypeName(i)).append("/").append(md.getParameterMode(i));
    }
    return out.toString();
  }

  private static Map<String, Operation> cases(PreferQueryMode mode, boolean autoCommit) {
    // pgjdbc cannot describe under simple (an AssertionError with assertions on): not before
    boolean describes = mode != PreferQueryMode.SIMPLE;
    Map<String, Operation> ops = new LinkedHashMap<>();
    String insert = "INSERT INTO m (v) VALUES (?)";
    ops.put(
        "notices of a function, in order",
        prepared(
            "SELECT m_notes(?) AS r",
            ps -> {
              ps.setInt(1, 4);
              return rows(ps.executeQuery());
            }));
    ops.put(
        "notices of a function, execute",
        prepared(
            "SELECT m_notes(?) AS r",
            ps -> {
              ps.setInt(1, 4);
              return ps.execute() + " " + drain(ps);
            }));
    ops.put(
        "clearWarnings after a carried execution",
        prepared(
            "SELECT m_notes(?) AS r",
            ps -> {
              ps.setInt(1, 4);
              String r = rows(ps.executeQuery());
              ps.clearWarnings();
              return r + " " + ps.getWarnings();
            }));
    ops.put(
        "warnings of two executions",
        prepared(
            "SELECT m_notes(?) AS r",
            ps -> {
              ps.setInt(1, 4);
              String r = rows(ps.executeQuery());
              ps.setInt(1, 5);
              return r + rows(ps.executeQuery());
            }));
    ops.put(
        "Statement notices", plainStatement(s -> rows(s.executeQuery("SELECT m_notes(6) AS r"))));
    ops.put(
        "Statement notices, clearWarnings",
        plainStatement(
            s -> {
              String r = s.execute("SELECT m_notes(6) AS r") + drain(s);
              s.clearWarnings();
              return r + " " + s.getWarnings();
            }));
    ops.put(
        "deferred trigger warning at commit",
        prepared(
            insert,
            ps -> {
              ps.setInt(1, 3);
              return ps.executeUpdate();
            }));
    ops.put(
        "deferred trigger exception at commit",
        prepared(
            insert,
            ps -> {
              ps.setInt(1, 666);
              return ps.executeUpdate();
            }));
    ops.put(
        "Statement deferred trigger exception at commit",
        plainStatement(s -> s.executeUpdate("INSERT INTO m (v) VALUES (666)")));
    if (describes) {
      ops.put(
          "metadata before execution",
          prepared(
              "SELECT m_notes(?) AS r, ?::text AS t",
              ps -> {
                String r = meta(ps.getMetaData()) + " " + params(ps.getParameterMetaData());
                ps.setInt(1, 1);
                ps.setString(2, "x");
                r += " " + rows(ps.executeQuery());
                return r + " " + meta(ps.getMetaData()) + " " + params(ps.getParameterMetaData());
              }));
      ops.put(
          "metadata of an insert",
          prepared(
              "INSERT INTO m (v) VALUES (?) RETURNING id",
              ps -> {
                String r = meta(ps.getMetaData()) + " " + params(ps.getParameterMetaData());
                ps.setInt(1, 1);
                r += " " + ps.executeUpdate();
                return r + " " + meta(ps.getMetaData()) + " " + params(ps.getParameterMetaData());
              }));
    }
    ops.put(
        "getResultSet and counts repeated",
        prepared(
            "INSERT INTO m (v) VALUES (?) RETURNING id",
            ps -> {
              ps.setInt(1, 1);
              boolean b = ps.execute();
              ResultSet a = ps.getResultSet();
              ResultSet again = ps.getResultSet();
              String r =
                  b
                      + " "
                      + (a == again)
                      + " "
                      + ps.getUpdateCount()
                      + " "
                      + ps.getLargeUpdateCount()
                      + " "
                      + rows(a);
              r +=
                  " "
                      + ps.getMoreResults(Statement.KEEP_CURRENT_RESULT)
                      + " "
                      + a.isClosed()
                      + " "
                      + ps.getUpdateCount()
                      + " "
                      + ps.getLargeUpdateCount();
              r += " " + ps.getMoreResults() + " " + ps.getUpdateCount() + " " + ps.getResultSet();
              return r;
            }));
    ops.put(
        "executeUpdate then counts",
        prepared(
            insert,
            ps -> {
              ps.setInt(1, 1);
              int n = ps.executeUpdate();
              return n
                  + " "
                  + ps.getUpdateCount()
                  + " "
                  + ps.getLargeUpdateCount()
                  + " "
                  + ps.getResultSet()
                  + " "
                  + ps.getMoreResults()
                  + " "
                  + ps.getUpdateCount();
            }));
    ops.put(
        "a syntax error's position",
        prepared(
            "INSERT INTO m (v) VALUES (?) ORDER",
            ps -> {
              ps.setInt(1, 1);
              return ps.executeUpdate();
            }));
    ops.put(
        "a syntax error's position in a read",
        prepared(
            "SELECT ? FROM FROM m",
            ps -> {
              ps.setInt(1, 1);
              return rows(ps.executeQuery());
            }));
    ops.put(
        "an error's position in a read",
        prepared(
            "SELECT ?::int + nope FROM m",
            ps -> {
              ps.setInt(1, 1);
              return rows(ps.executeQuery());
            }));
    ops.put(
        "an error's internal position",
        prepared(
            "SELECT m_bad(?)",
            ps -> {
              ps.setInt(1, 1);
              return rows(ps.executeQuery());
            }));
    ops.put(
        "Statement syntax error's position",
        plainStatement(s -> s.executeUpdate("INSERT INTO m (v) VALUES (1) ORDER")));
    ops.put(
        "Statement read syntax error's position",
        plainStatement(s -> rows(s.executeQuery("SELECT 1 FROM FROM m"))));
    ops.put(
        "setNull with types",
        prepared(
            "INSERT INTO m (v) SELECT coalesce(?::int, 3) + coalesce(?, 4) RETURNING v",
            ps -> {
              ps.setNull(1, Types.INTEGER);
              ps.setNull(2, Types.INTEGER, "int4");
              String r = rows(ps.executeQuery());
              ps.clearParameters();
              ps.setObject(1, "5", Types.INTEGER);
              ps.setObject(2, 6, Types.BIGINT);
              return r + rows(ps.executeQuery());
            }));
    ops.put(
        "maxRows and largeMaxRows",
        prepared(
            "INSERT INTO m (v) SELECT generate_series(1, ?) RETURNING v",
            ps -> {
              ps.setInt(1, 5);
              ps.setLargeMaxRows(2);
              String r = rows(ps.executeQuery()) + " " + ps.getLargeMaxRows();
              ps.setMaxRows(0);
              return r + rows(ps.executeQuery());
            }));
    ops.put(
        "maxFieldSize",
        prepared(
            "INSERT INTO m (v) VALUES (?) RETURNING 'abcdefghijklmnop'::varchar AS t",
            ps -> {
              ps.setInt(1, 1);
              ps.setMaxFieldSize(3);
              return rows(ps.executeQuery());
            }));
    ops.put(
        "resultset getStatement identity and type",
        prepared(
            "INSERT INTO m (v) VALUES (?) RETURNING id",
            ps -> {
              ps.setInt(1, 1);
              ResultSet rs = ps.executeQuery();
              return (rs.getStatement() == ps)
                  + " "
                  + (rs == ps.getResultSet())
                  + " "
                  + rs.getType()
                  + " "
                  + rs.getConcurrency()
                  + " "
                  + rs.getHoldability()
                  + " "
                  + rs.getFetchSize()
                  + " "
                  + rs.getFetchDirection();
            }));
    ops.put(
        "Statement escape processing off",
        plainStatement(
            s -> {
              s.setEscapeProcessing(false);
              return s.executeUpdate("INSERT INTO m (v) VALUES ({fn abs(-3)})");
            }));
    ops.put(
        "Statement escape processing on",
        plainStatement(s -> s.executeUpdate("INSERT INTO m (v) VALUES ({fn abs(-3)})")));
    ops.put(
        "Prepared escape processing",
        prepared(
            "INSERT INTO m (v) VALUES ({fn abs(?)})",
            ps -> {
              ps.setInt(1, -4);
              ps.setEscapeProcessing(false);
              return ps.executeUpdate();
            }));
    ops.put(
        "Prepared escape processing read",
        prepared(
            "SELECT {fn abs(?)} AS a",
            ps -> {
              ps.setInt(1, -4);
              ps.setEscapeProcessing(false);
              return rows(ps.executeQuery());
            }));
    ops.put(
        "Statement read escape processing off",
        plainStatement(
            s -> {
              s.setEscapeProcessing(false);
              return rows(s.executeQuery("SELECT {fn abs(-3)} AS a"));
            }));
    ops.put(
        "Statement generated keys and result set, each the same object",
        plainStatement(
            s -> {
              s.executeUpdate("INSERT INTO m (v) VALUES (1)", Statement.RETURN_GENERATED_KEYS);
              ResultSet keys = s.getGeneratedKeys();
              String r = (keys == s.getGeneratedKeys()) + " " + rows(keys);
              ResultSet rs = s.executeQuery("SELECT 1 AS one");
              return r + " " + (rs == s.getResultSet()) + " " + (rs.getStatement() == s);
            }));
    // autocommit under simple: fenced, a batch is all or nothing (README, CarriedCheckMatrixTest)
    ops.put(
        "batch 2nd of 3 fails",
        prepared(
            "INSERT INTO m (id, v) VALUES (?, 1)",
            ps -> {
              ps.setInt(1, 1);
              ps.addBatch();
              ps.addBatch();
              ps.setInt(1, 3);
              ps.addBatch();
              try {
                return Arrays.toString(ps.executeLargeBatch());
              } catch (BatchUpdateException e) {
                return "batch "
                    + e.getSQLState()
                    + Arrays.toString(e.getUpdateCounts())
                    + Arrays.toString(e.getLargeUpdateCounts())
                    + " "
                    + e.getMessage();
              }
            }));
    ops.put(
        "after an error, the statement's state",
        prepared(
            insert,
            ps -> {
              ps.setInt(1, 1);
              try {
                ps.setInt(1, 2);
                ps.executeQuery();
              } catch (SQLException e) {
                return exception(e)
                    + " "
                    + ps.getUpdateCount()
                    + " "
                    + ps.getResultSet()
                    + " "
                    + ps.isClosed()
                    + " "
                    + ps.getMoreResults();
              }
              return "no error";
            }));
    ops.put(
        "Statement after an error",
        plainStatement(
            s -> {
              s.executeUpdate("INSERT INTO m (v) VALUES (1)");
              try {
                s.executeQuery("INSERT INTO m (v) VALUES (2)");
              } catch (SQLException e) {
                return exception(e)
                    + " "
                    + s.getUpdateCount()
                    + " "
                    + s.getResultSet()
                    + " "
                    + s.isClosed()
                    + " "
                    + s.getMoreResults();
              }
              return "no error";
            }));
    if (autoCommit && mode == PreferQueryMode.SIMPLE) {
      ops.remove("batch 2nd of 3 fails");
    }
    return ops;
  }
}
