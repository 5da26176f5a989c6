package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.MatrixFixture.rows;
import static dev.fencing.jdbc.MatrixFixture.warnings;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.MatrixFixture.EverySetting;
import dev.fencing.jdbc.MatrixFixture.Operation;
import dev.fencing.jdbc.MatrixFixture.PreparedBody;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
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

/**
 * What the caller sees is the same with a token bound through a {@link FencedDataSource} as on an
 * unfenced connection: return values, update counts, result sets and the order of {@code
 * getMoreResults}, batch counts, generated keys, warnings and exceptions, for {@code Statement},
 * {@code PreparedStatement} and {@code CallableStatement}, in autocommit and in a transaction,
 * under every {@code preferQueryMode} and both {@code autosave} settings. Each operation runs on an
 * emptied table and its transcript (what it returned, then the table's rows as committed) is
 * compared.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class InvisibilityMatrixTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;
  private static String resource;

  @BeforeAll
  static void schema() throws SQLException {
    plain = MatrixFixture.matrixTable(db);
    MatrixFixture.createAdd(plain);
    exec(plain, "CREATE VIEW m_hidden AS SELECT m_add(5) AS doubled");
    resource = externalResource(plain, "matrix", 5);
  }

  @EverySetting
  void fencedLooksExactlyLikeUnfenced(boolean autoCommit, PreferQueryMode mode, AutoSave autosave)
      throws Exception {
    PGSimpleDataSource driver = MatrixFixture.driver(db, mode, autosave);
    FencedDataSource fenced = FencedDataSource.wrap(driver);
    SoftAssertions softly = new SoftAssertions();
    for (Map.Entry<String, Operation> op : operations().entrySet()) {
      List<String> unfenced = transcript(driver, autoCommit, op.getValue(), false);
      List<String> seen = transcript(fenced, autoCommit, op.getValue(), true);
      softly.assertThat(seen).as(op.getKey()).isEqualTo(unfenced);
    }
    softly.assertAll();
    assertThat(FencingTestSupport.rejections(plain, resource, "stale_token")).isZero();
  }

  private static List<String> transcript(
      DataSource ds, boolean autoCommit, Operation op, boolean bound) throws SQLException {
    exec(plain, "TRUNCATE m RESTART IDENTITY");
    List<String> seen = new ArrayList<>();
    try (FencingScope scope = bound ? Fencing.bind(FencingToken.of(resource, 5)) : null;
        Connection c = ds.getConnection()) {
      c.setAutoCommit(autoCommit);
      try {
        op.run(c, seen);
      } catch (SQLException e) {
        seen.add("exception " + e.getClass().getSimpleName() + " " + e.getSQLState());
      }
      if (!autoCommit) {
        try {
          c.commit();
        } catch (SQLException e) {
          seen.add("commit failed " + e.getSQLState());
        }
      }
      seen.add("autocommit " + c.getAutoCommit());
    }
    try (Connection c = plain.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT id, v FROM m ORDER BY id")) {
      seen.add("committed " + rows(rs));
    }
    return seen;
  }

  private static Map<String, Operation> operations() {
    Map<String, Operation> ops = new LinkedHashMap<>();
    String insert = "INSERT INTO m (v) VALUES (1)";
    // Statement
    ops.put("Statement.execute write", (c, seen) -> statement(c, seen, s -> s.execute(insert)));
    ops.put(
        "Statement.execute hidden write",
        (c, seen) -> statement(c, seen, s -> s.execute("SELECT * FROM m_hidden")));
    ops.put(
        "Statement.executeQuery",
        (c, seen) -> statement(c, seen, s -> rows(s.executeQuery("SELECT m_add(3), 'x' AS x"))));
    ops.put(
        "Statement.executeUpdate",
        (c, seen) -> statement(c, seen, s -> s.executeUpdate(insert + ", (2), (3)")));
    ops.put(
        "Statement.executeLargeUpdate",
        (c, seen) -> statement(c, seen, s -> s.executeLargeUpdate(insert)));
    ops.put(
        "Statement batch",
        (c, seen) ->
            statement(
                c,
                seen,
                s -> {
                  s.addBatch(insert);
                  s.addBatch("UPDATE m SET v = v + 1");
                  s.addBatch("DELETE FROM m WHERE v > 100");
                  return Arrays.toString(s.executeBatch());
                }));
    ops.put(
        "Statement generated keys",
        (c, seen) ->
            statement(
                c,
                seen,
                s ->
                    s.executeUpdate(insert, Statement.RETURN_GENERATED_KEYS)
                        + " "
                        + rows(s.getGeneratedKeys())));
    ops.put(
        "Statement multiple results",
        (c, seen) ->
            statement(
                c,
                seen,
                s -> {
                  boolean first =
                      s.execute("SELECT 1; " + insert + "; SELECT m_add(4); UPDATE m SET v = v");
                  return first + " " + drain(s);
                }));
    ops.put(
        "Statement exception",
        (c, seen) ->
            statement(
                c,
                seen,
                s -> {
                  s.executeUpdate(insert);
                  return s.executeUpdate("INSERT INTO m (id, v) VALUES (1, 1)");
                }));
    // PreparedStatement
    ops.put(
        "PreparedStatement.execute",
        (c, seen) -> prepared(c, seen, "INSERT INTO m (v) VALUES (?)", ps -> ps.execute()));
    ops.put(
        "PreparedStatement.executeQuery hidden write",
        (c, seen) -> prepared(c, seen, "SELECT m_add(?)", ps -> rows(ps.executeQuery())));
    ops.put(
        "PreparedStatement.executeUpdate",
        (c, seen) -> prepared(c, seen, "INSERT INTO m (v) VALUES (?)", ps -> ps.executeUpdate()));
    ops.put(
        "PreparedStatement.executeLargeUpdate",
        (c, seen) ->
            prepared(c, seen, "INSERT INTO m (v) VALUES (?)", ps -> ps.executeLargeUpdate()));
    ops.put(
        "PreparedStatement batch",
        (c, seen) ->
            prepared(
                c,
                seen,
                "INSERT INTO m (v) VALUES (?)",
                ps -> {
                  ps.addBatch();
                  ps.setInt(1, 8);
                  ps.addBatch();
                  return Arrays.toString(ps.executeBatch());
                }));
    ops.put(
        "PreparedStatement generated keys",
        (c, seen) -> {
          try (PreparedStatement ps =
              c.prepareStatement("INSERT INTO m (v) VALUES (?)", new String[] {"id"})) {
            ps.setInt(1, 6);
            seen.add(ps.executeUpdate() + " " + rows(ps.getGeneratedKeys()));
            warnings(ps, seen);
          }
        });
    ops.put(
        "PreparedStatement multiple results",
        (c, seen) ->
            prepared(
                c,
                seen,
                "SELECT m_add(?); INSERT INTO m (v) VALUES (9); SELECT count(*) FROM m",
                ps -> ps.execute() + " " + drain(ps)));
    ops.put(
        "PreparedStatement exception",
        (c, seen) ->
            prepared(
                c,
                seen,
                "INSERT INTO m (id, v) VALUES (?, 1)",
                ps -> {
                  ps.executeUpdate();
                  return ps.executeUpdate();
                }));
    // CallableStatement
    ops.put(
        "CallableStatement {? = call}",
        (c, seen) -> {
          try (CallableStatement cs = c.prepareCall("{? = call m_add(?)}")) {
            cs.registerOutParameter(1, Types.INTEGER);
            cs.setInt(2, 11);
            seen.add(cs.execute() + " " + cs.getInt(1));
            warnings(cs, seen);
          }
        });
    ops.put(
        "CallableStatement.executeQuery",
        (c, seen) -> {
          try (CallableStatement cs = c.prepareCall("SELECT m_add(?) AS r")) {
            cs.setInt(1, 12);
            seen.add(rows(cs.executeQuery()));
            warnings(cs, seen);
          }
        });
    ops.put(
        "CallableStatement.executeUpdate",
        (c, seen) -> {
          try (CallableStatement cs = c.prepareCall("INSERT INTO m (v) VALUES (?)")) {
            cs.setInt(1, 13);
            seen.add(String.valueOf(cs.executeUpdate()));
            seen.add(String.valueOf(cs.executeLargeUpdate()));
          }
        });
    ops.put(
        "CallableStatement batch",
        (c, seen) -> {
          try (CallableStatement cs = c.prepareCall("INSERT INTO m (v) VALUES (?)")) {
            cs.setInt(1, 14);
            cs.addBatch();
            cs.addBatch();
            seen.add(Arrays.toString(cs.executeBatch()));
          }
        });
    return ops;
  }

  @FunctionalInterface
  interface StatementBody {
    Object run(Statement s) throws SQLException;
  }

  private static void statement(Connection c, List<String> seen, StatementBody body)
      throws SQLException {
    try (Statement s = c.createStatement()) {
      try {
        seen.add(String.valueOf(body.run(s)));
      } finally {
        warnings(s, seen);
      }
    }
  }

  private static void prepared(Connection c, List<String> seen, String sql, PreparedBody body)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setInt(1, 7);
      try {
        seen.add(String.valueOf(body.run(ps)));
      } finally {
        warnings(ps, seen);
      }
    }
  }

  /** The results after the first, in order: result sets' rows and update counts. */
  private static String drain(Statement s) throws SQLException {
    StringBuilder out = new StringBuilder();
    ResultSet rs = s.getResultSet();
    if (rs != null) {
      out.append(rows(rs));
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
        return out.toString();
      }
    }
  }
}
