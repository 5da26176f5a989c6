package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.testing.TestDatabase;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * Two {@code DataSource} beans of the application ({@code main} in the class's database, {@code
 * reports} in a second one). Every one not excluded is fenced; the lease client, the fence's
 * migrations, ShedLock's provider and health use the one among those not in {@code
 * fencing.datasource.exclude} (the only one, or the {@code @Primary} one). Before, the lease client
 * and the migrations were conditional on a single candidate among all {@code DataSource} beans:
 * with two and no {@code @Primary} the application started with neither (the migrations silently
 * not run, {@code @WithLease} failing at its first call), and with the excluded one
 * {@code @Primary} the fence was migrated into, and leases issued by, the database whose writes are
 * not fenced.
 */
class SeveralDataSourcesTest {
  // a database of its own for each test (instance field), and a second one beside it
  @RegisterExtension final TestDatabaseExtension db = new TestDatabaseExtension();

  private static volatile TestDatabase reports;

  private ApplicationContextRunner runner() {
    return new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                DataSourceAutoConfiguration.class,
                FencingAutoConfiguration.class,
                FencingHealthAutoConfiguration.class,
                FencingShedLockAutoConfiguration.class))
        .withPropertyValues(PerClassDatabase.properties(db.database()));
  }

  @BeforeEach
  void secondDatabase() {
    reports = TestDatabase.create("several_reports");
  }

  @AfterEach
  void dropSecondDatabase() {
    reports.close();
  }

  @Test
  void twoDataSourcesWithoutPrimaryFailStartUpNamingThemAndTheRemedies() {
    runner()
        .withUserConfiguration(TwoDataSources.class)
        .run(
            context -> {
              assertThat(context).as("started with " + whatStarted(context)).hasFailed();
              Throwable failure = context.getStartupFailure();
              assertThat(failure)
                  .rootCause()
                  .hasMessageContaining("main")
                  .hasMessageContaining("reports")
                  .hasMessageContaining("@Primary")
                  .hasMessageContaining("fencing.datasource.exclude");
              FailureAnalysis analysis = new FencingStartUpFailureAnalyzer().analyze(failure);
              assertThat(analysis).as("reported as Boot reports a failed start-up").isNotNull();
              assertThat(analysis.getDescription()).contains("[main, reports]");
              assertThat(analysis.getAction())
                  .contains("@Primary")
                  .contains("fencing.datasource.exclude=reports");
              assertThat(migrated(db.database())).as("nothing was migrated").isFalse();
              assertThat(migrated(reports)).isFalse();
            });
  }

  @Test
  void anExcludedSecondDataSourceLeavesTheOtherForLeasesAndMigrations() {
    runner()
        .withUserConfiguration(TwoDataSources.class)
        .withPropertyValues("fencing.datasource.exclude=reports")
        .run(
            context -> {
              assertThat(context).as("started with " + whatStarted(context)).hasNotFailed();
              assertFencedHere(context, "main", "reports");
            });
  }

  @Test
  void anExcludedPrimaryDataSourceIsNotWhereTheFenceLives() {
    runner()
        .withUserConfiguration(ReportsPrimary.class)
        .withPropertyValues("fencing.datasource.exclude=reports")
        .run(
            context -> {
              assertThat(context).as("started with " + whatStarted(context)).hasNotFailed();
              assertFencedHere(context, "main", "reports");
            });
  }

  @Test
  void thePrimaryOfTwoFencedDataSourcesTakesTheLeasesAndBothAreFenced() {
    runner()
        .withUserConfiguration(MainPrimary.class)
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(
                      context
                          .getBean("reports", DataSource.class)
                          .isWrapperFor(FencedDataSource.class))
                  .isTrue();
              assertFencedHere(context, "main", null);
            });
  }

  /**
   * The fence lives in {@code fenced}'s database (migrated there, leases issued there, a superseded
   * token refused there), and {@code bare} (if any) is left as it is, its database not migrated.
   */
  private void assertFencedHere(AssertableApplicationContext context, String fenced, String bare)
      throws Exception {
    DataSource main = context.getBean(fenced, DataSource.class);
    assertThat(main.isWrapperFor(FencedDataSource.class)).isTrue();
    assertThat(context).hasSingleBean(LeaseClient.class);
    assertThat(context).hasSingleBean(FencingSchemaInitializer.class);
    assertThat(context).hasBean("fencingLockProvider");
    assertThat(context).hasBean("fencingHealthIndicator");
    assertThat(migrated(db.database())).as("the fence was migrated into main's database").isTrue();
    if (bare != null) {
      assertThat(context.getBean(bare, DataSource.class).isWrapperFor(FencedDataSource.class))
          .isFalse();
      assertThat(migrated(reports)).as("nor into the excluded one's").isFalse();
    }
    JdbcTemplate jdbc = new JdbcTemplate(main);
    jdbc.execute("CREATE TABLE IF NOT EXISTS several_entry (text text NOT NULL)");
    try (Superseded zombie = Superseded.take(context.getBean(LeaseClient.class), "several")) {
      assertThat(zombie.attempt(() -> jdbc.update("INSERT INTO several_entry VALUES ('x')")))
          .as("a superseded token of the context's lease client, written through " + fenced)
          .isNotNull();
    }
    assertThat(jdbc.queryForObject("SELECT count(*) FROM several_entry", Long.class)).isZero();
  }

  /** What a context that should not have started had configured (the silent outcome). */
  private static String whatStarted(AssertableApplicationContext context) {
    if (context.getStartupFailure() != null) {
      return "failure " + context.getStartupFailure();
    }
    return "lease clients "
        + Arrays.toString(context.getBeanNamesForType(LeaseClient.class))
        + ", schema initializers "
        + Arrays.toString(context.getBeanNamesForType(FencingSchemaInitializer.class))
        + ", data sources "
        + Arrays.toString(context.getBeanNamesForType(DataSource.class))
        + " fenced "
        + Arrays.stream(context.getBeanNamesForType(DataSource.class))
            .map(n -> n + "=" + fenced(context.getBean(n, DataSource.class)))
            .toList();
  }

  private static boolean fenced(DataSource dataSource) {
    try {
      return dataSource.isWrapperFor(FencedDataSource.class);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static boolean migrated(TestDatabase database) throws SQLException {
    try (Connection c = database.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery("SELECT to_regclass('fencing.fencing_schema_history') IS NOT NULL")) {
      rs.next();
      return rs.getBoolean(1);
    }
  }

  private static DataSource of(TestDatabase database) {
    return new DriverManagerDataSource(
        database.jdbcUrl(), database.migrationUser(), database.password());
  }

  @Configuration(proxyBeanMethods = false)
  static class TwoDataSources {
    @Bean
    DataSource main(Environment environment) {
      return new DriverManagerDataSource(
          environment.getProperty("spring.datasource.url"),
          environment.getProperty("spring.datasource.username"),
          environment.getProperty("spring.datasource.password"));
    }

    @Bean
    DataSource reports() {
      return of(reports);
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class ReportsPrimary {
    @Bean
    DataSource main(Environment environment) {
      return new TwoDataSources().main(environment);
    }

    @Bean
    @Primary
    DataSource reports() {
      return of(reports);
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class MainPrimary {
    @Bean
    @Primary
    DataSource main(Environment environment) {
      return new TwoDataSources().main(environment);
    }

    @Bean
    DataSource reports() {
      return of(reports);
    }
  }
}
