package dev.fencing.migrations;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * A login role as the application connects: a member of the application role, nothing else but the
 * table privileges a test grants it. Roles are cluster-wide, so the name is unique; {@link
 * #close()} drops it. Test code only.
 */
final class AppRole implements AutoCloseable {
  private final TestDatabaseExtension db;
  private final String name;

  private AppRole(TestDatabaseExtension db, String name) {
    this.db = db;
    this.name = name;
  }

  /** Creates the role in the (migrated) test database. */
  static AppRole create(TestDatabaseExtension db, String prefix) throws SQLException {
    String name = FenceSql.unique(prefix);
    try (Connection c = db.connect()) {
      FenceSql.run(c, "CREATE ROLE " + name + " LOGIN");
      FenceSql.run(c, "GRANT " + db.appRole() + " TO " + name);
    }
    return new AppRole(db, name);
  }

  String name() {
    return name;
  }

  /** Grants {@code privileges} (e.g. {@code "INSERT, SELECT"}) on {@code table} to the role. */
  void grant(String privileges, String table) throws SQLException {
    try (Connection c = db.connect()) {
      FenceSql.run(c, "GRANT " + privileges + " ON " + table + " TO " + name);
    }
  }

  /** A new connection as this role. */
  Connection connect() throws SQLException {
    Connection c = db.connect(name);
    if (!name.equals(FenceSql.string(c, "SELECT current_user"))) {
      c.close();
      throw new IllegalStateException("not connected as " + name);
    }
    return c;
  }

  @Override
  public void close() throws SQLException {
    try (Connection c = db.connect()) {
      FenceSql.run(c, "DROP OWNED BY " + name);
      FenceSql.run(c, "DROP ROLE " + name);
    }
  }
}
