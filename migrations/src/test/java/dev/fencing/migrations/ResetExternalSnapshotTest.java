package dev.fencing.migrations;

import static dev.fencing.migrations.ExternalSnapshotFixture.begin;
import static dev.fencing.migrations.ExternalSnapshotFixture.external;
import static dev.fencing.migrations.Fence.assertFails;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.migrations.Interleaving.Isolation;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * V42: a REPEATABLE READ or SERIALIZABLE transaction whose snapshot predates a {@code
 * reset_external} sees the external resource's old {@code max_seen}; the row changed after its
 * snapshot, so its check cannot lock it. It was refused as stale ({@code ZF001} "a newer token was
 * issued after this transaction began", hint "do not retry") also when the reset had lowered {@code
 * max_seen} below its token, the current holder's. Now, when a reset committed after the snapshot,
 * the check answers {@code 40001}: its retry decides on the resource as the reset left it. A newer
 * token checked after the snapshot, without a reset, is still {@code ZF001}.
 */
class ResetExternalSnapshotTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static AppRole app;

  @BeforeAll
  static void migrate() throws SQLException {
    assertThat(Fence.migrate(db)).isEqualTo(Fence.MIGRATIONS);
    app = AppRole.create(db, "reset_app");
  }

  @AfterAll
  static void dropRole() throws SQLException {
    app.close();
  }

  /** The reset lowered max_seen below the token: the retry accepts it. */
  @ParameterizedTest
  @EnumSource(
      value = Isolation.class,
      names = {"REPEATABLE_READ", "SERIALIZABLE"})
  void aCheckUnderASnapshotOlderThanAResetIsRetriedNotRefusedAsStale(Isolation iso)
      throws SQLException {
    String r = "reset-snapshot/lowered-" + iso.tag();
    try (Connection operator = db.connect();
        Connection c = app.connect()) {
      external(operator, r, 100L); // a token of the old issuer

      begin(c, iso); // the holder's snapshot: max_seen 100
      // the old issuer's holders are gone; the new issuer is at 41
      assertThat(FenceSql.longValue(operator, "SELECT fencing.reset_external(?, 41)", r))
          .isEqualTo(100L);

      SQLException e =
          assertFails(Interleaving.SERIALIZATION_FAILURE, () -> Fence.check(c, r, 42L));
      c.rollback();
      assertThat(e.getMessage())
          .contains("resource \"" + r + "\" was changed after this transaction began")
          .contains("reset_external");
      assertThat(Fence.maxSeen(operator, r)).as("nothing changed").isEqualTo(41L);

      begin(c, iso); // the retry
      assertThat(Fence.check(c, r, 42L)).isEqualTo(42L);
      c.commit();
      assertThat(Fence.maxSeen(operator, r)).isEqualTo(42L);
    }
  }

  /** The reset left the token stale: after the retry, a refusal as stale. */
  @ParameterizedTest
  @EnumSource(
      value = Isolation.class,
      names = {"REPEATABLE_READ", "SERIALIZABLE"})
  void aTokenTheResetLeftStaleIsRefusedByTheRetry(Isolation iso) throws SQLException {
    String r = "reset-snapshot/still-stale-" + iso.tag();
    try (Connection operator = db.connect();
        Connection c = app.connect()) {
      external(operator, r, 100L);

      begin(c, iso);
      FenceSql.run(operator, "SELECT fencing.reset_external(?, 41)", r);

      assertFails(Interleaving.SERIALIZATION_FAILURE, () -> Fence.check(c, r, 30L));
      c.rollback();
      begin(c, iso);
      SQLException e = assertFails(Fence.STALE, () -> Fence.check(c, r, 30L));
      c.rollback();
      assertThat(e.getMessage()).contains("stale fencing token 30");
      assertThat(Fence.maxSeen(operator, r)).isEqualTo(41L);
    }
  }

  /** The control: a newer token checked after the snapshot, no reset: stale at once, as before. */
  @ParameterizedTest
  @EnumSource(
      value = Isolation.class,
      names = {"REPEATABLE_READ", "SERIALIZABLE"})
  void aNewerTokenAfterTheSnapshotIsStillStaleAtOnce(Isolation iso) throws SQLException {
    try (Connection operator = db.connect();
        Connection c = app.connect()) {
      ExternalSnapshotFixture.assertNewerTokenAfterTheSnapshotStaleAtOnce(
          operator, c, "reset-snapshot/newer-" + iso.tag(), iso);
    }
  }

  /**
   * The probe's share lock on external_reset goes with the refused transaction: it is released when
   * the refusal aborts the transaction (before its ROLLBACK), so a reset of another resource is not
   * held up by a client that has not rolled back yet (a held lock would fail it at the lock
   * timeout, 55P03).
   */
  @ParameterizedTest
  @EnumSource(
      value = Isolation.class,
      names = {"REPEATABLE_READ", "SERIALIZABLE"})
  void aRefusedCheckKeepsNoLockThatHoldsUpAReset(Isolation iso) throws SQLException {
    String r = "reset-snapshot/refused-" + iso.tag();
    String other = "reset-snapshot/other-" + iso.tag();
    try (Connection operator = db.connect();
        Connection c = app.connect()) {
      external(operator, r, 100L);
      FenceSql.run(operator, "SELECT fencing.create_resource(?, true)", other);

      begin(c, iso);
      Fence.check(operator, r, 120L); // the next holder, no reset: the probe takes its lock
      assertFails(Fence.STALE, () -> Fence.check(c, r, 100L));
      // c has not rolled back
      FenceSql.run(operator, "SET lock_timeout = '30s'");
      assertThat(FenceSql.longValue(operator, "SELECT fencing.reset_external(?, 7)", other))
          .isZero();
      c.rollback();
      assertThat(Fence.maxSeen(operator, other)).isEqualTo(7L);
    }
  }
}
