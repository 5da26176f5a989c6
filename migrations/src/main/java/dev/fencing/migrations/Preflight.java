package dev.fencing.migrations;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/**
 * What {@link FencingMigrations#migrate()} checks before Flyway creates anything: in one
 * transaction that is always rolled back, the schema is created (if missing), the Flyway callback
 * {@value #PREPARE} runs with the placeholders replaced (roles, membership, the schema grant, the
 * refusal of roles that serve another database), and each kind of statement the migrations use is
 * tried once. A failure becomes a {@link FencingMigrationException} naming the missing privilege;
 * the database and the cluster are left as they were.
 */
final class Preflight {
  static final String PREPARE = "db/fencing/beforeEachMigrate.sql";

  private Preflight() {}

  /** Runs the migrations' own preparation and a probe of every privilege, then rolls back. */
  static void check(
      DataSource dataSource,
      String schema,
      String ownerRole,
      String applicationRole,
      String historyTable) {
    String prepare =
        resource(PREPARE)
            .replace("${flyway:defaultSchema}", schema)
            .replace("${flyway:table}", historyTable)
            .replace("${owner_role}", ownerRole)
            .replace("${app_role}", applicationRole);
    String probe = schema + ".fencing_preflight_probe";
    try (Connection c = dataSource.getConnection()) {
      boolean autoCommit = c.getAutoCommit();
      c.setAutoCommit(false);
      // an upgrade (the fence's tables exist, as beforeEachMigrate's v_fresh tells) changes
      // objects that exist; a first migration creates them
      String unchanged = "nothing was created";
      try (Statement s = c.createStatement()) {
        if (FencingMigrations.exists(
            c, "SELECT WHERE pg_catalog.to_regclass(?) IS NOT NULL", schema + ".resource")) {
          unchanged = "nothing was changed";
        }
        if (!FencingMigrations.exists(
            c, "SELECT FROM pg_catalog.pg_namespace WHERE nspname = ?", schema)) {
          createSchema(s, schema);
        }
        s.execute(prepare);
        // What V1 and later do: create, hand over to the owner role, replace, grant.
        s.execute("CREATE SEQUENCE " + probe + "_seq");
        s.execute("ALTER SEQUENCE " + probe + "_seq OWNER TO " + ownerRole);
        s.execute("CREATE FUNCTION " + probe + "() RETURNS int LANGUAGE sql AS 'SELECT 1'");
        s.execute("ALTER FUNCTION " + probe + "() OWNER TO " + ownerRole);
        s.execute(
            "CREATE OR REPLACE FUNCTION " + probe + "() RETURNS int LANGUAGE sql AS 'SELECT 2'");
        s.execute("GRANT EXECUTE ON FUNCTION " + probe + "() TO " + applicationRole);
      } catch (SQLException e) {
        throw new FencingMigrationException(
            "fencing migrations refused, " + unchanged + ": " + describe(e), e);
      } finally {
        c.rollback();
        c.setAutoCommit(autoCommit);
      }
    } catch (SQLException e) {
      throw new FencingMigrationException("cannot connect to migrate: " + e.getMessage(), e);
    }
  }

  private static void createSchema(Statement s, String schema) throws SQLException {
    String who;
    try (ResultSet rs = s.executeQuery("SELECT current_user || ' ' || current_database()")) {
      rs.next();
      who = rs.getString(1);
    }
    String user = who.substring(0, who.indexOf(' '));
    String database = who.substring(who.indexOf(' ') + 1);
    try {
      s.execute("CREATE SCHEMA " + schema);
    } catch (SQLException e) {
      if (!"42501".equals(e.getSQLState())) {
        throw e;
      }
      throw new FencingMigrationException(
          "fencing migrations refused, nothing was created: "
              + user
              + " may not create schema "
              + schema
              + " in database "
              + database
              + " (needs CREATE on the database; owning it is enough). Hint: GRANT CREATE ON"
              + " DATABASE \""
              + database
              + "\" TO \""
              + user
              + "\"; or create the schema for it: CREATE SCHEMA "
              + schema
              + " AUTHORIZATION \""
              + user
              + "\";",
          e);
    }
  }

  private static String describe(SQLException e) {
    if (e instanceof PSQLException p && p.getServerErrorMessage() != null) {
      ServerErrorMessage m = p.getServerErrorMessage();
      String text = m.getMessage() + " [SQLSTATE " + m.getSQLState() + "]";
      return m.getHint() == null ? text : text + ". Hint: " + m.getHint();
    }
    return e.getMessage() + " [SQLSTATE " + e.getSQLState() + "]";
  }

  private static String resource(String name) {
    try (InputStream in = Preflight.class.getClassLoader().getResourceAsStream(name)) {
      if (in == null) {
        throw new FencingMigrationException("missing from the class path: " + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new FencingMigrationException("cannot read " + name + ": " + e.getMessage(), e);
    }
  }
}
