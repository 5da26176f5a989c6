package dev.fencing.jdbc;

import java.util.List;

/**
 * The check with literal arguments, for an execution that binds no parameters (a plain {@code
 * Statement}, a batch): {@code SELECT <schema>.check_one(E'<resource>', <token>)} for one token,
 * else {@code SELECT <schema>.check_tokens(ARRAY[E'<resource>', ...]::text[], ARRAY[<token>,
 * ...]::bigint[])}; and the same call behind the commit's test that the transaction wrote ({@link
 * #ifWritten}).
 *
 * <p>Injection-proof whatever the server's settings: each resource name is an escape string
 * constant ({@code E'...'}), which PostgreSQL reads the same whatever {@code
 * standard_conforming_strings} is, with every {@code '} doubled and every backslash doubled, so no
 * character of the name can end the constant or escape its end, whichever way a parser (the
 * server's, or pgjdbc's own when it splits statements and looks for escapes) reads backslashes.
 * Tokens are Java {@code long}s written in decimal. (Resource names are restricted anyway, {@link
 * FencingToken#requireValidResource}; the quoting does not rely on it.) A NUL character, which no
 * PostgreSQL text holds, is refused before anything is sent.
 */
final class CheckLiteral {
  private CheckLiteral() {}

  /**
   * The test that a transaction wrote, or may still write when it commits, which every check run
   * only "if written" starts with ({@code check_tokens_if_written}'s own first test, V37): it has a
   * transaction id (however the write was hidden), or it holds a {@code WITH HOLD} cursor, whose
   * query runs to its end inside {@code COMMIT}, after this test, and may write then (a view
   * calling a writing function). A holdable cursor left open from an earlier transaction costs each
   * later commit of the session a check, never safety. pg_catalog named, so no function on the
   * search path can stand in for either test. The xid test comes first: {@code OR} evaluates its
   * arguments in order and the subquery (an init plan) runs only when its value is needed, so a
   * transaction that wrote never lists its cursors.
   */
  static final String WRITTEN =
      "(pg_catalog.pg_current_xact_id_if_assigned() IS NOT NULL OR EXISTS (SELECT FROM"
          + " pg_catalog.pg_cursor() c WHERE c.is_holdable))";

  /**
   * The start of the check behind an autocommit read: {@code SELECT CASE WHEN} {@link #WRITTEN}
   * {@code THEN}, the check, {@code END}. (The commit's check, {@link TokenChecker}, puts the same
   * test in a {@code WHERE} and returns no row when it fails: measured cheaper with bound
   * parameters; this literal form, read as one row, is kept for the read,
   * docs/benchmark/read-only-commit.md.)
   */
  static final String IF_WRITTEN = "SELECT CASE WHEN " + WRITTEN + " THEN ";

  static String sql(String schema, List<FencingContext.Binding> bindings) {
    return call(new StringBuilder(64 + 32 * bindings.size()).append("SELECT "), schema, bindings)
        .toString();
  }

  /**
   * {@code SELECT CASE WHEN} {@link #WRITTEN} {@code THEN <schema>.check_one(E'<resource>',
   * <token>::bigint) END} ({@code check_tokens} with arrays for several): the commit's check
   * ({@link TokenChecker}, there with a {@code WHERE}) with literal arguments, behind a read in
   * autocommit ({@link CheckedRead}). A read that wrote nothing calls no function (a SECURITY
   * DEFINER function with its own search_path costs the backend more than the read).
   */
  static String ifWritten(String schema, List<FencingContext.Binding> bindings) {
    StringBuilder b = new StringBuilder(128 + 32 * bindings.size()).append(IF_WRITTEN);
    return call(b, schema, bindings).append(" END").toString();
  }

  /** Appends the call of the check: {@code check_one} for one token, else {@code check_tokens}. */
  private static StringBuilder call(
      StringBuilder b, String schema, List<FencingContext.Binding> bindings) {
    if (bindings.size() == 1) {
      FencingToken token = bindings.get(0).token();
      b.append(schema).append(".check_one(");
      quote(b, token.resource());
      return b.append(", ").append(token.value()).append("::bigint)");
    }
    return arrays(b, schema, "check_tokens", bindings);
  }

  private static StringBuilder arrays(
      StringBuilder b, String schema, String function, List<FencingContext.Binding> bindings) {
    b.append(schema).append('.').append(function).append("(ARRAY[");
    for (int i = 0; i < bindings.size(); i++) {
      if (i > 0) {
        b.append(", ");
      }
      quote(b, bindings.get(i).token().resource());
    }
    b.append("]::text[], ARRAY[");
    for (int i = 0; i < bindings.size(); i++) {
      if (i > 0) {
        b.append(", ");
      }
      b.append(bindings.get(i).token().value());
    }
    return b.append("]::bigint[])");
  }

  /** Appends {@code text} as an escape string constant: {@code E'...'}. */
  static void quote(StringBuilder b, String text) {
    b.append("E'");
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '\'') {
        b.append("''");
      } else if (c == '\\') {
        b.append("\\\\");
      } else if (c == 0) {
        throw new IllegalArgumentException("a NUL character cannot be sent in SQL text");
      } else {
        b.append(c);
      }
    }
    b.append('\'');
  }
}
