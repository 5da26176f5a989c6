package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.MatrixFixture.drain;
import static dev.fencing.jdbc.MatrixFixture.exception;
import static dev.fencing.jdbc.MatrixFixture.rows;
import static dev.fencing.jdbc.MatrixFixture.warnings;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.MatrixFixture.EverySetting;
import dev.fencing.jdbc.MatrixFixture.Operation;
import dev.fencing.jdbc.MatrixFixture.PreparedBody;
import dev.fencing.testing.RoundTrips;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
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
 * {@link CarriedCheckMatrixTest} for statements prepared for generated keys ({@link CarriedKeys}):
 * {@code RETURN_GENERATED_KEYS}, column names and column indexes, each execution, under every
 * {@code preferQueryMode}, both {@code autosave} settings, in autocommit and in a transaction. What
 * the caller sees (return values, update counts, {@code getGeneratedKeys()} with its columns'
 * labels and types, {@code getMoreResults}, warnings, exceptions, the rows committed) is the same
 * as unfenced; the round trips show which executions carried the check and which fell back.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class CarriedKeysMatrixTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;
  private static String resource;

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    exec(
        plain,
        "CREATE TABLE k (id bigserial PRIMARY KEY, v int NOT NULL, at timestamptz DEFAULT"
            + " '2026-01-01T00:00:00Z', \"Mixed\" text DEFAULT 'm')");
    exec(
        plain,
        "CREATE FUNCTION k_warn() RETURNS trigger LANGUAGE plpgsql AS"
            + " 'BEGIN RAISE WARNING ''row %'', NEW.v; RETURN NEW; END'");
    exec(plain, "CREATE TRIGGER k_warn BEFORE INSERT ON k FOR EACH ROW EXECUTE FUNCTION k_warn()");
    exec(
        plain,
        "CREATE FUNCTION k_add(p int) RETURNS int LANGUAGE plpgsql AS"
            + " 'BEGIN INSERT INTO k (v) VALUES (p); RETURN p * 2; END'");
    resource = externalResource(plain, "carried-keys", 5);
  }

  /** How a statement is prepared. */
  @FunctionalInterface
  interface Preparation {
    PreparedStatement prepare(Connection c, String sql) throws SQLException;
  }

  /**
   * An operation, whether it carries the check (else the check runs alone), and how many writes it
   * executes: in autocommit each is a transaction of its own, and with {@code
   * preferQueryMode=simple} a carried one costs the COMMIT of its transaction block ({@link
   * #UNCOUNTED}: depends on the rollbacks after an error).
   */
  record Case(Operation op, boolean carried, int writes) {
    Case(Operation op, boolean carried) {
      this(op, carried, 1);
    }
  }

  private static final int UNCOUNTED = -1;

  @EverySetting
  void generatedKeysLookExactlyLikeUnfenced(
      boolean autoCommit, PreferQueryMode mode, AutoSave autosave) throws Exception {
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
        // carried: as unfenced (in autocommit with the simple protocol, the COMMIT of the block);
        // not carried: the check's own round trip (in autocommit, and the check-and-COMMIT)
        boolean simpleAutocommit = autoCommit && mode == PreferQueryMode.SIMPLE;
        int extra =
            op.getValue().carried()
                ? simpleAutocommit ? op.getValue().writes() : 0
                : autoCommit ? 2 : 1;
        if (extra == UNCOUNTED) {
          continue;
        }
        softly
            .assertThat(Integer.parseInt(seen.get(0)))
            .as("round trips of %s", op.getKey())
            .isEqualTo(Integer.parseInt(unfenced.get(0)) + extra);
      }
    }
    softly.assertAll();
    assertThat(FencingTestSupport.rejections(plain, resource, "stale_token")).isZero();
  }

  @EverySetting
  void aZombieIsRefusedByTheCarriedCheckAndNothingIsWritten(
      boolean autoCommit, PreferQueryMode mode, AutoSave autosave) throws Exception {
    String zombie =
        externalResource(plain, "carried-keys-zombie-" + autoCommit + mode + autosave, 6);
    PGSimpleDataSource driver = MatrixFixture.driver(db, mode, autosave);
    exec(plain, "TRUNCATE k RESTART IDENTITY");
    try (FencingScope scope = Fencing.bind(FencingToken.of(zombie, 5));
        Connection c = FencedDataSource.wrap(driver).getConnection();
        RoundTrips trips = new RoundTrips();
        PreparedStatement ps = c.prepareStatement(INSERT, Statement.RETURN_GENERATED_KEYS)) {
      c.setAutoCommit(autoCommit);
      ps.setInt(1, 7);
      trips.reset();
      MatrixFixture.assertRefusedAsStale(ps::executeUpdate);
      assertThat(trips.sent())
          .as("the write was sent with its check")
          .anyMatch(m -> m.contains("INSERT INTO k") && m.contains("RETURNING"));
      assertThat(c.getAutoCommit()).isEqualTo(autoCommit);
    }
    MatrixFixture.assertNothingWrittenAndRefusalRecorded(plain, zombie, "SELECT count(*) FROM k");
  }

  /** The round trips, then what the operation returned, then the rows committed. */
  private static List<String> transcript(
      DataSource ds, boolean autoCommit, Operation op, boolean bound, RoundTrips trips)
      throws SQLException {
    return MatrixFixture.transcript(plain, "k", resource, ds, autoCommit, op, bound, trips);
  }

  private static final String INSERT = "INSERT INTO k (v) VALUES (?)";

  private static Map<String, Preparation> preparations() {
    Map<String, Preparation> p = new LinkedHashMap<>();
    p.put(
        "RETURN_GENERATED_KEYS",
        (c, sql) -> c.prepareStatement(sql, Statement.RETURN_GENERATED_KEYS));
    p.put("names {id}", (c, sql) -> c.prepareStatement(sql, new String[] {"id"}));
    p.put(
        "names {v, Mixed, id}",
        (c, sql) -> c.prepareStatement(sql, new String[] {"v", "Mixed", "id"}));
    return p;
  }

  private static Map<String, Case> cases() {
    Map<String, Case> ops = new LinkedHashMap<>();
    for (Map.Entry<String, Preparation> p : preparations().entrySet()) {
      Preparation prep = p.getValue();
      String how = " (" + p.getKey() + ")";
      ops.put(
          "executeUpdate" + how,
          carried(prep, INSERT, ps -> ps.executeUpdate() + " " + keys(ps) + " " + drain(ps)));
      ops.put(
          "execute" + how,
          carried(
              prep,
              INSERT,
              ps -> {
                boolean isResultSet = ps.execute();
                ResultSet keys = ps.getGeneratedKeys();
                String before = described(keys, ps);
                // the driver closes the keys when getMoreResults closes the processed results
                String after = drain(ps) + " keys closed " + keys.isClosed();
                return isResultSet + " " + before + " " + after;
              }));
      ops.put(
          "execute, getMoreResults keeping the current result" + how,
          carried(
              prep,
              INSERT,
              ps -> {
                boolean isResultSet = ps.execute();
                ResultSet keys = ps.getGeneratedKeys();
                boolean more = ps.getMoreResults(Statement.KEEP_CURRENT_RESULT);
                return isResultSet + " " + more + " " + keys.isClosed() + " " + described(keys, ps);
              }));
      ops.put(
          "executeQuery (the driver refuses it, after it ran)" + how,
          carried(
              prep,
              INSERT,
              ps -> {
                try {
                  return rows(ps.executeQuery());
                } catch (SQLException e) {
                  return exception(e) + " " + keys(ps);
                }
              }));
      ops.put(
          "executeLargeUpdate of several rows" + how,
          carried(
              prep,
              "INSERT INTO k (v) SELECT generate_series(1, ?)",
              ps -> ps.executeLargeUpdate() + " " + keys(ps) + " " + drain(ps)));
      ops.put(
          "UPDATE of nothing" + how,
          carried(
              prep,
              "UPDATE k SET v = ? WHERE id < 0",
              ps -> ps.executeUpdate() + " " + keys(ps) + " " + drain(ps)));
      ops.put(
          "DELETE" + how,
          carried(
              prep,
              "DELETE FROM k WHERE v = ?",
              ps -> {
                try (PreparedStatement insert = ps.getConnection().prepareStatement(INSERT)) {
                  insert.setInt(1, 7);
                  insert.executeUpdate();
                }
                return ps.executeUpdate() + " " + keys(ps);
              },
              1)); // simple, autocommit: the plain INSERT one query message (CarriedSimple)
      ops.put(
          "WITH ... INSERT, a comment at the end" + how,
          carried(
              prep,
              "WITH s AS (SELECT ?::int AS v) INSERT INTO k (v) SELECT v FROM s -- the end;",
              ps -> ps.executeUpdate() + " " + keys(ps)));
      ops.put(
          "trailing semicolons" + how,
          carried(prep, INSERT + " ; ;", ps -> ps.executeUpdate() + " " + keys(ps)));
      ops.put(
          "executed twice, the first keys closed" + how,
          carried(
              prep,
              INSERT,
              ps -> {
                ps.executeUpdate();
                ResultSet first = ps.getGeneratedKeys();
                ps.setInt(1, 8);
                int count = ps.executeUpdate();
                return first.isClosed() + " " + count + " " + keys(ps);
              },
              2));
      ops.put(
          "exception, then the same statement again" + how,
          carried(
              prep,
              "INSERT INTO k (id, v) VALUES (?, 1)",
              ps -> {
                ps.setInt(1, 1);
                List<String> out = new ArrayList<>();
                out.add(ps.executeUpdate() + " " + keys(ps));
                try {
                  ps.executeUpdate();
                } catch (SQLException e) {
                  out.add(exception(e) + " " + keys(ps));
                }
                ps.setInt(1, 2);
                out.add(ps.executeUpdate() + " " + keys(ps));
                return out;
              },
              UNCOUNTED));
      ops.put(
          "an error with its position in the statement" + how,
          carried(
              prep,
              "INSERT INTO k (v) VALUES (? + no_such_column)",
              ps -> ps.executeUpdate() + " " + keys(ps),
              UNCOUNTED));
      // falling back to the check of its own
      ops.put(
          "RETURNING already there (not carried)" + how,
          new Case(
              body(
                  prep,
                  "INSERT INTO k (v) VALUES (?) RETURNING v * 10 AS ten",
                  ps -> ps.executeUpdate() + " " + keys(ps)),
              false));
      ops.put(
          "a query (not carried)" + how,
          new Case(
              body(
                  prep,
                  "SELECT k_add(?) AS r",
                  ps -> ps.execute() + " " + drain(ps) + " " + keys(ps)),
              false));
      ops.put(
          "MERGE (not carried)" + how,
          new Case(
              body(
                  prep,
                  "MERGE INTO k USING (SELECT ?::int AS v) s ON false"
                      + " WHEN NOT MATCHED THEN INSERT (v) VALUES (s.v)",
                  ps -> ps.executeUpdate() + " " + keys(ps)),
              false));
      ops.put(
          "max rows (not carried)" + how,
          new Case(
              body(
                  prep,
                  "INSERT INTO k (v) SELECT generate_series(1, ?)",
                  ps -> {
                    ps.setMaxRows(2);
                    return ps.executeUpdate() + " " + keys(ps);
                  }),
              false));
      ops.put(
          "two statements (not carried)" + how,
          new Case(
              body(
                  prep,
                  INSERT + "; SELECT 1",
                  ps -> ps.execute() + " " + drain(ps) + " " + keys(ps)),
              false));
    }
    ops.put(
        "empty column names: a plain statement",
        new Case(
            (c, seen) -> {
              try (PreparedStatement ps = c.prepareStatement(INSERT, new String[0])) {
                ps.setInt(1, 7);
                seen.add(ps.executeUpdate() + " " + keys(ps));
              }
            },
            true,
            0)); // simple, autocommit: one query message, as a plain prepared statement's
    ops.put(
        "empty column indexes: a plain statement",
        new Case(
            (c, seen) -> {
              try (PreparedStatement ps = c.prepareStatement(INSERT, new int[0])) {
                ps.setInt(1, 7);
                seen.add(ps.executeUpdate() + " " + keys(ps));
              }
            },
            true,
            0)); // simple, autocommit: one query message, as a plain prepared statement's
    ops.put(
        "column indexes: refused by the driver, then a plain write (carried)",
        new Case(
            (c, seen) -> {
              try (PreparedStatement ps = c.prepareStatement(INSERT, new int[] {1})) {
                seen.add("prepared " + ps);
              } catch (SQLException e) {
                seen.add(exception(e));
              }
              // a plain statement carries its check (the literal form, one query message with
              // simple): as many round trips as unfenced in every setting
              try (Statement s = c.createStatement()) {
                seen.add(String.valueOf(s.executeUpdate("INSERT INTO k (v) VALUES (3)")));
              }
            },
            true,
            0));
    return ops;
  }

  private static Operation body(Preparation prep, String sql, PreparedBody body) {
    return (c, seen) -> {
      try (PreparedStatement ps = prep.prepare(c, sql)) {
        ps.setInt(1, 7);
        try {
          seen.add(String.valueOf(body.run(ps)));
        } finally {
          warnings(ps, seen);
        }
      }
    };
  }

  /** A statement of {@code sql}, parameter 1 set to 7, run once by {@code body}: carried. */
  private static Case carried(Preparation prep, String sql, PreparedBody body) {
    return carried(prep, sql, body, 1);
  }

  private static Case carried(Preparation prep, String sql, PreparedBody body, int writes) {
    return new Case(body(prep, sql, body), true, writes);
  }

  /** The generated keys: their columns (label, type), rows, and the statement they name. */
  private static String keys(PreparedStatement ps) throws SQLException {
    return "keys " + described(ps.getGeneratedKeys(), ps);
  }

  /** The columns of {@code rs} (label, type), whether it names {@code ps}, its rows. */
  private static String described(ResultSet rs, Statement ps) throws SQLException {
    ResultSetMetaData md = rs.getMetaData();
    StringBuilder out = new StringBuilder("{");
    for (int i = 1; i <= md.getColumnCount(); i++) {
      out.append(i > 1 ? ", " : "")
          .append(md.getColumnLabel(i))
          .append(" ")
          .append(md.getColumnTypeName(i))
          .append("/")
          .append(md.getColumnType(i))
          .append("/")
          .append(md.getColumnClassName(i));
    }
    return out.append("} ")
        .append(rs.getStatement() == ps ? "own statement " : "other statement ")
        .append(rows(rs))
        .toString();
  }
}
