package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.assertFails;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.migrations.Interleaving.Isolation;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * What the tests of an external resource's check under a snapshot older than a change of the
 * resource's row share ({@link ExternalProtectFlagIsolationTest}: protect/unprotect, {@link
 * ResetExternalSnapshotTest}: reset_external): the resource at a current token, a transaction
 * opened at an isolation level that takes a snapshot, and the control that a newer token checked
 * after that snapshot, with nothing else changed, is refused as stale at once.
 */
final class ExternalSnapshotFixture {
  private ExternalSnapshotFixture() {}

  /** Creates the external resource {@code resource} and checks {@code token} (committed). */
  static String external(Connection operator, String resource, long token) throws SQLException {
    Interleaving.createResource(operator, resource, true, false);
    Fence.check(operator, resource, token);
    return resource;
  }

  /** Opens a transaction at {@code iso} and takes its snapshot. */
  static void begin(Connection c, Isolation iso) throws SQLException {
    c.setAutoCommit(false);
    c.setTransactionIsolation(iso.jdbcLevel);
    assertThat(FenceSql.string(c, "SELECT current_setting('transaction_isolation')"))
        .isEqualTo(iso.setting);
  }

  /**
   * The control: {@code resource} at token 100 ({@link #external}); on {@code c}, a snapshot at
   * {@code iso}; the next holder checks 120 after it: the check of 100 on {@code c} is stale at
   * once (ZF001, no retry), and max_seen stays 120.
   */
  static void assertNewerTokenAfterTheSnapshotStaleAtOnce(
      Connection operator, Connection c, String resource, Isolation iso) throws SQLException {
    external(operator, resource, 100L);

    begin(c, iso);
    Fence.check(operator, resource, 120L); // the next holder
    SQLException e = assertFails(Fence.STALE, () -> Fence.check(c, resource, 100L));
    c.rollback();
    assertThat(e.getMessage())
        .contains(
            "stale fencing token 100 for resource \"" + resource + "\": a newer token was issued");
    assertThat(Fence.maxSeen(operator, resource)).isEqualTo(120L);
  }
}
