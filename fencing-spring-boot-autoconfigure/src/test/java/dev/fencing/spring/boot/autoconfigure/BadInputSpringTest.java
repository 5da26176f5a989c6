package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencingExceptions;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.spring.boot.autoconfigure.app.JdbcTestApplication;
import dev.fencing.testing.TestDatabase;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * Bad input to the starter (the {@code fencing.*} switches that decide whether anything is fenced),
 * catalogued in docs/BAD-INPUT.md: a clear start-up failure naming the property, nothing created.
 * And the spellings of {@code true} that Spring's binder accepts ({@code yes}, {@code on}, {@code
 * 1}, surrounding blanks) mean {@code true} for the switches too: a stale token's write through the
 * context's {@code JdbcTemplate} is refused. And several {@code DataSource} beans with none chosen
 * for the fence (B164, B165).
 */
class BadInputSpringTest {

  @ParameterizedTest(name = "{0}={1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "B147 | fencing.enabled            | ture",
        "B147 | fencing.enabled            | ''",
        "B147 | fencing.datasource.wrap    | ture",
        "B147 | fencing.datasource.wrap    | ''",
        "B147 | fencing.shedlock.enabled   | maybe",
        // blanks the binder does not trim (it trims as String.trim(), code points up to U+0020):
        // it refuses the value, so the switch must not read it as false and leave fencing off
        "B160 | fencing.enabled            | 'false\u3000'",
        "B160 | fencing.datasource.wrap    | '\u2003false'",
      })
  void aSwitchThatIsNoBooleanFailsStartUpNamingThePropertyAndCreatesNothing(
      String id, String property, String value) throws SQLException {
    try (TestDatabase db = TestDatabase.create("bad_switch")) {
      Throwable failure = catchThrowable(() -> start(db, property + "=" + value).close());

      assertThat(failure).as("%s %s=%s", id, property, value).isNotNull();
      assertThat(StartUpPropertiesTest.messages(failure))
          .anySatisfy(
              m ->
                  assertThat(m)
                      .contains(property + " must be true or false")
                      .contains("was '" + value + "'"));
      assertThat(StartUpPropertiesTest.schemas(db)).doesNotContain("fencing");
    }
  }

  @ParameterizedTest(name = "{0}={1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "fencing.datasource.wrap | yes",
        "fencing.datasource.wrap | on",
        "fencing.datasource.wrap | 1",
        "fencing.datasource.wrap | 'true '",
        "fencing.enabled         | yes",
        "fencing.enabled         | 'True'",
        // a control character the binder trims (String.trim()): true to the binder, so to the
        // switch
        "fencing.datasource.wrap | '\u0007true'",
        "fencing.enabled         | '\u001btrue'",
      })
  void aSpellingOfTrueTheBinderAcceptsFencesTheDataSource(String property, String value)
      throws Exception {
    try (TestDatabase db = TestDatabase.create("true_switch")) {
      PerClassDatabase.execute(
          db, "CREATE TABLE switch_entry (id serial PRIMARY KEY, text text NOT NULL)");
      try (ConfigurableApplicationContext context = start(db, property + "=" + value)) {
        FencingProperties properties = context.getBean(FencingProperties.class);
        assertThat(properties.enabled() && properties.datasource().wrap())
            .as("the binder reads %s=%s as true", property, value)
            .isTrue();
        assertThat(context.getBean(DataSource.class).isWrapperFor(FencedDataSource.class))
            .as("%s=%s: the DataSource bean is fenced", property, value)
            .isTrue();
        JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
        try (Superseded zombie = Superseded.take(context.getBean(LeaseClient.class), "switch")) {
          Throwable refused =
              zombie.attempt(() -> jdbc.update("INSERT INTO switch_entry (text) VALUES ('z')"));
          assertThat(FencingExceptions.find(refused))
              .as("%s=%s: a stale token's write", property, value)
              .get()
              .isInstanceOf(StaleFencingTokenException.class);
        }
        assertThat(jdbc.queryForObject("SELECT count(*) FROM switch_entry", Long.class)).isZero();
      }
    }
  }

  /**
   * Several {@code DataSource} beans and nothing that says which database holds the fence: start-up
   * fails naming them and the remedies, before anything is migrated (before, the application
   * started with no lease client and no migrations, {@code @WithLease} failing at its first call).
   */
  @ParameterizedTest(name = "{0} {1} {2}")
  @CsvSource(
      delimiter = '|',
      value = {
        "B164 | Two         | ''                                    | main, reports",
        "B164 | Three       | ''                                    | a, b, c",
        // every one excluded: all are candidates again, and none is @Primary
        "B165 | Two         | fencing.datasource.exclude=main,reports | main, reports",
        // two @Primary beans: no single one
        "B165 | TwoPrimary  | ''                                    | main, reports",
      })
  void severalDataSourcesAndNoneChosenFailStartUpNamingThemAndMigrateNothing(
      String id, String beans, String property, String names) throws SQLException {
    try (TestDatabase db = TestDatabase.create("bad_several")) {
      Class<?> configuration =
          switch (beans) {
            case "Two" -> TwoDataSources.class;
            case "Three" -> ThreeDataSources.class;
            default -> TwoPrimaryDataSources.class;
          };
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  FencingAutoConfiguration.class, FencingShedLockAutoConfiguration.class))
          .withPropertyValues(PerClassDatabase.properties(db))
          .withPropertyValues(property.isEmpty() ? new String[0] : new String[] {property})
          .withUserConfiguration(configuration)
          .run(
              context -> {
                assertThat(context).as("%s %s %s", id, beans, property).hasFailed();
                assertThat(context.getStartupFailure())
                    .rootCause()
                    .hasMessageContaining("finds " + names.split(", ").length + " DataSource beans")
                    .hasMessageContaining("[" + names + "]")
                    .hasMessageContaining("@Primary")
                    .hasMessageContaining("fencing.datasource.exclude");
              });
      assertThat(StartUpPropertiesTest.schemas(db)).doesNotContain("fencing");
    }
  }

  private static DataSource plain(Environment environment) {
    return new DriverManagerDataSource(
        environment.getProperty("spring.datasource.url"),
        environment.getProperty("spring.datasource.username"),
        environment.getProperty("spring.datasource.password"));
  }

  @Configuration(proxyBeanMethods = false)
  static class TwoDataSources {
    @Bean
    DataSource main(Environment environment) {
      return plain(environment);
    }

    @Bean
    DataSource reports(Environment environment) {
      return plain(environment);
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class ThreeDataSources {
    @Bean
    DataSource a(Environment environment) {
      return plain(environment);
    }

    @Bean
    DataSource b(Environment environment) {
      return plain(environment);
    }

    @Bean
    DataSource c(Environment environment) {
      return plain(environment);
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class TwoPrimaryDataSources {
    @Bean
    @Primary
    DataSource main(Environment environment) {
      return plain(environment);
    }

    @Bean
    @Primary
    DataSource reports(Environment environment) {
      return plain(environment);
    }
  }

  private static ConfigurableApplicationContext start(TestDatabase db, String... properties) {
    return new SpringApplicationBuilder(JdbcTestApplication.class)
        .web(WebApplicationType.NONE)
        .properties(
            "spring.main.banner-mode=off", "logging.level.org.springframework.boot.diagnostics=OFF")
        .properties(
            Stream.concat(Arrays.stream(PerClassDatabase.properties(db)), Arrays.stream(properties))
                .toArray(String[]::new))
        .run();
  }
}
