package dev.fencing.jdbc;

import java.util.List;

/**
 * The check with literal arguments, for an execution that binds no parameters (a plain {@code
 * Statement}, a batch): {@code SELECT <schema>.check_one(E'<resource>', <token>)} for one token,
 * else {@code SELECT <schema>.check_tokens(ARRAY[E'<resource>', ...]::text[], ARRAY[<token>,
 * ...]::bigint[])}.
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

  static String sql(String schema, List<FencingContext.Binding> bindings) {
    StringBuilder b = new StringBuilder(64 + 32 * bindings.size());
    if (bindings.size() == 1) {
      FencingToken token = bindings.get(0).token();
      b.append("SELECT ").append(schema).append(".check_one(");
      quote(b, token.resource());
      return b.append(", ").append(token.value()).append("::bigint)").toString();
    }
    return arrays(b, schema, "check_tokens", bindings);
  }

  /**
   * {@code SELECT CASE WHEN pg_catalog.pg_current_xact_id_if_assigned() IS NULL THEN NULL ELSE
   * <schema>.check_tokens_if_written(ARRAY[E'<resource>', ...]::text[], ARRAY[<token>,
   * ...]::bigint[]) END}: the check a {@code COMMIT} runs, behind a read in autocommit ({@link
   * CheckedRead}). Arrays also for one token: there is no one-token form of it.
   */
  static String ifWritten(String schema, List<FencingContext.Binding> bindings) {
    String check =
        arrays(
            new StringBuilder(64 + 32 * bindings.size()),
            schema,
            "check_tokens_if_written",
            bindings);
    // The function's own first test, in SQL: a read that wrote nothing calls no function (a
    // SECURITY DEFINER function with its own search_path costs the backend more than the read).
    // pg_catalog named, so no function on the search path can stand in for it.
    return "SELECT CASE WHEN pg_catalog.pg_current_xact_id_if_assigned() IS NULL THEN NULL ELSE "
        + check.substring("SELECT ".length())
        + " END";
  }

  private static String arrays(
      StringBuilder b, String schema, String function, List<FencingContext.Binding> bindings) {
    b.append("SELECT ").append(schema).append('.').append(function).append("(ARRAY[");
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
    return b.append("]::bigint[])").toString();
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
