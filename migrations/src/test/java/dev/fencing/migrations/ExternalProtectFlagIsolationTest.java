package dev.fencing.migrations;

import static dev.fencing.migrations.ExternalSnapshotFixture.begin;
import static dev.fencing.migrations.ExternalSnapshotFixture.external;
import static dev.fencing.migrations.Fence.STALE;
import static dev.fencing.migrations.Fence.assertFails;
import static dev.fencing.migrations.Interleaving.SERIALIZATION_FAILURE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.migrations.Interleaving.Isolation;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * V43: under REPEATABLE READ and SERIALIZABLE a check of an external resource whose snapshot
 * predates a protect() or unprotect() of a table of that resource (which updates the resource row's
 * has_protected and issues nothing) is not told that a newer token was issued: the holder of the
 * token the snapshot holds current gets a serialization failure, and its retry is accepted (V35 did
 * this for local resources). A newer token checked after the snapshot is still refused as stale: at
 * once without a protect, by the retry with one; a token below the snapshot's max_seen at once.
 */
class ExternalProtectFlagIsolationTest extends InterleavingTestBase {

  private static AppRole app;

  @BeforeAll
  static void createRole() throws SQLException {
    app = AppRole.create(db, "external_protect_app");
  }

  @AfterAll
  static void dropRole() throws SQLException {
    app.close();
  }

  @ParameterizedTest
  @EnumSource(
      value = Isolation.class,
      names = {"REPEATABLE_READ", "SERIALIZABLE"})
  void theCurrentTokenMayRetryAfterAProtectOrUnprotectSinceTheSnapshot(Isolation iso)
      throws SQLException {
    String res = "external-protect/current-" + iso.tag();
    String table = "external_protect_" + iso.tag().replace('-', '_');
    try (Connection operator = db.connect();
        Connection c = app.connect()) {
      external(operator, res, 100L); // the current holder's token
      FenceSql.run(operator, "CREATE TABLE " + table + " (id int)");

      // protect: has_protected set after the snapshot
      begin(c, iso); // the holder's snapshot: max_seen 100
      FenceSql.run(operator, "SELECT fencing.protect(?::regclass, ?)", table, res);
      SQLException e = assertFails(SERIALIZATION_FAILURE, () -> Fence.check(c, res, 100L));
      c.rollback();
      assertThat(e.getMessage())
          .contains("resource \"" + res + "\" was changed after this transaction began")
          .contains("protect or unprotect")
          .doesNotContain("stale");
      begin(c, iso); // the retry
      assertThat(Fence.check(c, res, 100L)).isEqualTo(100L);
      c.commit();

      // unprotect: has_protected cleared after the snapshot
      begin(c, iso);
      FenceSql.run(operator, "SELECT fencing.unprotect(?::regclass)", table);
      assertFails(SERIALIZATION_FAILURE, () -> Fence.check(c, res, 100L));
      c.rollback();
      begin(c, iso);
      assertThat(Fence.check(c, res, 100L)).isEqualTo(100L);
      c.commit();
      assertThat(Fence.maxSeen(operator, res)).isEqualTo(100L);
    }
  }

  /** The control: a newer token checked after the snapshot, no protect: stale at once. */
  @ParameterizedTest
  @EnumSource(
      value = Isolation.class,
      names = {"REPEATABLE_READ", "SERIALIZABLE"})
  void aNewerTokenAfterTheSnapshotIsStillStaleAtOnce(Isolation iso) throws SQLException {
    try (Connection operator = db.connect();
        Connection c = app.connect()) {
      ExternalSnapshotFixture.assertNewerTokenAfterTheSnapshotStaleAtOnce(
          operator, c, "external-protect/newer-" + iso.tag(), iso);
    }
  }

  /**
   * A newer token and a protect after the snapshot: the snapshot cannot tell which changed the row,
   * so the current holder's check is retried, and the retry refuses it as stale.
   */
  @ParameterizedTest
  @EnumSource(
      value = Isolation.class,
      names = {"REPEATABLE_READ", "SERIALIZABLE"})
  void aNewerTokenAndAProtectAfterTheSnapshotAreStaleOnTheRetry(Isolation iso) throws SQLException {
    String res = "external-protect/newer-and-protect-" + iso.tag();
    String table = "external_protect_newer_" + iso.tag().replace('-', '_');
    try (Connection operator = db.connect();
        Connection c = app.connect()) {
      external(operator, res, 100L);
      FenceSql.run(operator, "CREATE TABLE " + table + " (id int)");

      begin(c, iso);
      Fence.check(operator, res, 120L);
      FenceSql.run(operator, "SELECT fencing.protect(?::regclass, ?)", table, res);
      assertFails(SERIALIZATION_FAILURE, () -> Fence.check(c, res, 100L));
      c.rollback();
      begin(c, iso);
      SQLException e = assertFails(STALE, () -> Fence.check(c, res, 100L));
      c.rollback();
      assertThat(e.getMessage()).contains("stale fencing token 100");
      assertThat(Fence.maxSeen(operator, res)).isEqualTo(120L);
    }
  }

  /** A token superseded before the snapshot stays stale at once after a protect. */
  @ParameterizedTest
  @EnumSource(
      value = Isolation.class,
      names = {"REPEATABLE_READ", "SERIALIZABLE"})
  void aTokenSupersededBeforeTheSnapshotStaysStaleAfterAProtect(Isolation iso) throws SQLException {
    String res = "external-protect/superseded-" + iso.tag();
    String table = "external_protect_superseded_" + iso.tag().replace('-', '_');
    try (Connection operator = db.connect();
        Connection c = app.connect()) {
      external(operator, res, 100L);
      Fence.check(operator, res, 120L);
      FenceSql.run(operator, "CREATE TABLE " + table + " (id int)");

      begin(c, iso); // the snapshot: 120 is current
      FenceSql.run(operator, "SELECT fencing.protect(?::regclass, ?)", table, res);
      SQLException e = assertFails(STALE, () -> Fence.check(c, res, 100L));
      c.rollback();
      assertThat(e.getMessage()).contains("stale fencing token 100");
      assertThat(Fence.maxSeen(operator, res)).isEqualTo(120L);
    }
  }
}
