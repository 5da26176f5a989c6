package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.MISSING;
import static dev.fencing.migrations.Fence.assertFails;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Upgrading a fence installed up to V12: tables protect_rows() protected keep protected, with V13's
 * triggers where the migrating user may replace them (it owns the table, or is a superuser), else
 * with V3's row trigger, which stays correct.
 */
class ProtectedRowsUpgradeTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final String OWNER = FenceSql.unique("upg_owner");
  private static final String APP = FenceSql.unique("upg_app");

  @AfterAll
  static void dropRoles() throws SQLException {
    try (Connection c = db.connect()) {
      for (String role : List.of(APP, OWNER)) {
        FenceSql.run(c, "DROP OWNED BY " + role);
        FenceSql.run(c, "DROP ROLE IF EXISTS " + role);
      }
    }
  }

  private static List<String> triggers(Connection c, String table) throws SQLException {
    return FenceSql.strings(
        c,
        "SELECT tgname || ' ' || (tgtype & 1)::text FROM pg_trigger WHERE tgrelid = ?::regclass"
            + " ORDER BY 1",
        table);
  }

  @Test
  void tablesProtectedUnderV12KeepProtectedAfterV13() throws SQLException {
    Flyway.configure(ProtectedRowsUpgradeTest.class.getClassLoader())
        .dataSource(db.migrationDataSource())
        .schemas("fencing")
        .defaultSchema("fencing")
        .table(FencingMigrations.HISTORY_TABLE)
        .locations(FencingMigrations.LOCATION)
        .placeholders(Map.of("app_role", db.appRole(), "owner_role", db.ownerRole()))
        .target("12")
        .load()
        .migrate();
    boolean deployer = !db.migrationUser().equals(db.user());
    try (Connection m = db.migrationDataSource().getConnection();
        Connection c = db.connect()) {
      FenceSql.run(c, "CREATE ROLE " + OWNER + " NOLOGIN");
      FenceSql.run(c, "CREATE ROLE " + APP + " LOGIN");
      FenceSql.run(c, "GRANT " + db.appRole() + " TO " + APP);
      // owned by the migrating user, and by another role
      FenceSql.run(c, "CREATE TABLE mine (id int PRIMARY KEY, acct int NOT NULL)");
      FenceSql.run(c, "CREATE TABLE theirs (id int PRIMARY KEY, acct int NOT NULL)");
      FenceSql.run(c, "ALTER TABLE mine OWNER TO " + FenceSql.quoteIdentifier(db.migrationUser()));
      FenceSql.run(c, "ALTER TABLE theirs OWNER TO " + OWNER);
      for (String t : List.of("mine", "theirs")) {
        FenceSql.run(c, "GRANT SELECT, INSERT, UPDATE, DELETE ON " + t + " TO " + APP);
        FenceSql.run(t.equals("mine") ? m : c, "SELECT fencing.protect_rows(?, 'acct', 'upg/')", t);
        assertThat(triggers(c, t))
            .containsExactly("fencing_protect 1", "fencing_protect_truncate 0");
      }
      FenceSql.run(c, "SELECT fencing.create_resource('upg/1')");
    }

    assertThat(Fence.migrate(db)).isEqualTo(1);

    List<String> v13 =
        List.of(
            "fencing_protect 1",
            "fencing_protect_delete 1",
            "fencing_protect_deleted 0",
            "fencing_protect_inserted 0",
            "fencing_protect_truncate 0",
            "fencing_protect_update 1",
            "fencing_protect_updated 0");
    try (Connection c = db.connect()) {
      assertThat(triggers(c, "mine")).containsExactlyElementsOf(v13);
      if (deployer) {
        assertThat(triggers(c, "theirs"))
            .containsExactly("fencing_protect 1", "fencing_protect_truncate 0");
      } else {
        assertThat(triggers(c, "theirs")).containsExactlyElementsOf(v13);
      }
      assertThat(FenceSql.strings(c, "SELECT table_name FROM fencing.protected_table ORDER BY 1"))
          .containsExactly("public.mine", "public.theirs");
      Fence.migrations(db).validate();
      long token = Fence.acquire(c, "upg/1", "test", Duration.ofMinutes(5));
      try (Connection app = db.connect(APP)) {
        for (String t : List.of("mine", "theirs")) {
          assertFails(MISSING, () -> FenceSql.run(app, "INSERT INTO " + t + " VALUES (1, 1)"));
          app.setAutoCommit(false);
          Fence.check(app, "upg/1", token);
          FenceSql.run(app, "INSERT INTO " + t + " SELECT g, 1 FROM generate_series(1, 300) g");
          app.commit();
          app.setAutoCommit(true);
          assertFails(MISSING, () -> FenceSql.run(app, "DELETE FROM " + t));
          assertThat(FenceSql.longValue(app, "SELECT count(*) FROM " + t)).isEqualTo(300);
        }
      }
    }
  }
}
