package dev.fencing.jdbc;

import java.sql.SQLException;
import java.sql.Statement;
import org.postgresql.core.BaseConnection;
import org.postgresql.jdbc.PreferQueryMode;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/**
 * The server's error about a statement sent behind the check in one query message, as the server
 * reports it about the statement sent alone: its {@code Position} (a character of the query text)
 * moved back by the check's length. Under the extended protocol each statement is parsed on its own
 * and the position is already the caller's.
 */
final class ErrorPosition {
  private ErrorPosition() {}

  /**
   * {@code e}, or the same error with its position moved back by {@code offset} characters, if
   * {@code raw} sent its text as one query message ({@code simple}, {@code extendedForPrepared})
   * and the position lies past the check.
   */
  static PSQLException shifted(Statement raw, PSQLException e, int offset) throws SQLException {
    ServerErrorMessage m = e.getServerErrorMessage();
    if (m == null
        || m.getPosition() <= offset
        || e.getClass() != PSQLException.class
        || !raw.getConnection().isWrapperFor(BaseConnection.class)) {
      return e;
    }
    BaseConnection connection = raw.getConnection().unwrap(BaseConnection.class);
    if (connection.getPreferQueryMode().compareTo(PreferQueryMode.EXTENDED) >= 0) {
      return e;
    }
    StringBuilder fields = new StringBuilder();
    field(fields, 'S', m.getSeverity());
    field(fields, 'C', m.getSQLState());
    field(fields, 'M', m.getMessage());
    field(fields, 'D', m.getDetail());
    field(fields, 'H', m.getHint());
    field(fields, 'P', String.valueOf(m.getPosition() - offset));
    if (m.getInternalPosition() != 0) {
      field(fields, 'p', String.valueOf(m.getInternalPosition()));
    }
    field(fields, 'q', m.getInternalQuery());
    field(fields, 'W', m.getWhere());
    field(fields, 's', m.getSchema());
    field(fields, 't', m.getTable());
    field(fields, 'c', m.getColumn());
    field(fields, 'd', m.getDatatype());
    field(fields, 'n', m.getConstraint());
    field(fields, 'F', m.getFile());
    if (m.getLine() != 0) {
      field(fields, 'L', String.valueOf(m.getLine()));
    }
    field(fields, 'R', m.getRoutine());
    PSQLException moved =
        new PSQLException(
            new ServerErrorMessage(fields.toString()), connection.getLogServerErrorDetail());
    moved.setStackTrace(e.getStackTrace());
    return moved;
  }

  private static void field(StringBuilder fields, char type, String value) {
    if (value != null) {
      fields.append(type).append(value).append('\0');
    }
  }
}
