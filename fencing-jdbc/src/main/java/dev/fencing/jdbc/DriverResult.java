package dev.fencing.jdbc;

import java.sql.SQLException;
import java.sql.Statement;
import org.postgresql.util.GT;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;

/**
 * What the driver's execution returns to its caller once a carried execution ran ({@link
 * CarriedCheck}, {@link CarriedStatement}), including the driver's own refusals of a statement that
 * ran: {@code executeQuery} of one that returned no rows, {@code executeUpdate} of one that did.
 */
final class DriverResult {
  private DriverResult() {}

  /**
   * What the driver's {@code name} returns once {@code s} stands at the statement's first result
   * ({@code isResultSet}, as {@code getMoreResults} said): {@code execute}'s boolean, {@code
   * executeQuery}'s result set, or the update count, with the driver's own refusals of a statement
   * that returned no rows to {@code executeQuery} or rows to {@code executeUpdate}.
   */
  static Object of(String name, Statement s, boolean isResultSet) throws SQLException {
    switch (name) {
      case "execute":
        return isResultSet;
      case "executeQuery":
        if (!isResultSet) {
          throw new PSQLException(
              GT.tr("No results were returned by the query."), PSQLState.NO_DATA);
        }
        return s.getResultSet();
      default:
        if (isResultSet) {
          throw new PSQLException(
              GT.tr("A result was returned when none was expected."), PSQLState.TOO_MANY_RESULTS);
        }
        return name.equals("executeLargeUpdate")
            ? (Object) s.getLargeUpdateCount()
            : s.getUpdateCount();
    }
  }

  /**
   * The driver's own refusal of a statement that ran: {@code executeQuery} of a statement that
   * returned no rows, {@code executeUpdate} of one that did. The server ran it successfully, so in
   * autocommit it is committed as it would be without the wrapper.
   */
  static boolean ranThenRefused(PSQLException e) {
    return e.getServerErrorMessage() == null
        && (PSQLState.NO_DATA.getState().equals(e.getSQLState())
            || PSQLState.TOO_MANY_RESULTS.getState().equals(e.getSQLState()));
  }
}
