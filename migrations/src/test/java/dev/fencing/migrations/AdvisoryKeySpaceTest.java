package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.INVALID_ARGUMENT;
import static dev.fencing.migrations.Fence.STALE;
import static dev.fencing.migrations.Fence.assertFails;
import static dev.fencing.migrations.Interleaving.PATIENCE;
import static dev.fencing.migrations.Interleaving.SERIALIZATION_FAILURE;
import static dev.fencing.migrations.Interleaving.async;
import static dev.fencing.migrations.Interleaving.awaitBlockedBy;
import static dev.fencing.migrations.Interleaving.begin;
import static dev.fencing.migrations.Interleaving.join;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.migrations.Interleaving.Isolation;
import dev.fencing.migrations.Interleaving.Session;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 14: the READ COMMITTED accept path holds an advisory share lock in the fence's key space;
 * set_advisory_key_space moves it away from the application's own two-integer advisory locks.
 */
class AdvisoryKeySpaceTest extends InterleavingTestBase {
  private static final long DEFAULT_SPACE = 1178946115L;
  private static final long OTHER_SPACE = 4242L;

  @Test
  void theKeySpaceMovesTheFenceAwayFromTheApplicationsAdvisoryLocks() throws SQLException {
    String res = "key-space";
    try (Connection observer = db.connect();
        Session admin = Interleaving.session(db);
        Session application = Interleaving.session(db);
        Session writer = Interleaving.writer(db, Isolation.READ_COMMITTED);
        Session acquirer = Interleaving.session(db)) {
      long t1 = Fence.acquire(admin.c(), res, "holder-a", LEASE);
      assertThat(Fence.release(admin.c(), res, t1)).isTrue();
      long key =
          FenceSql.longValue(
              observer,
              "SELECT fencing.advisory_key(id) FROM fencing.resource WHERE name = ?",
              res);
      try {
        // the application's own lock on the fence's default key holds the check off
        lockExclusively(application, DEFAULT_SPACE, key);
        begin(writer, Isolation.READ_COMMITTED);
        CompletableFuture<Long> check = async(pool(), () -> Fence.check(writer.c(), res, t1));
        awaitBlockedBy(observer, writer.pid(), application.pid());
        unlock(application, DEFAULT_SPACE, key);
        assertThat(join(check)).isEqualTo(t1);
        writer.c().rollback();

        // moved: the same application lock no longer meets the fence
        assertThat(
                FenceSql.longValue(
                    admin.c(), "SELECT fencing.set_advisory_key_space(?)", (int) OTHER_SPACE))
            .isEqualTo(DEFAULT_SPACE);
        lockExclusively(application, DEFAULT_SPACE, key);
        begin(writer, Isolation.READ_COMMITTED);
        assertThat(Interleaving.withoutBlocking(pool(), () -> Fence.check(writer.c(), res, t1)))
            .isEqualTo(t1);
        assertThat(
                FenceSql.longValue(
                    observer,
                    "SELECT count(*) FROM pg_locks WHERE pid = ? AND locktype = 'advisory'"
                        + " AND mode = 'ShareLock' AND classid = ?::oid AND objsubid = 2",
                    writer.pid(),
                    OTHER_SPACE))
            .as("the check's share lock, in the new key space")
            .isOne();

        // and an acquisition still waits for the checked transaction, in the new key space
        CompletableFuture<Fence.Acquired> acquire =
            async(pool(), () -> Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, PATIENCE));
        awaitBlockedBy(observer, acquirer.pid(), writer.pid());
        writer.c().commit();
        Fence.Acquired acquired = join(acquire);
        assertThat(acquired.acquired()).isTrue();
        assertThat(acquired.token()).isNotNull().isGreaterThan(t1);
        unlock(application, DEFAULT_SPACE, key);
      } finally {
        FenceSql.longValue(
            admin.c(), "SELECT fencing.set_advisory_key_space(?)", (int) DEFAULT_SPACE);
      }
    }
  }

  /**
   * V32: under REPEATABLE READ and SERIALIZABLE a check whose snapshot predates a key space change
   * (which updates every resource row, issuing nothing) is not told that a newer token was issued:
   * it gets a serialization failure saying the key space changed, and its retry is accepted. A
   * token superseded after the snapshot is still refused as stale.
   */
  @ParameterizedTest
  @EnumSource(
      value = Isolation.class,
      names = {"REPEATABLE_READ", "SERIALIZABLE"})
  void aCheckWhoseSnapshotPredatesAKeySpaceChangeMayRetry(Isolation isolation) throws SQLException {
    String res = "key-space-snapshot/" + isolation.tag();
    try (Connection observer = db.connect();
        Session admin = Interleaving.session(db);
        Session writer = Interleaving.writer(db, isolation)) {
      long t1 = Fence.acquire(observer, res, "holder-a", LEASE);
      try {
        begin(writer, isolation);
        FenceSql.run(writer.c(), "SELECT pg_current_xact_id()"); // the snapshot, before the change
        FenceSql.longValue(
            admin.c(), "SELECT fencing.set_advisory_key_space(?)", (int) OTHER_SPACE);
        SQLException e = assertFails(SERIALIZATION_FAILURE, () -> Fence.check(writer.c(), res, t1));
        assertThat(e.getMessage())
            .contains("advisory key space of resource \"" + res + "\" was changed")
            .doesNotContain("stale");
        writer.c().rollback();

        begin(writer, isolation); // the retry
        assertThat(Fence.check(writer.c(), res, t1)).isEqualTo(t1);
        writer.c().commit();

        // a newer token after the snapshot, no key space change: stale, as before
        begin(writer, isolation);
        FenceSql.run(writer.c(), "SELECT pg_current_xact_id()");
        assertThat(Fence.release(observer, res, t1)).isTrue();
        long t2 = Fence.acquire(observer, res, "holder-b", LEASE);
        assertThat(t2).isGreaterThan(t1);
        assertFails(STALE, () -> Fence.check(writer.c(), res, t1));
        writer.c().rollback();
      } finally {
        writer.c().rollback();
        FenceSql.longValue(
            admin.c(), "SELECT fencing.set_advisory_key_space(?)", (int) DEFAULT_SPACE);
      }
    }
  }

  /**
   * V32's key space 40001 is for a token the snapshot holds current: a token already superseded in
   * the snapshot is stale whatever changed after it, and stays refused as stale (ZF001, do not
   * retry), as before V32, not told to retry with "no newer token is known to this transaction".
   */
  @ParameterizedTest
  @EnumSource(
      value = Isolation.class,
      names = {"REPEATABLE_READ", "SERIALIZABLE"})
  void aTokenSupersededBeforeTheSnapshotStaysStaleAfterAKeySpaceChange(Isolation isolation)
      throws SQLException {
    String res = "key-space-superseded/" + isolation.tag();
    try (Connection observer = db.connect();
        Session admin = Interleaving.session(db);
        Session writer = Interleaving.writer(db, isolation)) {
      long t1 = Fence.acquire(observer, res, "holder-a", LEASE);
      assertThat(Fence.release(observer, res, t1)).isTrue();
      long t2 = Fence.acquire(observer, res, "holder-b", LEASE);
      assertThat(t2).isGreaterThan(t1);
      try {
        begin(writer, isolation);
        FenceSql.run(writer.c(), "SELECT pg_current_xact_id()"); // the snapshot: t2 is current
        FenceSql.longValue(
            admin.c(), "SELECT fencing.set_advisory_key_space(?)", (int) OTHER_SPACE);
        SQLException e = assertFails(STALE, () -> Fence.check(writer.c(), res, t1));
        assertThat(e.getMessage()).contains("stale fencing token " + t1);
        writer.c().rollback();
      } finally {
        writer.c().rollback();
        FenceSql.longValue(
            admin.c(), "SELECT fencing.set_advisory_key_space(?)", (int) DEFAULT_SPACE);
      }
    }
  }

  /**
   * V35: a key space changed and changed back after the snapshot (V32's catalog read sees no
   * change) updated the row and issued nothing: the current token's check may retry.
   */
  @ParameterizedTest
  @EnumSource(
      value = Isolation.class,
      names = {"REPEATABLE_READ", "SERIALIZABLE"})
  void aKeySpaceChangedAndChangedBackAfterTheSnapshotMayRetry(Isolation isolation)
      throws SQLException {
    String res = "key-space-back/" + isolation.tag();
    try (Connection observer = db.connect();
        Session admin = Interleaving.session(db);
        Session writer = Interleaving.writer(db, isolation)) {
      long t1 = Fence.acquire(observer, res, "holder-a", LEASE);
      try {
        begin(writer, isolation);
        FenceSql.run(writer.c(), "SELECT pg_current_xact_id()"); // the snapshot
        FenceSql.longValue(
            admin.c(), "SELECT fencing.set_advisory_key_space(?)", (int) OTHER_SPACE);
        FenceSql.longValue(
            admin.c(), "SELECT fencing.set_advisory_key_space(?)", (int) DEFAULT_SPACE);
        SQLException e = assertFails(SERIALIZATION_FAILURE, () -> Fence.check(writer.c(), res, t1));
        assertThat(e.getMessage()).doesNotContain("stale");
        writer.c().rollback();
        begin(writer, isolation); // the retry
        assertThat(Fence.check(writer.c(), res, t1)).isEqualTo(t1);
        writer.c().commit();
      } finally {
        writer.c().rollback();
        FenceSql.longValue(
            admin.c(), "SELECT fencing.set_advisory_key_space(?)", (int) DEFAULT_SPACE);
      }
    }
  }

  @Test
  void aNullKeySpaceIsRefusedAndChangesNothing() throws SQLException {
    try (Connection c = db.connect()) {
      Fence.acquire(c, "key-space-null", "holder-a", LEASE);
      FenceSql.Snapshot before = FenceSql.snapshot(c);
      String spaces = spaces(c);
      assertFails(
          INVALID_ARGUMENT,
          () -> FenceSql.longValue(c, "SELECT fencing.set_advisory_key_space(NULL)"));
      assertThat(FenceSql.snapshot(c)).isEqualTo(before);
      assertThat(spaces(c)).isEqualTo(spaces).isEqualTo(String.valueOf(DEFAULT_SPACE));
    }
  }

  /**
   * V34: the previous key space is returned when it was negative too (PostgreSQL prints such a
   * column default as {@code '-5'::integer}; V28 returned NULL for it), and a check is accepted in
   * the negative space.
   */
  @Test
  void thePreviousKeySpaceIsReturnedWhenItWasNegative() throws SQLException {
    try (Connection c = db.connect()) {
      long token = Fence.acquire(c, "key-space-negative", "holder-a", LEASE);
      try {
        assertThat(previous(c, -5)).isEqualTo("1178946115");
        assertThat(previous(c, Integer.MIN_VALUE)).isEqualTo("-5");
        assertThat(previous(c, 7)).isEqualTo(String.valueOf(Integer.MIN_VALUE));
        assertThat(previous(c, -5)).isEqualTo("7");
        assertThat(spaces(c)).isEqualTo("-5");
        c.setAutoCommit(false);
        assertThat(Fence.check(c, "key-space-negative", token)).isEqualTo(token);
        c.rollback();
        c.setAutoCommit(true);
      } finally {
        assertThat(previous(c, (int) DEFAULT_SPACE)).isEqualTo("-5");
      }
    }
  }

  /** What set_advisory_key_space(space) returns, as text ("null" for NULL). */
  private static String previous(Connection c, int space) throws SQLException {
    return String.valueOf(
        FenceSql.string(c, "SELECT fencing.set_advisory_key_space(?)::text", space));
  }

  private static String spaces(Connection c) throws SQLException {
    return String.valueOf(
        FenceSql.string(
            c, "SELECT string_agg(DISTINCT lock_space::text, ',') FROM fencing.resource"));
  }

  private static void lockExclusively(Session s, long space, long key) throws SQLException {
    FenceSql.run(s.c(), "SELECT pg_advisory_lock(?::int, ?::int)", space, key);
  }

  private static void unlock(Session s, long space, long key) throws SQLException {
    assertThat(
            FenceSql.string(s.c(), "SELECT pg_advisory_unlock(?::int, ?::int)::text", space, key))
        .isEqualTo("true");
  }
}
