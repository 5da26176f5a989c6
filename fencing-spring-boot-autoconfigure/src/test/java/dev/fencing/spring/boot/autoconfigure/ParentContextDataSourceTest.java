package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.testing.TestDatabase;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.LazyInitializationBeanFactoryPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.support.SimpleThreadScope;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * A {@code DataSource} bean of a parent context (SpringApplicationBuilder's {@code parent}/{@code
 * child}) is never seen by the child's fencing post-processor: a child whose auto-configuration
 * fences used it bare (its {@code JdbcTemplate} and lease client take the parent's bean), and a
 * write with a superseded token bound committed. Start-up of such a child now fails naming the
 * bean; a parent that fences its own data source is fine.
 */
class ParentContextDataSourceTest {
  private final ApplicationContextRunner parent =
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class));

  private final ApplicationContextRunner child =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  JdbcTemplateAutoConfiguration.class, FencingAutoConfiguration.class));

  @Test
  void aChildThatFencesOverAParentsBareDataSourceFailsStartUp() throws Exception {
    try (TestDatabase db = TestDatabase.create("parent_datasource")) {
      PerClassDatabase.execute(db, "CREATE TABLE parent_entry (text text NOT NULL)");
      parent
          .withPropertyValues(PerClassDatabase.properties(db))
          .run(
              parentContext ->
                  child
                      .withParent(parentContext)
                      .withPropertyValues(PerClassDatabase.properties(db))
                      .run(
                          context -> {
                            if (context.getStartupFailure() == null) {
                              // what the started application did (before the fix)
                              JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
                              try (Superseded zombie =
                                  Superseded.take(context.getBean(LeaseClient.class), "parent")) {
                                Throwable refused =
                                    zombie.attempt(
                                        () ->
                                            jdbc.update(
                                                "INSERT INTO parent_entry VALUES ('stale')"));
                                assertThat(
                                        jdbc.queryForObject(
                                            "SELECT count(*) FROM parent_entry", Long.class))
                                    .as("a write with a superseded token (" + refused + ")")
                                    .isZero();
                              }
                            }
                            assertThat(context).hasFailed();
                            assertThat(context.getStartupFailure())
                                .rootCause()
                                .hasMessageContaining("DataSource bean dataSource")
                                .hasMessageContaining("parent context");
                          }));
    }
  }

  @Test
  void aChildOfAParentThatFencesItsDataSourceStarts() throws Exception {
    try (TestDatabase db = TestDatabase.create("parent_fenced")) {
      PerClassDatabase.execute(db, "CREATE TABLE parent_entry (text text NOT NULL)");
      parent
          .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class))
          .withPropertyValues(PerClassDatabase.properties(db))
          .run(
              parentContext ->
                  child
                      .withParent(parentContext)
                      .withPropertyValues(PerClassDatabase.properties(db))
                      .run(
                          context -> {
                            assertThat(context).hasNotFailed();
                            JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
                            try (Superseded zombie =
                                Superseded.take(context.getBean(LeaseClient.class), "parent")) {
                              Throwable refused =
                                  zombie.attempt(
                                      () ->
                                          jdbc.update("INSERT INTO parent_entry VALUES ('stale')"));
                              assertThat(refused).isNotNull();
                            }
                            assertThat(
                                    jdbc.queryForObject(
                                        "SELECT count(*) FROM parent_entry", Long.class))
                                .isZero();
                          }));
    }
  }

  /**
   * A parent that fences with the starter and excludes its data source decided so for its own bean;
   * a child with its own, different {@code fencing.datasource.exclude} must still start. Before,
   * the child judged the parent's bean by its own exclusions and refused to start.
   */
  @Test
  void aParentsOwnExclusionHoldsForItsBeanWhateverTheChildExcludes() throws Exception {
    try (TestDatabase db = TestDatabase.create("parent_excluded")) {
      parent
          .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class))
          .withPropertyValues(PerClassDatabase.properties(db))
          .withPropertyValues("fencing.datasource.exclude=dataSource")
          .run(
              parentContext -> {
                assertThat(parentContext).hasNotFailed();
                child
                    .withParent(parentContext)
                    .withPropertyValues(PerClassDatabase.properties(db))
                    .withPropertyValues("fencing.datasource.exclude=reporting")
                    .run(context -> assertThat(context).hasNotFailed());
              });
    }
  }

  /** A bean of the child that takes the data source itself (nothing that waits for migrations). */
  static final class Dao {
    final DataSource dataSource;

    Dao(DataSource dataSource) {
      this.dataSource = dataSource;
    }
  }

  /**
   * Lazy initialization ({@code spring.main.lazy-initialization}) in both contexts: the parent's
   * data source does not exist yet when the child has started, and the child's first use creates it
   * bare. Before, the child started, and a superseded token's write through its bean committed.
   */
  @Test
  void aLazyParentDataSourceTheChildCreatesLaterFailsStartUp() throws Exception {
    try (TestDatabase db = TestDatabase.create("parent_lazy")) {
      PerClassDatabase.execute(db, "CREATE TABLE parent_entry (text text NOT NULL)");
      ApplicationContextRunner leases =
          new ApplicationContextRunner()
              .withConfiguration(
                  AutoConfigurations.of(
                      DataSourceAutoConfiguration.class, FencingAutoConfiguration.class))
              .withPropertyValues(PerClassDatabase.properties(db));
      parent
          .withInitializer(
              c -> c.addBeanFactoryPostProcessor(new LazyInitializationBeanFactoryPostProcessor()))
          .withPropertyValues(PerClassDatabase.properties(db))
          .run(
              parentContext ->
                  child
                      .withParent(parentContext)
                      .withInitializer(
                          c ->
                              c.addBeanFactoryPostProcessor(
                                  new LazyInitializationBeanFactoryPostProcessor()))
                      .withBean(Dao.class)
                      .withPropertyValues(PerClassDatabase.properties(db))
                      .run(
                          context -> {
                            if (context.getStartupFailure() == null) {
                              // what the started application did (before the fix)
                              DataSource used = context.getBean(Dao.class).dataSource;
                              leases.run(
                                  other -> {
                                    try (Superseded zombie =
                                        Superseded.take(other.getBean(LeaseClient.class), "lazy")) {
                                      zombie.attempt(
                                          () ->
                                              new JdbcTemplate(used)
                                                  .update("INSERT INTO parent_entry VALUES ('x')"));
                                    }
                                  });
                              assertThat(
                                      new JdbcTemplate(used)
                                          .queryForObject(
                                              "SELECT count(*) FROM parent_entry", Long.class))
                                  .as("a write with a superseded token")
                                  .isZero();
                            }
                            assertThat(context).hasFailed();
                            assertThat(context.getStartupFailure())
                                .hasStackTraceContaining("DataSource bean dataSource")
                                .hasStackTraceContaining("parent context");
                          }));
    }
  }

  /**
   * A prototype-scoped {@code DataSource} of a parent without fencing: every use the child makes of
   * it (its {@code Dao}, its lease client, its {@code JdbcTemplate}) creates a new instance in the
   * parent, which no post-processor of the child wraps. Before, the check of the parent's beans
   * left non-singletons out: the child started, and a superseded token's write through its bean
   * committed. Now one instance is created to be judged (and destroyed again), and start-up fails
   * naming the bean.
   */
  @Test
  void aParentsPrototypeDataSourceFailsStartUp() throws Exception {
    try (TestDatabase db = TestDatabase.create("parent_prototype")) {
      PerClassDatabase.execute(db, "CREATE TABLE parent_entry (text text NOT NULL)");
      new ApplicationContextRunner()
          .withBean(
              "dataSource",
              DataSource.class,
              () -> new DriverManagerDataSource(db.jdbcUrl(), db.migrationUser(), db.password()),
              definition -> definition.setScope(BeanDefinition.SCOPE_PROTOTYPE))
          .run(
              parentContext ->
                  child
                      .withParent(parentContext)
                      .withBean(Dao.class)
                      .withPropertyValues(PerClassDatabase.properties(db))
                      .run(
                          context -> {
                            if (context.getStartupFailure() == null) {
                              // what the started application did (before the fix)
                              JdbcTemplate jdbc =
                                  new JdbcTemplate(context.getBean(Dao.class).dataSource);
                              try (Superseded zombie =
                                  Superseded.take(context.getBean(LeaseClient.class), "proto")) {
                                Throwable refused =
                                    zombie.attempt(
                                        () -> jdbc.update("INSERT INTO parent_entry VALUES ('x')"));
                                assertThat(
                                        jdbc.queryForObject(
                                            "SELECT count(*) FROM parent_entry", Long.class))
                                    .as("a write with a superseded token (" + refused + ")")
                                    .isZero();
                              }
                            }
                            assertThat(context).hasFailed();
                            assertThat(context.getStartupFailure())
                                .hasStackTraceContaining("DataSource bean dataSource")
                                .hasStackTraceContaining("parent context")
                                .hasStackTraceContaining("prototype");
                          }));
    }
  }

  /** A parent's prototype that fences each instance itself is judged fenced: the child starts. */
  @Test
  void aParentsPrototypeThatFencesItselfStarts() throws Exception {
    try (TestDatabase db = TestDatabase.create("parent_prototype_fenced")) {
      new ApplicationContextRunner()
          .withBean(
              "dataSource",
              DataSource.class,
              () ->
                  FencedDataSource.wrap(
                      new DriverManagerDataSource(db.jdbcUrl(), db.migrationUser(), db.password())),
              definition -> definition.setScope(BeanDefinition.SCOPE_PROTOTYPE))
          .run(
              parentContext ->
                  child
                      .withParent(parentContext)
                      .withBean(Dao.class)
                      .withPropertyValues(PerClassDatabase.properties(db))
                      .run(context -> assertThat(context).hasNotFailed()));
    }
  }

  /** A data source that fences itself and says whether it was closed (destroyed). */
  static final class ClosablePool extends DelegatingDataSource implements DisposableBean {
    volatile boolean closed;

    ClosablePool(DataSource target) {
      super(FencedDataSource.wrap(target));
    }

    @Override
    public void destroy() {
      closed = true;
    }
  }

  /**
   * A parent's {@code DataSource} of a custom scope (here Spring's thread scope; Spring Cloud's
   * refresh scope alike) that fences itself: the scope keeps one instance, which the parent's users
   * share. Judging it must not destroy it. Before, the child's start-up judged the instance and
   * destroyed it as if it were a prototype's own: the parent's live data source was closed.
   */
  @Test
  void aParentsScopedDataSourceIsJudgedNotDestroyed() throws Exception {
    try (TestDatabase db = TestDatabase.create("parent_scoped")) {
      new ApplicationContextRunner()
          .withInitializer(c -> c.getBeanFactory().registerScope("thread", new SimpleThreadScope()))
          .withBean(
              "dataSource",
              DataSource.class,
              () ->
                  new ClosablePool(
                      new DriverManagerDataSource(db.jdbcUrl(), db.migrationUser(), db.password())),
              definition -> definition.setScope("thread"))
          .run(
              parentContext -> {
                ClosablePool shared = (ClosablePool) parentContext.getBean("dataSource");
                child
                    .withParent(parentContext)
                    .withBean(Dao.class)
                    .withPropertyValues(PerClassDatabase.properties(db))
                    .run(context -> assertThat(context).hasNotFailed());
                assertThat(parentContext.getBean("dataSource")).isSameAs(shared);
                assertThat(shared.closed)
                    .as("the parent's scoped data source, in use, was destroyed by the judging")
                    .isFalse();
              });
    }
  }

  /**
   * A bootstrap parent (Spring Cloud's) has no {@code DataSource}: a child that defines and fences
   * its own starts, and its stale token's write is refused.
   */
  @Test
  void aChildUnderAParentWithoutDataSourcesStarts() throws Exception {
    try (TestDatabase db = TestDatabase.create("parent_bootstrap")) {
      PerClassDatabase.execute(db, "CREATE TABLE parent_entry (text text NOT NULL)");
      new ApplicationContextRunner()
          .run(
              bootstrap ->
                  child
                      .withParent(bootstrap)
                      .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class))
                      .withPropertyValues(PerClassDatabase.properties(db))
                      .run(
                          context -> {
                            assertThat(context).hasNotFailed();
                            JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
                            try (Superseded zombie =
                                Superseded.take(context.getBean(LeaseClient.class), "boot")) {
                              assertThat(
                                      zombie.attempt(
                                          () ->
                                              jdbc.update(
                                                  "INSERT INTO parent_entry VALUES ('stale')")))
                                  .isNotNull();
                            }
                            assertThat(
                                    jdbc.queryForObject(
                                        "SELECT count(*) FROM parent_entry", Long.class))
                                .isZero();
                          }));
    }
  }
}
