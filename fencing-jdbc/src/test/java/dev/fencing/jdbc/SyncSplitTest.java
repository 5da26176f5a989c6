package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.RoundTrips;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * In autocommit a carried check and its statement are one implicit transaction only if pgjdbc sends
 * no Sync between them ({@link SyncSplit}). pgjdbc does Sync between the statements of one
 * execution when it estimates a described statement's response as unbounded (a text column): a
 * prepared statement described once it became a named statement with parameters of unknown type
 * ({@code stringtype=unspecified}), or any statement under forced binary transfer. There the check
 * would commit before the statement ran. Each execution must either send no Sync more than the
 * unfenced one (one implicit transaction) or run in the wrapper's transaction ({@code BEGIN}). Red
 * before {@link SyncSplit}: the sixth prepared execution sent the check, a Sync, then the insert.
 */
@SuppressWarnings("try")
class SyncSplitTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();
  private static DataSource plain;
  private static String resource;

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    exec(plain, "CREATE TABLE h (id serial PRIMARY KEY, name text NOT NULL)");
    resource = externalResource(plain, "sync-split", 5);
  }

  @FunctionalInterface
  interface Execution {
    void run(Connection c, int i) throws SQLException;
  }

  /** The messages sent by each of {@code times} executions on one connection of {@code ds}. */
  private static List<List<String>> sent(DataSource ds, boolean bound, int times, Execution e)
      throws SQLException {
    List<List<String>> all = new ArrayList<>();
    try (FencingScope scope = bound ? Fencing.bind(FencingToken.of(resource, 5)) : null;
        Connection c = ds.getConnection();
        RoundTrips trips = new RoundTrips()) {
      for (int i = 0; i < times; i++) {
        trips.reset();
        e.run(c, i);
        all.add(trips.sent());
      }
    }
    return all;
  }

  private static long syncs(List<String> sent) {
    return sent.stream().filter(m -> m.contains("FE=> Sync")).count();
  }

  private static void assertOneTransaction(PGSimpleDataSource driver, int times, Execution e)
      throws SQLException {
    List<List<String>> unfenced = sent(driver, false, times, e);
    List<List<String>> fenced = sent(FencedDataSource.wrap(driver), true, times, e);
    for (int i = 0; i < times; i++) {
      List<String> f = fenced.get(i);
      boolean block = f.stream().anyMatch(m -> m.contains("query=\"BEGIN\""));
      assertThat(block || syncs(f) == syncs(unfenced.get(i)))
          .as("execution %s: check and statement in one transaction: %s", i, f)
          .isTrue();
    }
    assertThat(fenced.get(0)).as("the check carried").anyMatch(m -> m.contains(".check_one("));
  }

  private static final Map<Connection, PreparedStatement> STATEMENTS = new IdentityHashMap<>();

  private static PreparedStatement prepare(Connection c, String sql) {
    try {
      return c.prepareStatement(sql);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void aPreparedStatementDescribedForUnknownParameterTypes() throws SQLException {
    PGSimpleDataSource driver =
        FencingTestSupport.plain(
            db,
            ds -> {
              ds.setStringType("unspecified");
              return ds;
            });
    assertOneTransaction(
        driver,
        8,
        (c, i) -> {
          // one statement, executed again and again (a pool's statement cache)
          PreparedStatement ps =
              STATEMENTS.computeIfAbsent(
                  c, k -> prepare(k, "INSERT INTO h (name) VALUES (?) RETURNING name"));
          ps.setString(1, "p" + i);
          try (ResultSet rs = ps.executeQuery()) {
            assertThat(rs.next()).isTrue();
          }
        });
  }

  @Test
  void aPlainStatementUnderForcedBinaryTransfer() throws SQLException {
    PGSimpleDataSource driver =
        FencingTestSupport.plain(
            db,
            ds -> {
              ds.setPrepareThreshold(-1);
              return ds;
            });
    assertOneTransaction(
        driver,
        2,
        (c, i) -> {
          try (Statement s = c.createStatement();
              ResultSet rs = s.executeQuery("INSERT INTO h (name) VALUES ('s') RETURNING name")) {
            assertThat(rs.next()).isTrue();
          }
        });
  }
}
