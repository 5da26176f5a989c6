package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Migration V38: the issuance lock is a lock on the owner's table {@code issuance_gate}, no longer
 * the advisory key (oid of {@code resource}, 16) that any session of the database could hold. The
 * holders here are a login with no privilege on the fence at all ({@code outsider}) and a member of
 * the application role; each holds the old key at session level, and an acquisition (or the
 * operator's {@code advance_sequence}) must not wait for it. A {@code lock_timeout} bounds the wait
 * the test would otherwise hang in: on V37 it ends the call with {@code 55P03}.
 */
class IssuanceLockTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final Duration TTL = Duration.ofMinutes(5);
  private static String outsider;

  /** V12's issuance key, as the outsider (no USAGE on the schema) reads it from pg_class. */
  private static String oldKey;

  @BeforeAll
  static void migrate() throws SQLException {
    assertThat(Fence.migrate(db)).isEqualTo(Fence.MIGRATIONS);
    outsider = FenceSql.unique("issuance_outsider");
    try (Connection c = db.connect()) {
      FenceSql.run(c, "CREATE ROLE " + outsider + " LOGIN"); // CONNECT through PUBLIC, nothing else
    }
    try (Connection c = db.connect(outsider)) {
      oldKey =
          FenceSql.longValue(
                  c,
                  "SELECT c.oid::integer FROM pg_class c JOIN pg_namespace n ON n.oid ="
                      + " c.relnamespace WHERE n.nspname = 'fencing' AND c.relname = 'resource'")
              + ", 16";
    }
  }

  @AfterAll
  static void dropOutsider() throws SQLException {
    try (Connection c = db.connect()) {
      FenceSql.run(c, "DROP OWNED BY " + outsider);
      FenceSql.run(c, "DROP ROLE " + outsider);
    }
  }

  /** A session of a role without any privilege on the fence holds the old issuance key. */
  @ParameterizedTest
  @ValueSource(strings = {"READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"})
  void anOutsidersAdvisoryLockDoesNotHoldAcquisitionsOff(String isolation) throws SQLException {
    try (Connection holder = db.connect(outsider);
        AppRole app = AppRole.create(db, "issuance_lock_app");
        Connection c = app.connect()) {
      FenceSql.run(holder, "SELECT pg_advisory_lock(" + oldKey + ")");
      assertAcquisitionsPass(c, isolation, FenceSql.unique("issuance-lock/outsider"));
      FenceSql.run(holder, "SELECT pg_advisory_unlock_all()");
    }
  }

  /** The application's own login holds the old key: it cannot stop other holders acquiring. */
  @ParameterizedTest
  @ValueSource(strings = {"READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"})
  void anApplicationSessionsAdvisoryLockDoesNotHoldAcquisitionsOff(String isolation)
      throws SQLException {
    try (AppRole app = AppRole.create(db, "issuance_lock_app");
        Connection holder = app.connect();
        Connection c = app.connect()) {
      FenceSql.run(holder, "SELECT pg_advisory_lock(" + oldKey + ")");
      assertAcquisitionsPass(c, isolation, FenceSql.unique("issuance-lock/app"));
      FenceSql.run(holder, "SELECT pg_advisory_unlock_all()");
    }
  }

  /** A shared hold of the old key held the operator's exclusive issuance lock off. */
  @Test
  void aSharedAdvisoryLockDoesNotHoldAdvanceSequenceOff() throws SQLException {
    try (Connection holder = db.connect(outsider);
        Connection operator = db.connect()) {
      FenceSql.run(holder, "SELECT pg_advisory_lock_shared(" + oldKey + ")");
      FenceSql.run(operator, "SET lock_timeout = '2s'");
      long before = FenceSql.longValue(operator, "SELECT last_value FROM fencing.token_seq");
      assertThat(FenceSql.longValue(operator, "SELECT fencing.advance_sequence(5)"))
          .isGreaterThan(before);
      FenceSql.run(holder, "SELECT pg_advisory_unlock_all()");
    }
  }

  /** Neither the outsider nor the application may lock (or read) the gate, in any mode. */
  @Test
  void onlyTheOwnerLocksTheGate() throws SQLException {
    try (AppRole app = AppRole.create(db, "issuance_gate_app");
        Connection member = app.connect();
        Connection stranger = db.connect(outsider)) {
      for (Connection c : List.of(member, stranger)) {
        c.setAutoCommit(false);
        for (String mode :
            List.of(
                "ACCESS SHARE",
                "ROW SHARE",
                "ROW EXCLUSIVE",
                "SHARE UPDATE EXCLUSIVE",
                "SHARE",
                "SHARE ROW EXCLUSIVE",
                "EXCLUSIVE",
                "ACCESS EXCLUSIVE")) {
          SQLException e =
              catchThrowableOfType(
                  SQLException.class,
                  () -> FenceSql.run(c, "LOCK TABLE fencing.issuance_gate IN " + mode + " MODE"));
          assertThat((Throwable) e).as(mode).isNotNull();
          assertThat(e.getSQLState()).as(mode).isEqualTo("42501");
          c.rollback();
        }
        SQLException e =
            catchThrowableOfType(
                SQLException.class,
                () -> FenceSql.run(c, "SELECT FROM fencing.issuance_gate FOR UPDATE"));
        assertThat((Throwable) e).isNotNull();
        assertThat(e.getSQLState()).isEqualTo("42501");
        c.rollback();
      }
    }
  }

  /** The gate still serialises: an exclusive holder (the owner's advance) holds issuance off. */
  @ParameterizedTest
  @ValueSource(strings = {"READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"})
  void theExclusiveGateHoldsAnAcquisitionOffUntilItsTransactionEnds(String isolation)
      throws Exception {
    String res = FenceSql.unique("issuance-lock/gate");
    try (AppRole app = AppRole.create(db, "issuance_gate_app");
        Connection operator = db.connect();
        Connection observer = db.connect();
        Connection c = app.connect()) {
      long first = Fence.acquire(c, res, "a", TTL);
      Fence.release(c, res, first);
      operator.setAutoCommit(false);
      FenceSql.run(operator, "SELECT fencing.advance_sequence(1)"); // holds the gate EXCLUSIVE
      long operatorPid = FenceSql.longValue(operator, "SELECT pg_backend_pid()");
      long pid = FenceSql.longValue(c, "SELECT pg_backend_pid()");
      c.setAutoCommit(false);
      FenceSql.run(c, "SET TRANSACTION ISOLATION LEVEL " + isolation);
      CompletableFuture<Long> second =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return Fence.acquire(c, res, "b", TTL);
                } catch (SQLException e) {
                  throw new IllegalStateException(e);
                }
              });
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (!FenceSql.longs(observer, "SELECT unnest(pg_blocking_pids(?::int))::bigint", pid)
          .contains(operatorPid)) {
        assertThat(System.nanoTime()).as("the acquisition waits for the gate").isLessThan(deadline);
        Thread.onSpinWait();
      }
      assertThat(second).isNotDone();
      operator.commit();
      long token = second.get(30, TimeUnit.SECONDS);
      c.commit();
      assertThat(token).isGreaterThan(first);
    }
  }

  /**
   * A first acquisition (a new resource), a handover after a release, and one after a renewal: each
   * returns a token, and they increase.
   */
  private static void assertAcquisitionsPass(Connection c, String isolation, String res)
      throws SQLException {
    FenceSql.run(c, "SET lock_timeout = '2s'");
    try {
      long last = 0;
      for (int i = 0; i < 3; i++) {
        c.setAutoCommit(false);
        FenceSql.run(c, "SET TRANSACTION ISOLATION LEVEL " + isolation);
        long token = Fence.acquire(c, res, "holder-" + i, TTL);
        c.commit();
        c.setAutoCommit(true);
        assertThat(token).isGreaterThan(last);
        if (i == 1) {
          Fence.renew(c, res, token, TTL);
        }
        Fence.release(c, res, token);
        last = token;
      }
    } finally {
      c.setAutoCommit(true);
      FenceSql.run(c, "RESET lock_timeout");
    }
  }
}
