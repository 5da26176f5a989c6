package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.MatrixFixture.drain;
import static dev.fencing.jdbc.MatrixFixture.rows;
import static dev.fencing.jdbc.MatrixFixture.warnings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.jdbc.MatrixFixture.Operation;
import dev.fencing.testing.RoundTrips;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
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
import org.postgresql.ds.PGSimpleDataSource;
import org.postgresql.jdbc.AutoSave;
import org.postgresql.jdbc.PgConnection;
import org.postgresql.jdbc.PreferQueryMode;

/**
 * The invisibility matrix for a LOCAL resource (a lease's token, {@code try_acquire}), where a
 * prepared statement's first write carries V30's fast form ({@link CheckForms}, Kind FAST): under
 * every {@code preferQueryMode} × {@code autosave} × autocommit and each kind of execution, the
 * current holder sees exactly what it sees unfenced; the form carried is the one documented (the
 * fast form for a {@code PreparedStatement} in the extended modes, no call of {@code check_one}
 * counted in {@code pg_stat_xact_user_functions}, generated keys included; {@code check_one} for a
 * {@code CallableStatement}, the literal check for batches, plain statements and {@code simple} in
 * autocommit); a zombie's write of each kind is refused (ZF001), nothing written, the refusal
 * recorded, the connection usable by the current holder next; and a savepoint rollback that undoes
 * the check (hazard 8) makes the next write check again.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class CarriedFastCheckMatrixTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    exec(plain, "CREATE TABLE fm (id serial PRIMARY KEY, v int NOT NULL)");
    exec(plain, "CREATE TABLE fm_holder (id serial PRIMARY KEY, r text NOT NULL)");
    exec(
        plain,
        "CREATE FUNCTION fm_add(p int) RETURNS int LANGUAGE plpgsql AS"
            + " 'BEGIN INSERT INTO fm (v) VALUES (p); RAISE WARNING ''added %'', p; RETURN p * 2;"
            + " END'");
  }

  static Stream<Arguments> settings() {
    return MatrixFixture.allSettings();
  }

  static Stream<Arguments> savepointSettings() {
    return MatrixFixture.allSettings()
        .filter(a -> !(Boolean) a.get()[0] && a.get()[2] != AutoSave.NEVER);
  }

  /** The form of the first check in {@code sent}: fast, learn, one, many, literal or none. */
  static String form(List<String> sent) {
    for (String m : sent) {
      if (m.contains("pg_advisory_xact_lock_shared")) {
        return "fast";
      }
      if (m.contains("pg_attrdef")) {
        return "learn";
      }
      if (m.contains("check_tokens")) {
        return "many";
      }
      if (m.contains("check_one(E'")) {
        return "literal";
      }
      if (m.contains("check_one(")) {
        return "one";
      }
    }
    return "none";
  }

  /**
   * An execution of one kind: a {@code PreparedStatement}'s or not; {@code keysOrBatch} "keys",
   * "batch", "callable" or empty.
   */
  record Kind(Operation op, boolean prepared, String keysOrBatch) {}

  private static Map<String, Kind> kinds() {
    Map<String, Kind> ops = new LinkedHashMap<>();
    String insert = "INSERT INTO fm (v) VALUES (?)";
    ops.put(
        "PreparedStatement.executeUpdate",
        prepared(
            (c, seen) -> {
              try (PreparedStatement ps = c.prepareStatement(insert)) {
                ps.setInt(1, 3);
                seen.add(ps.executeUpdate() + " " + drain(ps));
                warnings(ps, seen);
              }
            }));
    ops.put(
        "PreparedStatement.executeQuery of a writing CTE",
        prepared(
            (c, seen) -> {
              try (PreparedStatement ps =
                  c.prepareStatement(
                      "WITH w AS (INSERT INTO fm (v) VALUES (?), (? + 1), (? + 2) RETURNING id, v)"
                          + " SELECT id, v FROM w ORDER BY v DESC")) {
                ps.setInt(1, 10);
                ps.setInt(2, 10);
                ps.setInt(3, 10);
                seen.add(rows(ps.executeQuery()) + " " + drain(ps));
                warnings(ps, seen);
              }
            }));
    ops.put(
        "PreparedStatement.execute, getMoreResults",
        prepared(
            (c, seen) -> {
              try (PreparedStatement ps = c.prepareStatement("SELECT fm_add(?) AS r")) {
                ps.setInt(1, 4);
                boolean first = ps.execute();
                seen.add(first + " " + (ps.getResultSet().getStatement() == ps) + " " + drain(ps));
                warnings(ps, seen);
              }
            }));
    ops.put(
        "PreparedStatement.executeLargeUpdate",
        prepared(
            (c, seen) -> {
              try (PreparedStatement ps =
                  c.prepareStatement("INSERT INTO fm (v) SELECT generate_series(1, ?)")) {
                ps.setInt(1, 3);
                seen.add(ps.executeLargeUpdate() + " " + drain(ps));
              }
            }));
    ops.put(
        "CallableStatement",
        new Kind(
            (c, seen) -> {
              try (CallableStatement cs = c.prepareCall("{? = call fm_add(?)}")) {
                cs.registerOutParameter(1, Types.INTEGER);
                cs.setInt(2, 6);
                seen.add(cs.execute() + " " + cs.getInt(1));
                warnings(cs, seen);
              }
            },
            true,
            "callable"));
    ops.put(
        "PreparedStatement generated keys",
        new Kind(
            (c, seen) -> {
              try (PreparedStatement ps = c.prepareStatement(insert, new String[] {"id", "v"})) {
                ps.setInt(1, 7);
                seen.add(ps.executeUpdate() + " " + rows(ps.getGeneratedKeys()));
                ps.setInt(1, 8);
                seen.add(ps.executeUpdate() + " " + rows(ps.getGeneratedKeys()));
              }
            },
            true,
            "keys"));
    ops.put(
        "PreparedStatement.executeBatch",
        new Kind(
            (c, seen) -> {
              try (PreparedStatement ps = c.prepareStatement(insert)) {
                ps.setInt(1, 1);
                ps.addBatch();
                ps.setInt(1, 2);
                ps.addBatch();
                seen.add(Arrays.toString(ps.executeBatch()));
                warnings(ps, seen);
              }
            },
            true,
            "batch"));
    ops.put(
        "Statement.executeUpdate",
        new Kind(
            (c, seen) -> {
              try (Statement s = c.createStatement()) {
                seen.add(s.executeUpdate("INSERT INTO fm (v) VALUES (9), (10)") + " " + drain(s));
              }
            },
            false,
            ""));
    ops.put(
        "Statement.execute of a writing query",
        new Kind(
            (c, seen) -> {
              try (Statement s = c.createStatement()) {
                seen.add(s.execute("SELECT fm_add(11) AS r") + " " + drain(s));
                warnings(s, seen);
              }
            },
            false,
            ""));
    return ops;
  }

  private static Kind prepared(Operation op) {
    return new Kind(op, true, "");
  }

  /**
   * The form carried today (the fast form where it pays, else what ARCHITECTURE's "The carried
   * check without a call" says stays): asserted so that a change is seen.
   */
  static String expectedForm(Kind kind, boolean autoCommit, PreferQueryMode mode) {
    if (!kind.prepared() || kind.keysOrBatch().equals("batch")) {
      return "literal";
    }
    if (kind.keysOrBatch().equals("callable")) {
      return "one"; // a CallableStatement: check_one bound, in every mode
    }
    if (kind.keysOrBatch().equals("keys")) {
      return "fast"; // generated keys: the combined statement in every mode, simple's too
    }
    if (mode == PreferQueryMode.SIMPLE && autoCommit) {
      return "literal";
    }
    return "fast";
  }

  private static PGSimpleDataSource driver(PreferQueryMode mode, AutoSave autosave) {
    return FencingTestSupport.plain(
        db,
        ds -> {
          ds.setPreferQueryMode(mode);
          ds.setAutosave(autosave);
          ds.setOptions("-c track_functions=all");
          return ds;
        });
  }

  private static String cell(boolean autoCommit, PreferQueryMode mode, AutoSave autosave) {
    return "fast-matrix/" + autoCommit + "/" + mode + "/" + autosave;
  }

  /** A committed write of {@code token}: the data source learns the key space if it must. */
  private static void holderWrites(DataSource ds, String resource, long token) throws SQLException {
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, token));
        Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      holderWrite(c, resource);
      c.commit();
    }
  }

  private static void holderWrite(Connection c, String resource) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO fm_holder (r) VALUES (?)")) {
      ps.setString(1, resource);
      assertThat(ps.executeUpdate()).isOne();
    }
  }

  private static long holderRows(String resource) throws SQLException {
    return FencingTestSupport.queryLong(
        plain, "SELECT count(*) FROM fm_holder WHERE r = ?", resource);
  }

  /** Calls of check_one in {@code c}'s open transaction, read on the driver's connection. */
  private static long checkOneCalls(Connection c) throws SQLException {
    Object n =
        FencingTestSupport.query(
            c.unwrap(PgConnection.class),
            "SELECT coalesce(sum(calls), 0) FROM pg_stat_xact_user_functions"
                + " WHERE schemaname = 'fencing' AND funcname = 'check_one'");
    return ((Number) n).longValue();
  }

  /**
   * The current holder's writes of every kind: exactly what unfenced shows (results, counts, keys,
   * batch results, warnings, the rows committed), with the documented form carried.
   */
  @ParameterizedTest(name = "autocommit={0} {1} autosave={2}")
  @MethodSource("settings")
  void theHoldersWritesLookExactlyLikeUnfencedWithTheDocumentedForm(
      boolean autoCommit, PreferQueryMode mode, AutoSave autosave) throws Exception {
    String resource = cell(autoCommit, mode, autosave);
    long token = MatrixFixture.acquireLocal(plain, resource, "holder");
    PGSimpleDataSource driver = driver(mode, autosave);
    FencedDataSource fenced = FencedDataSource.wrap(driver);
    holderWrites(fenced, resource, token); // learns the key space: the fast form from now on
    SoftAssertions softly = new SoftAssertions();
    try (RoundTrips trips = new RoundTrips()) {
      for (Map.Entry<String, Kind> kind : kinds().entrySet()) {
        long[] calls = {-1};
        Operation op =
            (c, seen) -> {
              kind.getValue().op().run(c, seen);
              if (!autoCommit) {
                calls[0] = checkOneCalls(c);
              }
            };
        List<String> unfenced =
            MatrixFixture.transcript(
                plain, "fm", resource, token, driver, autoCommit, op, false, trips);
        List<String> seen =
            MatrixFixture.transcript(
                plain, "fm", resource, token, fenced, autoCommit, op, true, trips);
        String carried = form(trips.sent());
        softly
            .assertThat(seen.subList(1, seen.size()))
            .as(kind.getKey())
            .isEqualTo(unfenced.subList(1, unfenced.size()));
        String expected = expectedForm(kind.getValue(), autoCommit, mode);
        softly
            .assertThat(carried)
            .as("the form of %s: %s", kind.getKey(), trips.sent())
            .isEqualTo(expected);
        if (calls[0] >= 0) { // in a transaction, the operation completed
          softly
              .assertThat(calls[0])
              .as("check_one calls of %s (%s)", kind.getKey(), carried)
              .isEqualTo(expected.equals("fast") ? 0 : 1);
        }
      }
    }
    softly.assertAll();
    assertThat(FencingTestSupport.rejections(plain, resource, "stale_token")).isZero();
  }

  /**
   * A zombie (its lease released and the resource acquired by another holder) writing each kind,
   * its check in the form the holder's would take: refused with ZF001, nothing written, the refusal
   * recorded; the same connection then serves the current holder.
   */
  @ParameterizedTest(name = "autocommit={0} {1} autosave={2}")
  @MethodSource("settings")
  void aZombieOfEveryKindIsRefusedAndTheConnectionServesTheHolderNext(
      boolean autoCommit, PreferQueryMode mode, AutoSave autosave) throws Exception {
    FencedDataSource fenced = FencedDataSource.wrap(driver(mode, autosave));
    exec(plain, "TRUNCATE fm RESTART IDENTITY");
    try (Connection c = fenced.getConnection();
        RoundTrips trips = new RoundTrips()) {
      c.setAutoCommit(autoCommit);
      int i = 0;
      for (Map.Entry<String, Kind> kind : kinds().entrySet()) {
        String resource = cell(autoCommit, mode, autosave) + "/zombie/" + i++;
        long old = MatrixFixture.acquireLocal(plain, resource, "holder");
        // twice: after another resource's refusal the first check learns the key space again
        holderWrites(fenced, resource, old);
        holderWrites(fenced, resource, old);
        long next = MatrixFixture.supersede(plain, resource, old);
        try (FencingScope scope = Fencing.bind(FencingToken.of(resource, old))) {
          trips.reset();
          MatrixFixture.assertRefusedAsStale(() -> kind.getValue().op().run(c, new ArrayList<>()));
          assertThat(form(trips.sent()))
              .as("the zombie's form of %s: %s", kind.getKey(), trips.sent())
              .isEqualTo(expectedForm(kind.getValue(), autoCommit, mode));
        }
        MatrixFixture.assertNothingWrittenAndRefusalRecorded(
            plain, resource, "SELECT count(*) FROM fm");
        assertThat(c.getAutoCommit()).isEqualTo(autoCommit);
        if (!autoCommit) {
          c.rollback(); // the refused transaction stays failed until the application rolls it back
        }
        try (FencingScope scope = Fencing.bind(FencingToken.of(resource, next))) {
          holderWrite(c, resource);
          if (!autoCommit) {
            c.commit();
          }
        }
        assertThat(holderRows(resource))
            .as("the holder's rows after %s", kind.getKey())
            .isEqualTo(3);
      }
    }
  }

  /**
   * Hazard 8 under autosave: the first write's check runs, then the write fails; the rollback to
   * the savepoint (the driver's under autosave=always, the application's under conservative) undoes
   * the check and its key. The next write checks again: the holder's holds the key again; a zombie
   * superseded in between is refused.
   */
  @ParameterizedTest(name = "autocommit={0} {1} autosave={2}")
  @MethodSource("savepointSettings")
  void aSavepointRollbackThatUndoesTheCheckMakesTheNextWriteCheckAgain(
      boolean autoCommit, PreferQueryMode mode, AutoSave autosave) throws Exception {
    String resource = cell(autoCommit, mode, autosave) + "/savepoint";
    long token = MatrixFixture.acquireLocal(plain, resource, "holder");
    FencedDataSource fenced = FencedDataSource.wrap(driver(mode, autosave));
    holderWrites(fenced, resource, token);
    long space = MatrixFixture.keySpace(plain);
    exec(plain, "TRUNCATE fm RESTART IDENTITY");
    exec(plain, "INSERT INTO fm (id, v) VALUES (1000, 0)");
    String insert = "INSERT INTO fm (id, v) VALUES (?, 1)";
    for (boolean superseded : new boolean[] {false, true}) {
      try (FencingScope scope = Fencing.bind(FencingToken.of(resource, token));
          Connection c = fenced.getConnection();
          PreparedStatement ps = c.prepareStatement(insert);
          RoundTrips trips = new RoundTrips()) {
        c.setAutoCommit(false);
        Savepoint s = autosave == AutoSave.CONSERVATIVE ? c.setSavepoint() : null;
        ps.setInt(1, 1000);
        assertThatThrownBy(ps::executeUpdate)
            .isInstanceOfSatisfying(
                SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("23505"));
        assertThat(form(trips.sent())).as("the failing write's check").isNotEqualTo("none");
        if (s != null) {
          c.rollback(s);
        }
        assertThat(MatrixFixture.nameLocks(c, resource, space))
            .as("the check undone with its savepoint")
            .isZero();
        if (superseded) {
          token = MatrixFixture.supersede(plain, resource, token); // no key held: not blocked
        }
        trips.reset();
        ps.setInt(1, 1001);
        if (superseded) {
          MatrixFixture.assertRefusedAsStale(ps::executeUpdate);
          c.rollback();
        } else {
          assertThat(ps.executeUpdate()).isOne();
          assertThat(form(trips.sent())).as("checked again: %s", trips.sent()).isNotEqualTo("none");
          assertThat(MatrixFixture.nameLocks(c, resource, space)).as("the key again").isOne();
          c.commit();
        }
      }
    }
    assertThat(FencingTestSupport.queryLong(plain, "SELECT count(*) FROM fm"))
        .as("row 1000 and the holder's 1001")
        .isEqualTo(2);
    assertThat(FencingTestSupport.rejections(plain, resource, "stale_token")).isOne();
    holderWrites(fenced, resource, token);
  }
}
