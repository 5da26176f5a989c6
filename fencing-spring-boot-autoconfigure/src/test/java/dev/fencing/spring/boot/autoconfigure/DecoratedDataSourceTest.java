package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencingExceptions;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.testing.TestDatabase;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * A {@code DataSource} decorated by another post-processor after fencing wrapped it (as
 * datasource-proxy, datasource-micrometer or a tracing library do: a plain {@code
 * BeanPostProcessor}, which runs after fencing's ordered one), so the bean is {@code
 * Decorator(FencedDataSource(pool))}. The fence's migrations, the lease client and the
 * application's Flyway must still reach the pool (their SQL carries no token, {@code require-token}
 * refuses it on the fenced data source), and the application's writes still go through the fence.
 */
class DecoratedDataSourceTest {
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  DataSourceAutoConfiguration.class,
                  JdbcTemplateAutoConfiguration.class,
                  DataSourceTransactionManagerAutoConfiguration.class,
                  FlywayAutoConfiguration.class,
                  FencingAutoConfiguration.class));

  @Test
  void aDecoratorAroundTheFencedDataSourceKeepsLeasesAndMigrationsOnThePool() throws Exception {
    try (TestDatabase db = TestDatabase.create("decorated_datasource")) {
      runner
          .withPropertyValues(PerClassDatabase.properties(db))
          .withPropertyValues(
              "fencing.datasource.require-token=true",
              "spring.flyway.locations=classpath:db/migration")
          .withUserConfiguration(Decorating.class)
          .run(
              context -> {
                assertThat(context).hasNotFailed();
                DataSource bean = context.getBean(DataSource.class);
                assertThat(bean).isInstanceOf(Decorator.class);
                assertThat(bean.isWrapperFor(FencedDataSource.class)).isTrue();
                JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
                LeaseClient leases = context.getBean(LeaseClient.class);
                try (Lease lease =
                    leases.tryAcquire("decorated", Duration.ofSeconds(30)).orElseThrow()) {
                  assertThat(lease.token().value()).isPositive();
                }

                Throwable missing =
                    org.assertj.core.api.Assertions.catchThrowable(
                        () ->
                            jdbc.update("INSERT INTO ledger_entry (text, amount) VALUES ('a', 1)"));
                assertThat(FencingExceptions.find(missing))
                    .as("a write with no token (require-token): %s", missing)
                    .get()
                    .isInstanceOf(MissingFencingTokenException.class);
                try (Superseded zombie = Superseded.take(leases, "decorated")) {
                  Throwable refused =
                      zombie.attempt(
                          () ->
                              jdbc.update(
                                  "INSERT INTO ledger_entry (text, amount) VALUES ('z', 1)"));
                  assertThat(FencingExceptions.find(refused))
                      .as("a superseded token's write: %s", refused)
                      .get()
                      .isInstanceOf(StaleFencingTokenException.class);
                }
                assertThat(jdbc.queryForObject("SELECT count(*) FROM ledger_entry", Long.class))
                    .isZero();
              });
    }
  }

  /** A decorating post-processor as tracing and logging libraries register: not ordered. */
  @Configuration(proxyBeanMethods = false)
  static class Decorating {
    @Bean
    static BeanPostProcessor decoratingPostProcessor() {
      return new BeanPostProcessor() {
        @Override
        public Object postProcessAfterInitialization(Object bean, String beanName) {
          return bean instanceof DataSource dataSource && !(bean instanceof Decorator)
              ? new Decorator(dataSource)
              : bean;
        }
      };
    }
  }

  /** What datasource-proxy's {@code ProxyDataSource} is: a delegating data source. */
  static final class Decorator extends DelegatingDataSource {
    Decorator(DataSource target) {
      super(target);
    }
  }
}
