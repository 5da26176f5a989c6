package dev.fencing.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import org.jspecify.annotations.Nullable;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;

/**
 * A {@code PreparedStatement}'s read in autocommit with the commit's check behind it ({@link
 * CheckedRead}), for its {@link CarriedCheck}: {@code <sql>\n;<check>} prepared as a statement of
 * its own once per check text (a new token, a new statement), the caller's parameters at their
 * places. Not carried (nothing sent, the read runs the long way): a statement prepared for
 * generated keys, a fetch size, or where pgjdbc could Sync between the two ({@link SyncSplit}).
 */
final class CarriedRead {
  private final Connection connection;
  private final CarriedCheck owner;
  private final String sql;
  // the read with the check behind it, and that check's text
  private @Nullable PreparedStatement trailing;
  private @Nullable String trailingCheck;

  CarriedRead(Connection connection, CarriedCheck owner, String sql) {
    this.connection = connection;
    this.owner = owner;
    this.sql = sql;
  }

  /**
   * Runs {@code name}, a read in autocommit, with {@code check} (the commit's, literal arguments)
   * behind it as one implicit transaction; null if nothing the caller may see was sent.
   */
  Carrier.@Nullable Carried run(String name, String check) throws SQLException {
    PreparedStatement t = trailing;
    if (t == null || !check.equals(trailingCheck)) {
      if (t != null) {
        owner.leave(t);
        t.close();
      }
      t = connection.prepareStatement(CheckedRead.text(sql, check));
      trailing = t;
      trailingCheck = check;
    }
    if (SyncSplit.possible(t, SyncSplit.preparedQuery(t))) {
      return null;
    }
    owner.prepare(t, 0);
    try {
      t.execute();
    } catch (PSQLException e) {
      if (e.getServerErrorMessage() == null
              && PSQLState.INVALID_PARAMETER_VALUE.getState().equals(e.getSQLState())
          || CheckedRead.pastTheEnd(e, CheckedRead.body(sql))) {
        owner.leave(t); // a parameter unset (nothing sent), or a syntax error to report as unfenced
        return null;
      }
      throw e;
    }
    return CheckedRead.results(t, name);
  }

  /** The statement prepared for the read, if any (closed with the caller's). */
  @Nullable PreparedStatement statement() {
    return trailing;
  }
}
