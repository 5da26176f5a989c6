package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.migrations.FencingMigrations;
import dev.fencing.spring.boot.autoconfigure.app.JdbcTestApplication;
import dev.fencing.testing.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Start-up with bad {@code fencing.*} values (a clear failure naming the property, nothing created)
 * and with {@code fencing.migrations.migrate=false} (validate only: fails on a missing or tampered
 * fence, starts on a migrated one).
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
        "fencing.lease.renew-fraction | 1.0         | fencing.lease.renew-fraction must be greater than 0 and less than 1",
        "fencing.lease.renew-fraction | 0           | fencing.lease.renew-fraction must be greater than 0 and less than 1",
        "fencing.lease.holder      | ''             | fencing.lease.holder must be 1 to 200 characters",
        "fencing.migrations.owner-role | fencing_app | must differ, both are 'fencing_app'",
        "fencing.migrations.application-role | app role | fencing.migrations.application-role must be a lower-case SQL identifier",
        "fencing.migrations.migrate | sometimes     | fencing.migrations.migrate",
        "fencing.datasource.exclude | ' '           | fencing.datasource.exclude[0] must be a bean name",
        "fencing.shedlock.resource-prefix | 'job '  | fencing.shedlock.resource-prefix",
      })
  void aBadValueFailsStartUpNamingThePropertyAndCreatesNothing(
      String property, String value, String message) throws SQLException {
    try (TestDatabase db = TestDatabase.create("bad_property")) {
      Throwable failure = catchThrowable(() -> start(db, property + "=" + value).close());

      assertThat(failure).isNotNull();
      assertThat(messages(failure)).anySatisfy(m -> assertThat(m).contains(message));
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
      assertThat(schemas(db)).doesNotContain("fencing");
    }
  }

  @Test
  void validateOnlyStartsOnAMigratedFenceAndFailsOnATamperedOne() throws SQLException {
    try (TestDatabase db = TestDatabase.create("validate_migrated")) {
      FencingMigrations.migrate(db.dataSource());
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

  private static void tamper(TestDatabase db) throws SQLException {
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      s.execute("ALTER FUNCTION fencing.release(text, bigint) SET work_mem = '64MB'");
    }
  }

  private static ConfigurableApplicationContext start(TestDatabase db, String property) {
    return new SpringApplicationBuilder(JdbcTestApplication.class)
        .web(WebApplicationType.NONE)
        .properties(
            "spring.datasource.url=" + db.jdbcUrl(),
            "spring.datasource.username=" + db.user(),
            "spring.datasource.password=" + db.password(),
            "spring.main.banner-mode=off",
            "logging.level.org.springframework.boot.diagnostics=OFF",
            property)
        .run();
  }

  private static List<String> messages(Throwable failure) {
    List<String> messages = new ArrayList<>();
    for (Throwable t = failure; t != null; t = t.getCause()) {
      messages.add(String.valueOf(t.getMessage()));
    }
    return messages;
  }

  private static List<String> schemas(TestDatabase db) throws SQLException {
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
