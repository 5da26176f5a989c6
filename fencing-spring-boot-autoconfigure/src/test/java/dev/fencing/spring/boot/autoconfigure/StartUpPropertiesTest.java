package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.migrations.FencingMigrations;
import dev.fencing.spring.boot.autoconfigure.app.JdbcTestApplication;
import dev.fencing.testing.TestDatabase;
import dev.fencing.testing.TestPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.io.support.SpringFactoriesLoader;

/**
 * Start-up with bad {@code fencing.*} values (a clear failure naming the property, nothing
 * created), with {@code fencing.migrations.migrate=false} (validate only: fails on a missing or
 * tampered fence, starts on a migrated one), and with fence roles that already serve another
 * database (the defaults, or another application's: a failure naming the two role properties,
 * nothing created).
 */
class StartUpPropertiesTest {

  @ParameterizedTest(name = "{0}={1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "fencing.schema            | Fencing-Schema | fencing.schema must be a lower-case SQL identifier",
        "fencing.schema            | ''             | fencing.schema must be a lower-case SQL identifier",
        "fencing.lease.ttl         | 0s             | fencing.lease.ttl must be between 1ms and 7d, was PT0S",
        "fencing.lease.ttl         | 8d             | fencing.lease.ttl must be between 1ms and 7d, was PT192H",
        "fencing.lease.ttl         | soon           | fencing.lease.ttl",
        "fencing.lease.max-wait    | -1s            | fencing.lease.max-wait must be between 0 and 7d",
        "fencing.lease.handover-timeout | 2h        | fencing.lease.handover-timeout must be between 1ms and 1h",
        "fencing.lease.renew-fraction | 1.0         | fencing.lease.renew-fraction must be between 0.001 and 0.5, was 1.0",
        "fencing.lease.renew-fraction | 0           | fencing.lease.renew-fraction must be between 0.001 and 0.5, was 0.0",
        "fencing.lease.renew-fraction | 0.99        | fencing.lease.renew-fraction must be between 0.001 and 0.5, was 0.99",
        "fencing.lease.renew-fraction | 1e-9        | fencing.lease.renew-fraction must be between 0.001 and 0.5, was 1.0E-9",
        "fencing.lease.holder      | ''             | fencing.lease.holder must be 1 to 200 characters",
        // APP_ROLE: the test database's application role, which the context is given
        "fencing.migrations.owner-role | APP_ROLE   | must differ, both are 'APP_ROLE'",
        "fencing.migrations.application-role | app role | fencing.migrations.application-role must be a lower-case SQL identifier",
        "fencing.migrations.migrate | sometimes     | fencing.migrations.migrate",
        "fencing.datasource.exclude | ' '           | fencing.datasource.exclude[0] must be a bean name",
        "fencing.shedlock.resource-prefix | 'job '  | fencing.shedlock.resource-prefix",
        "fencing.datasource.resources.dataSource | 'ledger*x' | fencing.datasource.resources.dataSource[0] may hold * only at its end",
        "fencing.datasource.resources.dataSource | 'led ger'  | fencing.datasource.resources.dataSource[0] must be a resource name or a prefix of one ending in *",
        "fencing.datasource.resources.noSuchBean | ledger     | fencing.datasource.resources.noSuchBean names no DataSource bean",
      })
  void aBadValueFailsStartUpNamingThePropertyAndCreatesNothing(
      String property, String value, String message) throws SQLException {
    try (TestDatabase db = TestDatabase.create("bad_property")) {
      String bad = value.replace("APP_ROLE", db.appRole());
      Throwable failure = catchThrowable(() -> start(db, property + "=" + bad).close());

      assertThat(failure).isNotNull();
      assertThat(messages(failure))
          .anySatisfy(m -> assertThat(m).contains(message.replace("APP_ROLE", db.appRole())));
      assertThat(schemas(db)).doesNotContain("fencing", "Fencing-Schema");
    }
  }

  @Test
  void validateOnlyFailsOnAnEmptyDatabaseAndCreatesNothing() throws SQLException {
    try (TestDatabase db = TestDatabase.create("validate_empty")) {
      Throwable failure =
          catchThrowable(() -> start(db, "fencing.migrations.migrate=false").close());

      assertThat(messages(failure))
          .anySatisfy(
              m ->
                  assertThat(m)
                      .contains("fencing.migrations.migrate=false")
                      .contains("schema 'fencing' must have been migrated before start-up"));
      assertThat(new FencingStartUpFailureAnalyzer().analyze(failure).getAction())
          .contains("java -jar fencing-migrations-cli.jar migrate")
          .contains("fencing.migrations.migrate=true");
      assertThat(schemas(db)).doesNotContain("fencing");
    }
  }

  @Test
  void validateOnlyStartsOnAMigratedFenceAndFailsOnATamperedOne() throws SQLException {
    try (TestDatabase db = TestDatabase.create("validate_migrated")) {
      migrations(db.migrationDataSource(), db.ownerRole(), db.appRole()).migrate();
      try (ConfigurableApplicationContext context = start(db, "fencing.migrations.migrate=false")) {
        FencingHealthIndicator health = context.getBean(FencingHealthIndicator.class);
        assertThat(health.health().getStatus()).isEqualTo(Status.UP);

        tamper(db);

        assertThat(health.health().getStatus()).isEqualTo(Status.DOWN);
        assertThat(health.health().getDetails().get("error").toString()).contains("release");
      }
      Throwable failure =
          catchThrowable(() -> start(db, "fencing.migrations.migrate=false").close());
      assertThat(messages(failure))
          .anySatisfy(m -> assertThat(m).contains("not valid").contains("release"));
    }
  }

  @Test
  void defaultRolesThatServeAnotherDatabaseFailStartUpNamingTheProperties() throws SQLException {
    List<String> created = new ArrayList<>();
    try (TestDatabase other = TestDatabase.create("default_roles_elsewhere")) {
      try (TestDatabase db = TestDatabase.create("default_roles")) {
        serveDefaultRoles(other, created);
        // the application sets no fencing.migrations.* property: the defaults
        Throwable failure =
            catchThrowable(
                () ->
                    run(
                            "spring.datasource.url=" + db.jdbcUrl(),
                            "spring.datasource.username=" + db.migrationUser(),
                            "spring.datasource.password=" + db.password(),
                            "spring.application.name=Ledger Service")
                        .close());

        assertThat(startUpMessage(failure))
            .contains(
                "the fence's roles fencing_owner/fencing_app (fencing.migrations.owner-role/"
                    + "fencing.migrations.application-role, the defaults, which suit only the"
                    + " first application of a cluster) already serve another database")
            .contains("fencing_owner (database " + other.name() + ")")
            .contains("fencing_app (database " + other.name() + ")")
            .contains("set fencing.migrations.owner-role and fencing.migrations.application-role")
            .contains(
                "fencing.migrations.owner-role=ledger_service_fencing_owner and"
                    + " fencing.migrations.application-role=ledger_service_fencing_app")
            .doesNotContain("--owner-role");
        // Boot's report of the failed start-up: what happened, then what to set
        FailureAnalysis analysis = new FencingStartUpFailureAnalyzer().analyze(failure);
        assertThat(analysis).isNotNull();
        assertThat(analysis.getDescription())
            .contains("fencing_owner/fencing_app (fencing.migrations.owner-role/")
            .contains("(database " + other.name() + ")");
        assertThat(analysis.getAction())
            .startsWith(
                "Give this application two roles of its own: set fencing.migrations.owner-role"
                    + " and fencing.migrations.application-role");
        assertThat(
                SpringFactoriesLoader.forDefaultResourceLocation()
                    .load(FailureAnalyzer.class, (type, name, e) -> {})) // Boot's need a context
            .hasAtLeastOneElementOfType(FencingStartUpFailureAnalyzer.class);
        assertThat(schemas(db)).doesNotContain("fencing");
      } finally {
        other.close();
        dropRoles(created);
      }
    }
  }

  @Test
  void rolesOfAnotherApplicationFailStartUpAndOwnRolesStart() throws SQLException {
    try (TestDatabase other = TestDatabase.create("roles_elsewhere");
        TestDatabase db = TestDatabase.create("roles_of_another")) {
      migrations(other.migrationDataSource(), other.ownerRole(), other.appRole()).migrate();

      Throwable failure =
          catchThrowable(
              () ->
                  run(
                          "spring.datasource.url=" + db.jdbcUrl(),
                          "spring.datasource.username=" + db.migrationUser(),
                          "spring.datasource.password=" + db.password(),
                          "fencing.migrations.owner-role=" + other.ownerRole(),
                          "fencing.migrations.application-role=" + other.appRole())
                      .close());

      assertThat(startUpMessage(failure))
          .contains(
              "the fence's roles "
                  + other.ownerRole()
                  + "/"
                  + other.appRole()
                  + " (fencing.migrations.owner-role/fencing.migrations.application-role)"
                  + " already serve another database")
          .contains(other.ownerRole() + " (database " + other.name() + ")")
          .contains("set fencing.migrations.owner-role and fencing.migrations.application-role")
          .contains("fencing.migrations.owner-role=myapp_fencing_owner")
          .doesNotContain("the defaults");
      assertThat(schemas(db)).doesNotContain("fencing");

      // with roles of its own, the same application starts
      try (ConfigurableApplicationContext context = start(db)) {
        assertThat(context.getBean(FencingHealthIndicator.class).health().getStatus())
            .isEqualTo(Status.UP);
      }
    }
  }

  @Test
  void theSuggestedRoleNamesComeFromTheApplicationsName() {
    assertThat(FencingSchemaInitializer.rolePrefix("Ledger-Service 2"))
        .isEqualTo("ledger_service_2");
    assertThat(FencingSchemaInitializer.rolePrefix("2fa")).isEqualTo("fa");
    assertThat(FencingSchemaInitializer.rolePrefix("x".repeat(60))).hasSize(40);
    assertThat(FencingSchemaInitializer.rolePrefix("42")).isEqualTo("myapp");
    assertThat(FencingSchemaInitializer.rolePrefix(null)).isEqualTo("myapp");
  }

  /**
   * Makes the default roles serve {@code other} (a privilege in it, as {@code pg_shdepend} records)
   * whether or not they serve another database of the shared server already. Adds those this test
   * created to {@code created}: on a server where nothing made them yet, they are the test's to
   * drop.
   */
  private static void serveDefaultRoles(TestDatabase other, List<String> created)
      throws SQLException {
    try (Connection c = other.connect();
        Statement s = c.createStatement()) {
      for (String role :
          List.of(
              FencingMigrations.DEFAULT_OWNER_ROLE, FencingMigrations.DEFAULT_APPLICATION_ROLE)) {
        try (ResultSet rs =
            s.executeQuery("SELECT count(*) FROM pg_roles WHERE rolname = '" + role + "'")) {
          rs.next();
          if (rs.getLong(1) > 0) {
            continue;
          }
        }
        try {
          s.execute("CREATE ROLE " + role + " NOLOGIN");
          created.add(role);
        } catch (SQLException e) {
          // created meanwhile by another test run on the shared server: theirs, not ours
          if (!List.of("42710", "23505").contains(e.getSQLState())) {
            throw e;
          }
        }
      }
      s.execute("CREATE TABLE served (id int)");
      s.execute(
          "GRANT SELECT ON served TO "
              + FencingMigrations.DEFAULT_OWNER_ROLE
              + ", "
              + FencingMigrations.DEFAULT_APPLICATION_ROLE);
    }
  }

  /** Drops the default roles this test created, unless another test run uses them by now. */
  private static void dropRoles(List<String> created) throws SQLException {
    try (Connection c = TestPostgres.get().adminConnection();
        Statement s = c.createStatement()) {
      for (String role : created) {
        try {
          s.execute("DROP ROLE IF EXISTS " + role);
        } catch (SQLException e) {
          if (!"2BP01".equals(e.getSQLState())) { // dependent_objects_still_exist
            throw e;
          }
        }
      }
    }
  }

  private static void tamper(TestDatabase db) throws SQLException {
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      s.execute("ALTER FUNCTION fencing.release(text, bigint) SET work_mem = '64MB'");
    }
  }

  /** Starts the application on {@code db} with its own roles, and {@code properties}. */
  private static ConfigurableApplicationContext start(TestDatabase db, String... properties) {
    return run(
        Stream.concat(Arrays.stream(PerClassDatabase.properties(db)), Arrays.stream(properties))
            .toArray(String[]::new));
  }

  private static ConfigurableApplicationContext run(String... properties) {
    return new SpringApplicationBuilder(JdbcTestApplication.class)
        .web(WebApplicationType.NONE)
        .properties(
            "spring.main.banner-mode=off", "logging.level.org.springframework.boot.diagnostics=OFF")
        .properties(properties)
        .run();
  }

  private static FencingMigrations migrations(DataSource as, String ownerRole, String appRole) {
    return FencingMigrations.builder(as).ownerRole(ownerRole).applicationRole(appRole).build();
  }

  /** The start-up failure's message that the starter wrote for roles serving another database. */
  private static String startUpMessage(Throwable failure) {
    assertThat(failure).as("start-up failed").isNotNull();
    return messages(failure).stream()
        .filter(m -> m.startsWith("fencing migrations refused at start-up"))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no start-up message in " + messages(failure)));
  }

  /** Every message in the chain of {@code failure}, outermost first. */
  static List<String> messages(Throwable failure) {
    List<String> messages = new ArrayList<>();
    for (Throwable t = failure; t != null; t = t.getCause()) {
      messages.add(String.valueOf(t.getMessage()));
    }
    return messages;
  }

  /** The names of {@code db}'s schemas. */
  static List<String> schemas(TestDatabase db) throws SQLException {
    List<String> names = new ArrayList<>();
    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT nspname FROM pg_namespace")) {
      while (rs.next()) {
        names.add(rs.getString(1));
      }
    }
    return names;
  }
}
