package dev.fencing.jdbc;

import java.sql.Array;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The check an execution carries (issue 13), in the two forms a carrier may send: {@code SELECT
 * <schema>.check_one(?, ?)} for one token, else {@code SELECT <schema>.check_tokens(?, ?)}, with
 * its two arguments bound ({@link #sql}, {@link #first}, {@link #second}: a {@code
 * PreparedStatement}'s carry), or the same call with literal arguments ({@link #literal}: a plain
 * {@code Statement}'s or a batch's, which bind no parameters). The arrays and the literal are made
 * only when asked for.
 */
final class CheckArguments {
  private final Connection connection;
  private final String sql;
  private final String schema;
  private final List<FencingContext.Binding> bindings;
  private @Nullable Array resources;
  private @Nullable Array tokens;

  CheckArguments(
      Connection connection, String sql, String schema, List<FencingContext.Binding> bindings) {
    this.connection = connection;
    this.sql = sql;
    this.schema = schema;
    this.bindings = bindings;
  }

  /**
   * {@code SELECT <schema>.check_one(?, ?)} or {@code check_tokens(?, ?)}: bind {@link #first} and
   * {@link #second}.
   */
  String sql() {
    return sql;
  }

  /** The check's first argument: the resource ({@code check_one}) or an array of them. */
  Object first() throws SQLException {
    return bindings.size() == 1 ? bindings.get(0).token().resource() : resources();
  }

  /** The check's second argument: the token ({@code check_one}) or an array of them. */
  Object second() throws SQLException {
    return bindings.size() == 1 ? (Object) bindings.get(0).token().value() : tokens();
  }

  private Array resources() throws SQLException {
    Array a = resources;
    if (a == null) {
      String[] names = new String[bindings.size()];
      for (int i = 0; i < names.length; i++) {
        names[i] = bindings.get(i).token().resource();
      }
      a = connection.createArrayOf("text", names);
      resources = a;
    }
    return a;
  }

  private Array tokens() throws SQLException {
    Array a = tokens;
    if (a == null) {
      Long[] values = new Long[bindings.size()];
      for (int i = 0; i < values.length; i++) {
        values[i] = bindings.get(i).token().value();
      }
      a = connection.createArrayOf("bigint", values);
      tokens = a;
    }
    return a;
  }

  /** The check with its arguments written into the text ({@link CheckLiteral}). */
  String literal() {
    return CheckLiteral.sql(schema, bindings);
  }
}
