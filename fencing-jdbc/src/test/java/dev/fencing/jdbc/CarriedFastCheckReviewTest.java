package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.jdbc.PgConnection;

/**
 * V30's function-free carried check ({@link CheckForms}) where the client's text and the server's
 * plan cache could decide instead of the view: the comparisons of the client's text are
 * pg_catalog's whatever the session's search_path; the view's isolation test is evaluated at each
 * execution of a generic plan; a negative key space is learned.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class CarriedFastCheckReviewTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final AtomicInteger NAMES = new AtomicInteger();
  private static DataSource plain;

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    exec(plain, "CREATE TABLE review_rows (id serial PRIMARY KEY, r text NOT NULL)");
    exec(plain, "GRANT SELECT, INSERT ON review_rows TO " + db.appRole());
    exec(plain, "GRANT USAGE ON SEQUENCE review_rows_id_seq TO " + db.appRole());
  }

  private static String name(String what) {
    return "fast-review/" + what + "/" + NAMES.incrementAndGet();
  }

  private static long acquire(String resource, String ttl) throws SQLException {
    return FencingTestSupport.queryLong(
        plain,
        "SELECT token FROM fencing.try_acquire(?, 'review-test', ?::interval)",
        resource,
        ttl);
  }

  private static DataSource traced(String options) {
    return FencingTestSupport.plain(
        db,
        ds -> {
          ds.setOptions("-c track_functions=all " + options);
          return ds;
        });
  }

  private static void write(PreparedStatement ps, String resource) throws SQLException {
    ps.setString(1, resource);
    assertThat(ps.executeUpdate()).isOne();
  }

  private static void write(Connection c, String resource) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO review_rows (r) VALUES (?)")) {
      write(ps, resource);
    }
  }

  private static void warm(FencedDataSource ds, String resource, long token) throws SQLException {
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, token));
        Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      write(c, resource);
      c.commit();
    }
  }

  private static long queryLong(Connection c, String sql, Object... args) throws SQLException {
    Object value = FencingTestSupport.query(c.unwrap(PgConnection.class), sql, args);
    assertThat(value).as(sql).isInstanceOf(Number.class);
    return ((Number) value).longValue();
  }

  private static long checkOneCalls(Connection c) throws SQLException {
    return queryLong(
        c,
        "SELECT coalesce(sum(calls), 0) FROM pg_stat_xact_user_functions"
            + " WHERE schemaname = 'fencing' AND funcname = 'check_one'");
  }

  /**
   * The calls of check_one made by {@code ps}'s write in a transaction of {@code c} (read before
   * and after it, in the transaction: a backend's pending function counts are flushed only between
   * transactions, and not after each).
   */
  private static long checkedBy(Connection c, PreparedStatement ps, String resource)
      throws SQLException {
    long before = checkOneCalls(c);
    write(ps, resource);
    return checkOneCalls(c) - before;
  }

  private static long rows(String resource) throws SQLException {
    return FencingTestSupport.queryLong(
        plain, "SELECT count(*) FROM review_rows WHERE r = ?", resource);
  }

  /**
   * A session whose search_path puts a schema before pg_catalog, holding an {@code =} on bigint
   * that says yes to anything: the client's text must still compare with pg_catalog's, so a zombie
   * is refused.
   */
  @Test
  void aHostileOperatorOnTheSearchPathDoesNotMakeTheViewAcceptAStaleToken() throws Exception {
    exec(plain, "CREATE SCHEMA review_hostile");
    exec(plain, "GRANT USAGE ON SCHEMA review_hostile TO PUBLIC");
    exec(
        plain,
        "CREATE FUNCTION review_hostile.yes(bigint, bigint) RETURNS boolean"
            + " LANGUAGE sql IMMUTABLE AS 'SELECT true'");
    exec(
        plain,
        "CREATE OPERATOR review_hostile.= (LEFTARG = bigint, RIGHTARG = bigint,"
            + " FUNCTION = review_hostile.yes)");
    try {
      String resource = name("hostile");
      long old = acquire(resource, "1 millisecond");
      FencedDataSource ds =
          FencedDataSource.wrap(
              traced(
                  "-c role=" + db.appRole() + " -c search_path=review_hostile,pg_catalog,public"));
      warm(ds, resource, old); // the data source learns the key space
      long next = acquire(resource, "1 hour");
      assertThat(next).isGreaterThan(old);
      try (FencingScope scope = Fencing.bind(FencingToken.of(resource, old));
          Connection c = ds.getConnection()) {
        c.setAutoCommit(false);
        assertThatThrownBy(() -> write(c, resource)).isInstanceOf(StaleFencingTokenException.class);
      }
      assertThat(rows(resource)).as("the warm-up's row only").isOne();
    } finally {
      exec(plain, "DROP SCHEMA review_hostile CASCADE");
    }
  }

  /**
   * One prepared statement on one connection, server-prepared and planned generically (pgjdbc names
   * it after 5 executions; plan_cache_mode forces the generic plan): the view's isolation test is
   * evaluated at each execution, so the same plan accepts under READ COMMITTED and shows nothing
   * under REPEATABLE READ (and SERIALIZABLE, then by check_one alone: the data source's memo).
   */
  @Test
  void aGenericPlanTestsTheIsolationAtEachExecution() throws SQLException {
    String resource = name("generic");
    long token = acquire(resource, "1 hour");
    FencedDataSource ds = FencedDataSource.wrap(traced("-c plan_cache_mode=force_generic_plan"));
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, token));
        Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("INSERT INTO review_rows (r) VALUES (?)")) {
      c.setAutoCommit(false);
      for (int i = 0; i < 12; i++) {
        assertThat(checkedBy(c, ps, resource)).as("execution %d", i).isEqualTo(i == 0 ? 1 : 0);
        c.commit();
      }
      assertThat(
              queryLong(
                  c,
                  "SELECT coalesce(sum(generic_plans), 0) FROM pg_prepared_statements"
                      + " WHERE statement LIKE '%check_at_token%'"))
          .as("the fast form's read, planned generically")
          .isGreaterThan(5);
      c.commit();
      // REPEATABLE READ through the generic plan; SERIALIZABLE then by check_one alone (after a
      // fall-through the data source skips the view for a while)
      for (String level : new String[] {"REPEATABLE READ", "SERIALIZABLE"}) {
        exec(c, "SET TRANSACTION ISOLATION LEVEL " + level);
        assertThat(checkedBy(c, ps, resource)).as(level).isOne();
        c.commit();
      }
    }
    assertThat(rows(resource)).isEqualTo(14);
  }

  /** A negative key space (set_advisory_key_space allows one) is learned: the fast form is used. */
  @Test
  void aNegativeKeySpaceIsLearned() throws SQLException {
    long before =
        FencingTestSupport.queryLong(
            plain,
            "SELECT lock_space FROM fencing.resource WHERE name = ?",
            ensure(name("space-probe")));
    int after = -7_000_011;
    exec(plain, "SELECT fencing.set_advisory_key_space(?)", after);
    try {
      FencedDataSource ds = FencedDataSource.wrap(traced(""));
      String resource = name("negative");
      long token = acquire(resource, "1 hour");
      warm(ds, resource, token);
      try (FencingScope scope = Fencing.bind(FencingToken.of(resource, token));
          Connection c = ds.getConnection()) {
        c.setAutoCommit(false);
        write(c, resource);
        assertThat(checkOneCalls(c)).as("the fast form in key space %d", after).isZero();
        c.commit();
      }
    } finally {
      exec(plain, "SELECT fencing.set_advisory_key_space(?)", (int) before);
    }
  }

  private static String ensure(String resource) throws SQLException {
    acquire(resource, "1 hour");
    return resource;
  }
}
