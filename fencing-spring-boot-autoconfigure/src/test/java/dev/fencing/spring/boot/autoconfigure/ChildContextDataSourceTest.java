package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.testing.TestDatabase;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * A child context (SpringApplicationBuilder's {@code child}) that defines its own {@code
 * DataSource} while only its parent has fencing: no post-processor of the child wraps the child's
 * bean (auto-configuration runs per context), and the parent's cannot see it. Before, the child
 * started, and a write through its data source with a superseded token bound (the parent's lease
 * client issued it) committed. The parent's fencing now judges the data sources of a child that has
 * no fencing of its own when the child's refresh completes (the child's {@code
 * ContextRefreshedEvent} reaches its parents), and fails the child's start-up naming the bean.
 */
class ChildContextDataSourceTest {
  private final ApplicationContextRunner parent =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  DataSourceAutoConfiguration.class, FencingAutoConfiguration.class));

  private static DataSource own(TestDatabase db) {
    return new DriverManagerDataSource(db.jdbcUrl(), db.migrationUser(), db.password());
  }

  @Test
  void aChildWithoutFencingWhoseOwnDataSourceIsBareFailsStartUp() throws Exception {
    try (TestDatabase db = TestDatabase.create("child_bare")) {
      PerClassDatabase.execute(db, "CREATE TABLE child_entry (text text NOT NULL)");
      parent
          .withPropertyValues(PerClassDatabase.properties(db))
          .run(
              parentContext ->
                  new ApplicationContextRunner()
                      .withParent(parentContext)
                      .withBean("childDataSource", DataSource.class, () -> own(db))
                      .run(
                          context -> {
                            if (context.getStartupFailure() == null) {
                              // what the started application did (before the fix)
                              JdbcTemplate jdbc =
                                  new JdbcTemplate(
                                      context.getBean("childDataSource", DataSource.class));
                              try (Superseded zombie =
                                  Superseded.take(
                                      parentContext.getBean(LeaseClient.class), "child")) {
                                Throwable refused =
                                    zombie.attempt(
                                        () -> jdbc.update("INSERT INTO child_entry VALUES ('x')"));
                                assertThat(
                                        jdbc.queryForObject(
                                            "SELECT count(*) FROM child_entry", Long.class))
                                    .as("a write with a superseded token (" + refused + ")")
                                    .isZero();
                              }
                            }
                            assertThat(context).hasFailed();
                            assertThat(context.getStartupFailure())
                                .hasStackTraceContaining("DataSource bean childDataSource")
                                .hasStackTraceContaining("child context");
                          }));
    }
  }

  /** The parent's {@code fencing.datasource.exclude} leaves a child's bean of that name alone. */
  @Test
  void aChildsBareDataSourceExcludedByTheParentStarts() throws Exception {
    try (TestDatabase db = TestDatabase.create("child_excluded")) {
      parent
          .withPropertyValues(PerClassDatabase.properties(db))
          .withPropertyValues("fencing.datasource.exclude=reporting")
          .run(
              parentContext ->
                  new ApplicationContextRunner()
                      .withParent(parentContext)
                      .withBean("reporting", DataSource.class, () -> own(db))
                      .run(context -> assertThat(context).hasNotFailed()));
    }
  }

  /**
   * A child with the starter (auto-configuration runs in it too) fences its own data source itself:
   * it starts, the bean its beans get is fenced, and a superseded token's write is refused.
   */
  @Test
  void aChildWithFencingFencesItsOwnDataSource() throws Exception {
    try (TestDatabase db = TestDatabase.create("child_fenced")) {
      PerClassDatabase.execute(db, "CREATE TABLE child_entry (text text NOT NULL)");
      parent
          .withPropertyValues(PerClassDatabase.properties(db))
          .run(
              parentContext ->
                  new ApplicationContextRunner()
                      .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class))
                      .withParent(parentContext)
                      .withBean("childDataSource", DataSource.class, () -> own(db))
                      .run(
                          context -> {
                            assertThat(context).hasNotFailed();
                            DataSource used = context.getBean("childDataSource", DataSource.class);
                            assertThat(used.isWrapperFor(FencedDataSource.class)).isTrue();
                            JdbcTemplate jdbc = new JdbcTemplate(used);
                            try (Superseded zombie =
                                Superseded.take(context.getBean(LeaseClient.class), "child")) {
                              assertThat(
                                      zombie.attempt(
                                          () ->
                                              jdbc.update("INSERT INTO child_entry VALUES ('x')")))
                                  .isNotNull();
                            }
                            assertThat(
                                    jdbc.queryForObject(
                                        "SELECT count(*) FROM child_entry", Long.class))
                                .isZero();
                          }));
    }
  }

  /** A parent that does not wrap ({@code fencing.datasource.wrap=false}) judges no child. */
  @Test
  void aParentThatDoesNotWrapJudgesNoChild() throws Exception {
    try (TestDatabase db = TestDatabase.create("child_nowrap")) {
      parent
          .withPropertyValues(PerClassDatabase.properties(db))
          .withPropertyValues("fencing.datasource.wrap=false")
          .run(
              parentContext ->
                  new ApplicationContextRunner()
                      .withParent(parentContext)
                      .withBean("childDataSource", DataSource.class, () -> own(db))
                      .run(context -> assertThat(context).hasNotFailed()));
    }
  }
}
