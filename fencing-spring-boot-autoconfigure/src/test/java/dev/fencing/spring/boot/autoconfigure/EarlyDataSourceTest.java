package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.LeaseClient;
import dev.fencing.testing.TestDatabase;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * A {@code DataSource} bean created before the fencing post-processor was registered (an ordered
 * {@code BeanPostProcessor} of the application, or a bean such a post-processor needs, depends on
 * it; Spring only logs "not eligible for getting processed by all BeanPostProcessors") is never
 * wrapped: its connections carried no token, and a write with a stale token bound committed on any
 * table that is not protected. Start-up now fails naming the bean.
 */
class EarlyDataSourceTest {
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  DataSourceAutoConfiguration.class,
                  JdbcTemplateAutoConfiguration.class,
                  FencingAutoConfiguration.class));

  @Test
  void aDataSourceCreatedBeforeTheFencingPostProcessorFailsStartUp() throws Exception {
    try (TestDatabase db = TestDatabase.create("early_datasource")) {
      PerClassDatabase.execute(
          db, "CREATE TABLE early_entry (id serial PRIMARY KEY, text text NOT NULL)");
      runner
          .withPropertyValues(PerClassDatabase.properties(db))
          .withUserConfiguration(EarlyPostProcessor.class)
          .run(
              context -> {
                if (context.getStartupFailure() == null) {
                  // what the started application did (before the fix): a superseded token's
                  // write committed
                  LeaseClient leases = context.getBean(LeaseClient.class);
                  try (Superseded zombie = Superseded.take(leases, "early")) {
                    JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
                    Throwable refused =
                        zombie.attempt(
                            () -> jdbc.update("INSERT INTO early_entry (text) VALUES ('stale')"));
                    assertThat(
                            jdbc.queryForObject(
                                "SELECT count(*) FROM early_entry WHERE text = 'stale'",
                                Long.class))
                        .as("a write with a superseded token (" + refused + ")")
                        .isZero();
                  }
                }
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure())
                    .rootCause()
                    .hasMessageContaining("DataSource bean dataSource")
                    .hasMessageContaining("not fenced");
              });
    }
  }

  /** An ordered post-processor of the application that needs the data source. */
  @Configuration(proxyBeanMethods = false)
  static class EarlyPostProcessor {
    @Bean
    static Audit auditingPostProcessor(DataSource dataSource) {
      return new Audit(dataSource);
    }
  }

  record Audit(DataSource dataSource) implements BeanPostProcessor, Ordered {
    @Override
    public int getOrder() {
      return 0;
    }
  }
}
