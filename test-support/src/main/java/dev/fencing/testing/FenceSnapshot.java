package dev.fencing.testing;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Everything a call into the fence could have written, captured so that a test can prove a refused
 * call wrote nothing: compare a snapshot taken before with one taken after.
 *
 * <ul>
 *   <li>{@link #fence()}: every row of the fence's resource, lease, issuance and protected_table
 *       tables, the token sequence's {@code last_value}/{@code is_called}, and the fence's catalog
 *       (the fingerprints {@code catalog_fingerprint()} computes, which cover functions, tables,
 *       owners, grants and triggers of the fence's schema);
 *   <li>{@link #rejections()}: the rows of the rejection log, kept apart because a refusal by the
 *       database is recorded there on purpose;
 *   <li>{@link #application()}: the rows and the triggers of the application tables named.
 * </ul>
 *
 * Needs a role that can read the fence's tables (the test database's superuser).
 *
 * @param fence the fence's state, one line per row or object
 * @param rejections the rejection log, one line per row
 * @param application the application tables' rows and triggers, one line each
 */
public record FenceSnapshot(List<String> fence, List<String> rejections, List<String> application) {
  private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

  /** Canonical copies. */
  public FenceSnapshot {
    fence = List.copyOf(fence);
    rejections = List.copyOf(rejections);
    application = List.copyOf(application);
  }

  /** The snapshot of the fence in schema {@code fencing} and of {@code applicationTables}. */
  public static FenceSnapshot take(Connection c, String... applicationTables) throws SQLException {
    return takeInSchema(c, "fencing", applicationTables);
  }

  /**
   * The snapshot of the fence in {@code schema} and of {@code applicationTables} (names or
   * schema-qualified names as {@code regclass} accepts them).
   */
  public static FenceSnapshot takeInSchema(Connection c, String schema, String... applicationTables)
      throws SQLException {
    if (!IDENTIFIER.matcher(schema).matches()) {
      throw new IllegalArgumentException("not a schema name: " + schema);
    }
    List<String> fence = new ArrayList<>();
    for (String table : List.of("resource", "lease", "issuance", "protected_table")) {
      fence.addAll(
          lines(c, "SELECT '" + table + " ' || t::text FROM " + schema + "." + table + " t"));
    }
    fence.addAll(
        lines(
            c,
            "SELECT 'token_seq ' || last_value || ' ' || is_called FROM " + schema + ".token_seq"));
    fence.addAll(
        lines(
            c,
            "SELECT 'catalog ' || object || ' ' || fingerprint FROM "
                + schema
                + ".catalog_fingerprint()"));
    List<String> rejections = lines(c, "SELECT t::text FROM " + schema + ".rejection t");
    List<String> application = new ArrayList<>();
    for (String table : applicationTables) {
      application.addAll(
          lines(c, "SELECT ?::text || ' ' || t::text FROM " + table(c, table) + " t", table));
      application.addAll(
          lines(
              c,
              "SELECT 'trigger ' || tgname FROM pg_catalog.pg_trigger WHERE tgrelid = ?::regclass",
              table));
    }
    return new FenceSnapshot(fence, rejections, application);
  }

  /** The rejections recorded since {@code before} was taken. */
  public List<String> rejectionsSince(FenceSnapshot before) {
    List<String> added = new ArrayList<>(rejections);
    before.rejections.forEach(added::remove);
    return added;
  }

  private static String table(Connection c, String table) throws SQLException {
    List<String> quoted = lines(c, "SELECT ?::regclass::text", table);
    return quoted.get(0);
  }

  private static List<String> lines(Connection c, String sql, Object... args) throws SQLException {
    List<String> lines = new ArrayList<>();
    try (PreparedStatement ps =
        c.prepareStatement(sql + (sql.contains("ORDER BY") ? "" : " ORDER BY 1"))) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          lines.add(rs.getString(1));
        }
      }
    }
    return lines;
  }
}
