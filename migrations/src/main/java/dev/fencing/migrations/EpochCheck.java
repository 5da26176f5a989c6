package dev.fencing.migrations;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@link FencingMigrations#validate()} says about token epochs (migration V12): when the
 * operator's {@code advance_epoch()} is due, and when the next issuance will adopt a new epoch by
 * itself (a restore into a cluster or database the fence has not seen).
 */
final class EpochCheck {
  private EpochCheck() {}

  /**
   * Notes about the epoch of {@code schema}'s fence; empty when V12 is not applied or all is well.
   */
  static List<String> notes(Connection c, String schema) throws SQLException {
    if (!FencingMigrations.exists(
        c,
        "SELECT FROM pg_catalog.pg_proc WHERE oid = to_regprocedure(?)",
        schema + ".epoch_status()")) {
      return List.of();
    }
    if (isInRecovery(c)) {
      return List.of(); // a standby issues nothing; its promotion moves to a new epoch by itself
    }
    List<String> notes = new ArrayList<>();
    try (PreparedStatement ps =
            c.prepareStatement(
                "SELECT epoch, adoption_pending, advance_due FROM " + schema + ".epoch_status()");
        ResultSet rs = ps.executeQuery()) {
      if (rs.next()) {
        if (rs.getBoolean(2)) {
          notes.add(
              "token epoch: this fence was restored into a cluster or database it has not seen;"
                  + " the next issuance adopts epoch "
                  + rs.getLong(1)
                  + " by itself (above every token issued before), or run SELECT "
                  + schema
                  + ".advance_epoch() now");
        }
        String due = rs.getString(3);
        if (due != null) {
          notes.add(
              "token epoch: advance_epoch() is due: "
                  + due
                  + "; run SELECT "
                  + schema
                  + ".advance_epoch()");
        }
      }
    }
    return notes;
  }

  private static boolean isInRecovery(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT pg_catalog.pg_is_in_recovery()");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getBoolean(1);
    }
  }
}
