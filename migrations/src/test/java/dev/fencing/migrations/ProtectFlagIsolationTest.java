package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.STALE;
import static dev.fencing.migrations.Fence.assertFails;
import static dev.fencing.migrations.Interleaving.SERIALIZATION_FAILURE;
import static dev.fencing.migrations.Interleaving.begin;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.migrations.Interleaving.Isolation;
import dev.fencing.migrations.Interleaving.Session;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * V35: under REPEATABLE READ and SERIALIZABLE a check whose snapshot predates a protect() or
 * unprotect() of a table of its resource (which updates the resource row's has_protected, issuing
 * nothing) is not told that a newer token was issued: the holder of the token the snapshot holds
 * current gets a serialization failure, and its retry is accepted. A token superseded before the
 * snapshot, or after it, is still refused as stale.
 */
class ProtectFlagIsolationTest extends InterleavingTestBase {

  @ParameterizedTest
  @EnumSource(
      value = Isolation.class,
      names = {"REPEATABLE_READ", "SERIALIZABLE"})
  void theCurrentTokenMayRetryAfterAProtectOrUnprotectSinceTheSnapshot(Isolation isolation)
      throws SQLException {
    String res = "protect-flag/" + isolation.tag();
    String table = "protect_flag_" + isolation.tag().replace('-', '_');
    try (Connection observer = db.connect();
        Session writer = Interleaving.writer(db, isolation)) {
      long t1 = Fence.acquire(observer, res, "holder-a", LEASE);
      FenceSql.run(observer, "CREATE TABLE " + table + " (id int)");

      // protect: has_protected set after the snapshot
      begin(writer, isolation);
      FenceSql.run(writer.c(), "SELECT pg_current_xact_id()"); // the snapshot, before protect
      FenceSql.run(observer, "SELECT fencing.protect(?::regclass, ?)", table, res);
      SQLException e = assertFails(SERIALIZATION_FAILURE, () -> Fence.check(writer.c(), res, t1));
      assertThat(e.getMessage())
          .contains("resource \"" + res + "\" was changed after this transaction began")
          .doesNotContain("stale");
      writer.c().rollback();
      begin(writer, isolation); // the retry
      assertThat(Fence.check(writer.c(), res, t1)).isEqualTo(t1);
      writer.c().commit();

      // unprotect: has_protected cleared after the snapshot
      begin(writer, isolation);
      FenceSql.run(writer.c(), "SELECT pg_current_xact_id()");
      FenceSql.run(observer, "SELECT fencing.unprotect(?::regclass)", table);
      assertFails(SERIALIZATION_FAILURE, () -> Fence.check(writer.c(), res, t1));
      writer.c().rollback();
      begin(writer, isolation);
      assertThat(Fence.check(writer.c(), res, t1)).isEqualTo(t1);
      writer.c().commit();

      // a newer token and a protect after the snapshot: stale, as before
      begin(writer, isolation);
      FenceSql.run(writer.c(), "SELECT pg_current_xact_id()");
      assertThat(Fence.release(observer, res, t1)).isTrue();
      long t2 = Fence.acquire(observer, res, "holder-b", LEASE);
      assertThat(t2).isGreaterThan(t1);
      FenceSql.run(observer, "SELECT fencing.protect(?::regclass, ?)", table, res);
      SQLException stale = assertFails(STALE, () -> Fence.check(writer.c(), res, t1));
      assertThat(stale.getMessage()).contains("stale fencing token " + t1);
      writer.c().rollback();
    }
  }

  @ParameterizedTest
  @EnumSource(
      value = Isolation.class,
      names = {"REPEATABLE_READ", "SERIALIZABLE"})
  void aTokenSupersededBeforeTheSnapshotStaysStaleAfterAProtect(Isolation isolation)
      throws SQLException {
    String res = "protect-flag-superseded/" + isolation.tag();
    String table = "protect_flag_superseded_" + isolation.tag().replace('-', '_');
    try (Connection observer = db.connect();
        Session writer = Interleaving.writer(db, isolation)) {
      long t1 = Fence.acquire(observer, res, "holder-a", LEASE);
      assertThat(Fence.release(observer, res, t1)).isTrue();
      long t2 = Fence.acquire(observer, res, "holder-b", LEASE);
      assertThat(t2).isGreaterThan(t1);
      FenceSql.run(observer, "CREATE TABLE " + table + " (id int)");

      begin(writer, isolation);
      FenceSql.run(writer.c(), "SELECT pg_current_xact_id()"); // the snapshot: t2 is current
      FenceSql.run(observer, "SELECT fencing.protect(?::regclass, ?)", table, res);
      SQLException e = assertFails(STALE, () -> Fence.check(writer.c(), res, t1));
      assertThat(e.getMessage()).contains("stale fencing token " + t1);
      writer.c().rollback();

      // and the current holder's check, in the same interleaving, may retry
      begin(writer, isolation);
      FenceSql.run(writer.c(), "SELECT pg_current_xact_id()");
      FenceSql.run(observer, "SELECT fencing.unprotect(?::regclass)", table);
      assertFails(SERIALIZATION_FAILURE, () -> Fence.check(writer.c(), res, t2));
      writer.c().rollback();
    }
  }

  /**
   * The application's login (a member of the app role, no privilege on the lease table) gets the
   * same serialization failure: the lease row's share lock is taken by the fence's owner.
   */
  @ParameterizedTest
  @EnumSource(
      value = Isolation.class,
      names = {"REPEATABLE_READ", "SERIALIZABLE"})
  void theApplicationRoleMayRetryAfterAProtect(Isolation isolation) throws SQLException {
    String res = "protect-flag-app/" + isolation.tag();
    String table = "protect_flag_app_" + isolation.tag().replace('-', '_');
    AppRole app = AppRole.create(db, "protect_flag_app");
    try (Connection observer = db.connect();
        Connection writer = app.connect()) {
      writer.setAutoCommit(false);
      writer.setTransactionIsolation(isolation.jdbcLevel);
      long t1 = Fence.acquire(observer, res, "holder-a", LEASE);
      FenceSql.run(observer, "CREATE TABLE " + table + " (id int)");

      FenceSql.run(writer, "SELECT pg_current_xact_id()"); // the snapshot, before protect
      FenceSql.run(observer, "SELECT fencing.protect(?::regclass, ?)", table, res);
      SQLException e = assertFails(SERIALIZATION_FAILURE, () -> Fence.check(writer, res, t1));
      assertThat(e.getMessage()).contains("was changed after this transaction began");
      writer.rollback();
      assertThat(Fence.check(writer, res, t1)).isEqualTo(t1); // the retry
      writer.commit();
    } finally {
      app.close();
    }
  }
}
