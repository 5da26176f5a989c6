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
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Bad input to the starter (the {@code fencing.*} switches that decide whether anything is fenced),
 * catalogued in docs/BAD-INPUT.md: a clear start-up failure naming the property, nothing created.
 * And the spellings of {@code true} that Spring's binder accepts ({@code yes}, {@code on}, {@code
 * 1}, surrounding blanks) mean {@code true} for the switches too: a stale token's write through the
 * context's {@code JdbcTemplate} is refused.
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
