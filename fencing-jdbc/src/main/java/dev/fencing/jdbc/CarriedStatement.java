package dev.fencing.jdbc;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.jspecify.annotations.Nullable;
import org.postgresql.jdbc.PreferQueryMode;
import org.postgresql.util.PSQLException;

/**
 * The check carried by a plain {@code Statement}'s execution (issue 13): {@code execute(sql)},
 * {@code executeQuery}, {@code executeUpdate}, {@code executeLargeUpdate} of SQL of one statement
 * run {@code <the check with literal arguments>;<sql>} on the driver's own statement, one round
 * trip ({@link CheckLiteral}: a plain statement binds no parameters). The check's row is read and
 * closed by moving to the next result, the caller's statement's: from there the driver's statement
 * holds exactly what it holds unfenced (its result set or update count, {@code getMoreResults},
 * warnings), and the return value and the driver's own refusals ({@code executeQuery} without rows,
 * {@code executeUpdate} with rows) are worked out as the driver does.
 *
 * <p>With generated keys ({@code execute}, {@code executeUpdate}, {@code executeLargeUpdate} with
 * {@code RETURN_GENERATED_KEYS} or column names) the statement carries pgjdbc's {@code RETURNING}
 * ({@link StatementKeys}).
 *
 * <p>Not carried (the check runs in its own round trip): SQL with a {@code ;} before its end, a
 * statement of a {@code PreparedStatement} (the driver refuses SQL text there), generated keys
 * pgjdbc appends no {@code RETURNING} for or with max rows set, column indexes (pgjdbc refuses
 * them), a fetch size (cursor fetching), {@code closeOnCompletion} (closing the check's row could
 * close the statement), and result sets not forward-only read-only.
 */
final class CarriedStatement implements Carrier {
  private final Statement raw;
  private final String name;
  private final String sql;
  // the generated keys asked for ({@link StatementKeys}), else null
  private final String @Nullable [] keys;

  private CarriedStatement(Statement raw, String name, String sql, String @Nullable [] keys) {
    this.raw = raw;
    this.name = name;
    this.sql = sql;
    this.keys = keys;
  }

  /** The carrier of {@code raw.<name>(args)}, or null if it cannot carry the check. */
  static @Nullable CarriedStatement of(Statement raw, String name, Object @Nullable [] args) {
    if (raw instanceof PreparedStatement
        || args == null
        || args.length < 1
        || args.length > 2
        || !(args[0] instanceof String sql)
        || !CarriedCheck.oneStatement(sql)) {
      return null;
    }
    if (args.length == 2) {
      // with generated keys: none asked for is the plain call, as pgjdbc runs it
      String[] keys = StatementKeys.columns(args[1]);
      if (keys == null || name.equals("executeQuery")) {
        return null;
      }
      return switch (name) {
        case "execute", "executeUpdate", "executeLargeUpdate" ->
            new CarriedStatement(raw, name, sql, keys.length == 0 ? null : keys);
        default -> null;
      };
    }
    return switch (name) {
      case "execute", "executeQuery", "executeUpdate", "executeLargeUpdate" ->
          new CarriedStatement(raw, name, sql, null);
      default -> null;
    };
  }

  /**
   * Under {@code simple} and {@code extendedForPrepared} pgjdbc sends a plain statement's whole
   * text as one query message, whose statements the server runs as one implicit transaction in
   * autocommit; under the extended protocol its statements go before one Sync, unless pgjdbc may
   * Sync between them ({@link SyncSplit}: forced binary transfer, or a cached query that may be
   * described under {@code extendedCacheEverything}).
   */
  @Override
  public boolean manyTransactionsInAutocommit(PreferQueryMode mode, int tokens) {
    if (mode.compareTo(PreferQueryMode.EXTENDED) < 0) {
      return false;
    }
    return mode == PreferQueryMode.EXTENDED_CACHE_EVERYTHING || SyncSplit.possible(raw, null);
  }

  @Override
  public Carrier.@Nullable Carried callRead(String check) throws SQLException {
    return keys == null && plainResults() ? CheckedRead.run(raw, name, sql, check) : null;
  }

  /** Whether the results are the driver's plainest: no cursor, no closing on completion. */
  private boolean plainResults() throws SQLException {
    return raw.getFetchSize() == 0
        && !raw.isCloseOnCompletion()
        && raw.getResultSetType() == ResultSet.TYPE_FORWARD_ONLY
        && raw.getResultSetConcurrency() == ResultSet.CONCUR_READ_ONLY;
  }

  @Override
  public Carrier.@Nullable Carried call(CheckArguments check) throws SQLException {
    if (!plainResults()) {
      return null;
    }
    String[] columns = keys;
    if (columns != null) {
      return callWithKeys(check, columns);
    }
    boolean update = name.equals("executeUpdate") || name.equals("executeLargeUpdate");
    int maxRows = raw.getMaxRows();
    // The driver's executeUpdate fetches at most one row of a query (whose result it refuses): the
    // statement runs as far as it does unfenced.
    if (update) {
      raw.setMaxRows(1);
    }
    String literal = check.literal();
    try {
      // no space after the ";": an error's position is in the caller's text, as unfenced
      raw.execute(literal + ";" + sql);
    } catch (PSQLException e) {
      throw ErrorPosition.shifted(raw, e, literal.codePointCount(0, literal.length()) + 1);
    } finally {
      if (update) {
        raw.setMaxRows(maxRows);
      }
    }
    Object advanced = null;
    ResultSet row = raw.getResultSet();
    if (row != null && row.next()) {
      advanced = row.getObject(1);
    }
    boolean isResultSet = raw.getMoreResults(); // closes the check's row
    return new Carrier.Carried(DriverResult.of(name, raw, isResultSet), advanced);
  }

  /**
   * With generated keys ({@link StatementKeys}): null (the check on its own) where pgjdbc appends
   * no {@code RETURNING}, or with max rows set (the driver would cut the keys).
   */
  private Carrier.@Nullable Carried callWithKeys(CheckArguments check, String[] columns)
      throws SQLException {
    if (raw.getMaxRows() != 0 || !StatementKeys.available(raw)) {
      return null;
    }
    String returning = CarriedKeys.appended(raw.getConnection(), sql, columns);
    if (returning == null) {
      return null;
    }
    String literal = check.literal();
    Object advanced;
    try {
      advanced = StatementKeys.run(raw, literal + ";" + returning);
    } catch (PSQLException e) {
      throw ErrorPosition.shifted(raw, e, literal.codePointCount(0, literal.length()) + 1);
    }
    Object result =
        switch (name) {
          case "execute" -> raw.getResultSet() != null;
          case "executeLargeUpdate" -> raw.getLargeUpdateCount();
          default -> raw.getUpdateCount();
        };
    return new Carrier.Carried(result, advanced);
  }
}
