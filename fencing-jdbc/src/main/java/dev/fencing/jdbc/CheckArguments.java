package dev.fencing.jdbc;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The check an execution carries (issue 13), in the forms a carrier may send: a prepared
 * statement's, with its arguments bound ({@link #sql}, {@link #bind}: for one token usually the
 * function-free form of {@link CheckForms}, else {@code SELECT <schema>.check_one(?, ?)} or {@code
 * check_tokens(?, ?)}), or {@code check_one}/{@code check_tokens} with literal arguments ({@link
 * #literal}: a plain {@code Statement}'s or a batch's, which bind no parameters). The arrays and
 * the literal are made only when asked for.
 */
final class CheckArguments {
  private final Connection connection;
  private final CheckForms.Form form;
  private final @Nullable CheckForms forms;
  private final String schema;
  private final List<FencingContext.Binding> bindings;
  private @Nullable Array resources;
  private @Nullable Array tokens;

  /** {@code sql}: {@code check_one(?, ?)} for one binding, else {@code check_tokens(?, ?)}. */
  CheckArguments(
      Connection connection, String sql, String schema, List<FencingContext.Binding> bindings) {
    this(
        connection,
        new CheckForms.Form(bindings.size() == 1 ? CheckForms.Kind.ONE : CheckForms.Kind.MANY, sql),
        null,
        schema,
        bindings);
  }

  CheckArguments(
      Connection connection,
      CheckForms.Form form,
      @Nullable CheckForms forms,
      String schema,
      List<FencingContext.Binding> bindings) {
    this.connection = connection;
    this.form = form;
    this.forms = forms;
    this.schema = schema;
    this.bindings = bindings;
  }

  /** The text of the check's statements (bind them with {@link #bind}). */
  String sql() {
    return form.sql();
  }

  /**
   * The check's statements in {@link #sql} (a {@code COMMIT} after them not counted): each leaves
   * one row, except that the commit's check ({@code ... WHERE} {@link CheckLiteral#WRITTEN}) leaves
   * none when the transaction wrote nothing and holds no holdable cursor; the last one's row, or
   * its absence, is read by {@link #returned}.
   */
  int statements() {
    return form.statements();
  }

  /** How many parameters {@link #sql} binds: the caller's come after them. */
  int parameters() {
    return form.parameters();
  }

  /** Binds the check's arguments to {@code c}, at 1 to {@link #parameters}. */
  void bind(PreparedStatement c) throws SQLException {
    if (bindings.size() != 1) {
      c.setObject(1, resources());
      c.setObject(2, tokens());
      return;
    }
    FencingToken token = bindings.get(0).token();
    if (form.kind() == CheckForms.Kind.FAST) {
      // A: the name; B: the view's name and token, check_one's resource and token
      c.setString(1, token.resource());
      c.setString(2, token.resource());
      c.setLong(3, token.value());
      c.setString(4, token.resource());
      c.setLong(5, token.value());
    } else {
      c.setString(1, token.resource());
      c.setLong(2, token.value());
    }
  }

  /**
   * The row of the check's last statement ({@code row} positioned on it, or null if there was none)
   * read: the number of resources the check advanced, or null; what the fast form tells {@link
   * CheckForms} is passed on.
   */
  @Nullable Integer returned(@Nullable ResultSet row) throws SQLException {
    if (row == null) {
      return null;
    }
    int n = row.getInt(1); // the check's integer (getObject looks its type up per call)
    if (row.wasNull()) {
      return null;
    }
    CheckForms f = forms;
    if (f == null || bindings.size() != 1) {
      return n;
    }
    Integer space = null;
    if (form.kind() == CheckForms.Kind.LEARN) {
      int s = row.getInt(2);
      space = row.wasNull() ? null : s;
    }
    return f.returned(form, bindings.get(0).token().resource(), n, space);
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
