package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.MatrixFixture.EverySetting;
import dev.fencing.jdbc.MatrixFixture.Operation;
import dev.fencing.testing.RoundTrips;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;
import org.postgresql.geometric.PGpoint;
import org.postgresql.jdbc.AutoSave;
import org.postgresql.jdbc.PreferQueryMode;
import org.postgresql.util.PGobject;

/**
 * A parameter's value is the one the caller set at the time it set it: pgjdbc encodes a setter's
 * argument when it is called, so a mutable argument changed afterwards (a primitive or nested
 * array's element, a {@code PGobject}, a mutable {@code Number}) changes nothing it sends. Fenced,
 * a carried execution replays the recorded arguments on the combined statement later: what it
 * sends, and the rows committed, must be the same as unfenced.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class CarriedParametersTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;
  private static String resource;

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    exec(plain, "CREATE TABLE rp (id serial PRIMARY KEY, v text NOT NULL)");
    resource = externalResource(plain, "carried-parameters", 5);
  }

  @EverySetting
  void aMutableArgumentChangedAfterItsSetterIsSentAsSet(
      boolean autoCommit, PreferQueryMode mode, AutoSave autosave) throws Exception {
    PGSimpleDataSource driver = MatrixFixture.driver(db, mode, autosave);
    FencedDataSource fenced = FencedDataSource.wrap(driver);
    SoftAssertions softly = new SoftAssertions();
    try (RoundTrips trips = new RoundTrips()) {
      for (Map.Entry<String, Operation> op : cases().entrySet()) {
        List<String> unfenced = transcript(driver, autoCommit, op.getValue(), false, trips);
        List<String> seen = transcript(fenced, autoCommit, op.getValue(), true, trips);
        // what the caller sees and the rows committed (index 0: round trips, not compared here)
        softly
            .assertThat(seen.subList(1, seen.size()))
            .as(op.getKey())
            .isEqualTo(unfenced.subList(1, unfenced.size()));
      }
    }
    softly.assertAll();
  }

  private static List<String> transcript(
      DataSource ds, boolean autoCommit, Operation op, boolean bound, RoundTrips trips)
      throws SQLException {
    return MatrixFixture.transcript(plain, "rp", resource, ds, autoCommit, op, bound, trips);
  }

  /** {@code body} on {@code INSERT INTO rp (v) VALUES (?::text)}, twice, its counts seen. */
  private static Operation insert(Body body) {
    return (c, seen) -> {
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO rp (v) VALUES (?::text)")) {
        body.run(ps, seen);
      }
    };
  }

  @FunctionalInterface
  interface Body {
    void run(PreparedStatement ps, List<String> seen) throws SQLException;
  }

  private static Map<String, Operation> cases() {
    Map<String, Operation> ops = new LinkedHashMap<>();
    ops.put(
        "int[] changed after setObject",
        insert(
            (ps, seen) -> {
              int[] a = {1, 2};
              ps.setObject(1, a);
              a[0] = 9;
              seen.add(String.valueOf(ps.executeUpdate()));
              a[1] = 8; // executed again as set: the driver keeps what it encoded
              seen.add(String.valueOf(ps.executeUpdate()));
            }));
    ops.put(
        "long[] changed after setObject with a target type",
        insert(
            (ps, seen) -> {
              long[] a = {1, 2};
              ps.setObject(1, a, Types.ARRAY);
              a[0] = 9;
              seen.add(String.valueOf(ps.executeUpdate()));
            }));
    ops.put(
        "byte[][] element changed after setObject",
        insert(
            (ps, seen) -> {
              byte[][] a = {{1, 2}, {3}};
              ps.setObject(1, a);
              a[0][0] = 9;
              seen.add(String.valueOf(ps.executeUpdate()));
            }));
    ops.put(
        "String[][] element changed after setObject",
        insert(
            (ps, seen) -> {
              String[][] a = {{"a", "b"}, {"c", "d"}};
              ps.setObject(1, a);
              a[0][0] = "z";
              seen.add(String.valueOf(ps.executeUpdate()));
            }));
    ops.put(
        "PGobject changed after setObject",
        insert(
            (ps, seen) -> {
              PGobject o = new PGobject();
              o.setType("json");
              o.setValue("{\"a\":1}");
              ps.setObject(1, o);
              o.setValue("{\"a\":2}");
              seen.add(String.valueOf(ps.executeUpdate()));
            }));
    ops.put(
        "PGpoint changed after setObject",
        insert(
            (ps, seen) -> {
              PGpoint p = new PGpoint(1, 2);
              ps.setObject(1, p);
              p.x = 9;
              seen.add(String.valueOf(ps.executeUpdate()));
            }));
    ops.put(
        "AtomicLong changed after setObject",
        insert(
            (ps, seen) -> {
              AtomicLong n = new AtomicLong(1);
              ps.setObject(1, n);
              n.set(2);
              seen.add(String.valueOf(ps.executeUpdate()));
            }));
    return ops;
  }

  @EverySetting
  void theCasesRunUnfenced(boolean autoCommit, PreferQueryMode mode, AutoSave autosave)
      throws Exception {
    // the cases exercise the driver: each inserts rows unfenced (none refused by pgjdbc)
    PGSimpleDataSource driver = MatrixFixture.driver(db, mode, autosave);
    try (RoundTrips trips = new RoundTrips()) {
      for (Map.Entry<String, Operation> op : cases().entrySet()) {
        List<String> unfenced = transcript(driver, autoCommit, op.getValue(), false, trips);
        assertThat(unfenced.get(unfenced.size() - 1)).as(op.getKey()).startsWith("committed [");
        assertThat(String.join(" ", unfenced)).as(op.getKey()).doesNotContain("exception");
      }
    }
  }
}
