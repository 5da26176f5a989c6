package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.awaitWaitingOnLock;
import static dev.fencing.jdbc.FencingTestSupport.exec;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.jdbc.PgConnection;

/**
 * V30's function-free carried check ({@link CheckForms}): the advisory share lock on the name's
 * key, then a later statement that accepts through {@code check_at_token} or calls {@code
 * check_one}. Through {@link FencedDataSource} on a real server: the fast form calls no function
 * and holds the key; everything the view does not show goes to {@code check_one} (REPEATABLE READ,
 * SERIALIZABLE, strict, protected, external, another key space); a zombie is refused while a
 * handover is in flight and after it; ROLLBACK TO SAVEPOINT undoes the check.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class CarriedFastCheckTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final AtomicInteger NAMES = new AtomicInteger();
  private static DataSource plain;
  private static DataSource traced;

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    traced =
        FencingTestSupport.plain(
            db,
            ds -> {
              ds.setOptions("-c track_functions=all");
              return ds;
            });
    exec(plain, "CREATE TABLE fast_rows (id serial PRIMARY KEY, r text NOT NULL)");
    exec(plain, "GRANT SELECT, INSERT ON fast_rows TO " + db.appRole());
    exec(plain, "GRANT USAGE ON SEQUENCE fast_rows_id_seq TO " + db.appRole());
  }

  private static String name(String what) {
    return "fast/" + what + "/" + NAMES.incrementAndGet();
  }

  /** A local resource's lease, its token current: acquired with {@code ttl}. */
  private static long acquire(String resource, String ttl) throws SQLException {
    return queryLong(
        plain, "SELECT token FROM fencing.try_acquire(?, 'fast-test', ?::interval)", resource, ttl);
  }

  private static FencedDataSource fenced(DataSource target) {
    return FencedDataSource.wrap(target);
  }

  /** One fenced write of {@code resource}'s row on {@code c} (its first write: the check). */
  private static void write(Connection c, String resource) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO fast_rows (r) VALUES (?)")) {
      ps.setString(1, resource);
      assertThat(ps.executeUpdate()).isOne();
    }
  }

  /** A committed fenced transaction: the data source learns the key space from the first. */
  private static void warm(FencedDataSource ds, String resource, long token) throws SQLException {
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, token));
        Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      write(c, resource);
      c.commit();
    }
  }

  /** Calls of check_one in the open transaction of {@code c} (track_functions = all). */
  private static long checkOneCalls(Connection c) throws SQLException {
    return queryLong(
        c,
        "SELECT coalesce(sum(calls), 0) FROM pg_stat_xact_user_functions"
            + " WHERE schemaname = 'fencing' AND funcname = 'check_one'");
  }

  /** The advisory share locks {@code c}'s backend holds on {@code resource}'s name, by space. */
  private static long nameLocks(Connection c, String resource, long space) throws SQLException {
    return queryLong(
        c,
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()"
            + " AND mode = 'ShareLock' AND granted AND objsubid = 2"
            + " AND classid::bigint = ((?::bigint % 4294967296) + 4294967296) % 4294967296"
            + " AND objid::bigint = ((hashtext(?)::bigint % 4294967296) + 4294967296) % 4294967296",
        space,
        resource);
  }

  private static long keySpace() throws SQLException {
    return queryLong(
        plain,
        "SELECT substring(pg_get_expr(d.adbin, d.adrelid), '^-?[0-9]+')::bigint"
            + " FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid"
            + " AND a.attnum = d.adnum WHERE d.adrelid = 'fencing.resource'::regclass"
            + " AND a.attname = 'lock_space'");
  }

  private static long queryLong(DataSource ds, String sql, Object... args) throws SQLException {
    return FencingTestSupport.queryLong(ds, sql, args);
  }

  /** On {@code c}'s driver connection: a read of the fenced one could carry a check itself. */
  private static long queryLong(Connection c, String sql, Object... args) throws SQLException {
    Object value = FencingTestSupport.query(c.unwrap(PgConnection.class), sql, args);
    assertThat(value).as(sql).isInstanceOf(Number.class);
    return ((Number) value).longValue();
  }

  /** A committed fenced transaction of a resource of its own: {@code ds} learns the key space. */
  private static void learned(FencedDataSource ds) throws SQLException {
    String resource = name("learn");
    warm(ds, resource, acquire(resource, "1 hour"));
  }

  private static long rows(String resource) throws SQLException {
    return queryLong(plain, "SELECT count(*) FROM fast_rows WHERE r = ?", resource);
  }

  @Test
  void theFastFormCallsNoFunctionAndHoldsTheNamesKey() throws SQLException {
    String resource = name("fast");
    long token = acquire(resource, "1 hour");
    FencedDataSource ds = fenced(traced);
    warm(ds, resource, token);
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, token));
        Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      write(c, resource);
      assertThat(checkOneCalls(c)).as("check_one calls of the fast form").isZero();
      assertThat(nameLocks(c, resource, keySpace())).as("the name's key, shared").isOne();
      c.commit();
    }
    assertThat(rows(resource)).isEqualTo(2);
  }

  @Test
  void theApplicationRoleReadsTheViewOnlyAndChecksWithoutAFunction() throws SQLException {
    String resource = name("app");
    long token = acquire(resource, "1 hour");
    DataSource app =
        FencingTestSupport.plain(
            db,
            ds -> {
              ds.setOptions("-c track_functions=all -c role=" + db.appRole());
              return ds;
            });
    FencedDataSource ds = fenced(app);
    warm(ds, resource, token);
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, token));
        Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      write(c, resource);
      assertThat(checkOneCalls(c)).isZero();
      c.commit();
      assertThatThrownBy(() -> queryLong(c, "SELECT count(*) FROM fencing.resource"))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("permission denied");
      c.rollback();
    }
    assertThat(rows(resource)).isEqualTo(2);
  }

  @ParameterizedTest
  @ValueSource(strings = {"REPEATABLE READ", "SERIALIZABLE"})
  void repeatableReadAndSerializableGoToCheckOneWhateverTheClientBelieves(String level)
      throws SQLException {
    String resource = name("rr");
    long token = acquire(resource, "1 hour");
    FencedDataSource ds = fenced(traced);
    warm(ds, resource, token);
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, token));
        Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      // in SQL, behind the wrapper (setTransactionIsolation was never called)
      exec(c, "SET TRANSACTION ISOLATION LEVEL " + level);
      write(c, resource);
      assertThat(checkOneCalls(c)).as("the view shows no row: check_one decides").isOne();
      c.commit();
    }
    assertThat(rows(resource)).isEqualTo(2);
  }

  @Test
  void aProtectedResourceGoesToCheckOneWhichSetsTheMarker() throws SQLException {
    String resource = name("protected");
    String table = "fast_protected_" + NAMES.incrementAndGet();
    exec(plain, "CREATE TABLE " + table + " (id int PRIMARY KEY)");
    long token = acquire(resource, "1 hour");
    exec(plain, "SELECT fencing.protect(?, ?)", table, resource);
    FencedDataSource ds = fenced(traced);
    warm(ds, resource, token);
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, token));
        Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " VALUES (?)")) {
        ps.setInt(1, 1);
        assertThat(ps.executeUpdate()).as("the trigger found the marker").isOne();
      }
      assertThat(checkOneCalls(c)).isOne();
      c.commit();
    }
    assertThat(queryLong(plain, "SELECT count(*) FROM " + table)).isOne();
  }

  @Test
  void anExternalResourceGoesToCheckOne() throws SQLException {
    String resource = FencingTestSupport.externalResource(plain, name("external"), 7);
    FencedDataSource ds = fenced(traced);
    warm(ds, resource, 7);
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 7));
        Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      write(c, resource);
      assertThat(checkOneCalls(c)).isOne();
      c.commit();
    }
  }

  @Test
  void aStrictResourceGoesToCheckOneAndAHandoverWaitsForItWithoutDeadlock() throws Exception {
    String resource = name("strict");
    exec(plain, "SELECT fencing.create_resource(?, false, true)", resource);
    long token = acquire(resource, "1 millisecond");
    FencedDataSource ds = fenced(traced);
    learned(ds); // a strict token is used by one transaction only
    CompletableFuture<Long> next;
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, token));
        Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      write(c, resource);
      assertThat(checkOneCalls(c)).as("the strict check: fence_full's row lock").isOne();
      // the share lock the first statement took stays: a handover waits for this transaction
      assertThat(nameLocks(c, resource, keySpace())).isOne();
      next =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return acquire(resource, "1 hour");
                } catch (SQLException e) {
                  throw new IllegalStateException(e);
                }
              });
      awaitWaitingOnLock(plain, "try_acquire", 1);
      assertThat(next).isNotDone();
      c.commit();
    }
    assertThat(next.get(FencingTestSupport.PATIENCE.toSeconds(), TimeUnit.SECONDS))
        .isGreaterThan(token);
    assertThat(rows(resource)).isOne();
  }

  @ParameterizedTest
  @ValueSource(
      ints = {
        Connection.TRANSACTION_READ_COMMITTED,
        Connection.TRANSACTION_REPEATABLE_READ,
        Connection.TRANSACTION_SERIALIZABLE
      })
  void aZombieWaitsForAHandoverInFlightAndIsRefusedThenAndAfter(int isolation) throws Exception {
    String resource = name("zombie");
    long old = acquire(resource, "1 millisecond");
    FencedDataSource ds = fenced(traced);
    warm(ds, resource, old);
    long next;
    try (Connection acquirer = plain.getConnection()) {
      acquirer.setAutoCommit(false);
      // the acquisition holds the name's key exclusively and has advanced the row, uncommitted
      next =
          queryLong(
              acquirer,
              "SELECT token FROM fencing.try_acquire(?, 'next', interval '1 hour')",
              resource);
      assertThat(next).isGreaterThan(old);
      CompletableFuture<Void> zombie =
          CompletableFuture.runAsync(
              () -> {
                try (FencingScope scope = Fencing.bind(FencingToken.of(resource, old));
                    Connection c = ds.getConnection()) {
                  c.setAutoCommit(false);
                  c.setTransactionIsolation(isolation);
                  write(c, resource);
                  c.commit();
                } catch (SQLException e) {
                  throw new IllegalStateException(e);
                }
              });
      awaitWaitingOnLock(plain, "pg_advisory_xact_lock_shared", 1);
      assertThat(zombie).isNotDone();
      acquirer.commit();
      assertThatThrownBy(
              () -> zombie.get(FencingTestSupport.PATIENCE.toSeconds(), TimeUnit.SECONDS))
          .cause()
          .cause()
          .isInstanceOf(StaleFencingTokenException.class);
    }
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, old));
        Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      c.setTransactionIsolation(isolation);
      assertThatThrownBy(() -> write(c, resource)).isInstanceOf(StaleFencingTokenException.class);
    }
    assertThat(rows(resource)).as("the warm-up's row only").isOne();
  }

  @Test
  void rollbackToSavepointUndoesTheCheckAndTheNextWriteChecksAgain() throws SQLException {
    String resource = name("savepoint");
    long token = acquire(resource, "1 hour");
    FencedDataSource ds = fenced(traced);
    warm(ds, resource, token);
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, token));
        Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      long space = keySpace();
      Savepoint s = c.setSavepoint();
      assertThat(nameLocks(c, resource, space)).as("before the write").isZero();
      write(c, resource);
      assertThat(nameLocks(c, resource, space)).isOne();
      c.rollback(s);
      assertThat(nameLocks(c, resource, space)).as("released with the savepoint").isZero();
      write(c, resource);
      assertThat(nameLocks(c, resource, space)).as("checked again").isOne();
      c.commit();
    }
    assertThat(rows(resource)).isEqualTo(2);
  }

  @Test
  void aKeySpaceChangeInFlightSendsTheCheckToCheckOneUnderTheNewKey() throws Exception {
    String resource = name("space");
    long token = acquire(resource, "1 millisecond");
    FencedDataSource ds = fenced(traced);
    warm(ds, resource, token); // learned the key space
    long before = keySpace();
    long after = before == 7_000_001 ? 7_000_002 : 7_000_001;
    CompletableFuture<Long> next;
    try (Connection operator = plain.getConnection();
        FencingScope scope = Fencing.bind(FencingToken.of(resource, token));
        Connection c = ds.getConnection()) {
      operator.setAutoCommit(false);
      exec(operator, "SELECT fencing.set_advisory_key_space(?)", (int) after);
      c.setAutoCommit(false);
      CompletableFuture<Void> writing =
          CompletableFuture.runAsync(
              () -> {
                try (FencingScope inner = Fencing.bind(FencingToken.of(resource, token))) {
                  write(c, resource); // the lock on the old key, then the read waits
                } catch (SQLException e) {
                  throw new IllegalStateException(e);
                }
              });
      awaitWaitingOnLock(plain, "check_at_token", 1);
      operator.commit();
      writing.get(FencingTestSupport.PATIENCE.toSeconds(), TimeUnit.SECONDS);
      assertThat(checkOneCalls(c)).as("another key space: check_one decides").isOne();
      assertThat(nameLocks(c, resource, after)).as("the new key, shared").isOne();
      next =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return acquire(resource, "1 hour");
                } catch (SQLException e) {
                  throw new IllegalStateException(e);
                }
              });
      awaitWaitingOnLock(plain, "try_acquire", 1);
      assertThat(next).as("a handover after the change waits for the check").isNotDone();
      c.commit();
    } finally {
      exec(plain, "SELECT fencing.set_advisory_key_space(?)", (int) before);
    }
    assertThat(next.get(FencingTestSupport.PATIENCE.toSeconds(), TimeUnit.SECONDS))
        .isGreaterThan(token);
    assertThat(rows(resource)).isEqualTo(2);
  }

  @Test
  void afterAKeySpaceChangeTheDataSourceLearnsTheNewSpace() throws SQLException {
    String resource = name("relearn");
    long token = acquire(resource, "1 hour");
    FencedDataSource ds = fenced(traced);
    warm(ds, resource, token);
    long before = keySpace();
    long after = before == 7_000_003 ? 7_000_004 : 7_000_003;
    exec(plain, "SELECT fencing.set_advisory_key_space(?)", (int) after);
    try {
      String other = name("relearn-other");
      long otherToken = acquire(other, "1 hour");
      // the stale constant: check_one; then the default read again; then the fast form again
      for (int i = 0; i < 2; i++) {
        warm(ds, other, otherToken);
      }
      String third = name("relearn-third");
      long thirdToken = acquire(third, "1 hour");
      try (FencingScope scope = Fencing.bind(FencingToken.of(third, thirdToken));
          Connection c = ds.getConnection()) {
        c.setAutoCommit(false);
        write(c, third);
        assertThat(checkOneCalls(c)).isZero();
        assertThat(nameLocks(c, third, after)).isOne();
        c.commit();
      }
    } finally {
      exec(plain, "SELECT fencing.set_advisory_key_space(?)", (int) before);
    }
  }
}
