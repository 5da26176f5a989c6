package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabase;
import javax.sql.DataSource;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceProperties;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.LazyConnectionDataSourceProxy;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;

/**
 * A {@code JdbcTemplate} bean over one of Spring's own proxies ({@code
 * TransactionAwareDataSourceProxy}, {@code LazyConnectionDataSourceProxy}: a {@code
 * DelegatingDataSource}) of a {@code DataSource} bean listed in {@code fencing.datasource.exclude}:
 * the proxy writes through that bean, which the application chose to leave unfenced, so start-up
 * goes on ({@link DataSourceUsers}). The proxy itself is no bean; start-up failed, telling the
 * application to exclude the template too.
 */
class ProxiedDataSourceUserTest {
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  DataSourceAutoConfiguration.class,
                  JdbcTemplateAutoConfiguration.class,
                  DataSourceTransactionManagerAutoConfiguration.class,
                  FencingAutoConfiguration.class));

  @ParameterizedTest
  @ValueSource(strings = {"transaction-aware", "lazy"})
  void aTemplateOverAProxyOfAnExcludedDataSourceBeanStarts(String proxy) throws Exception {
    try (TestDatabase db = TestDatabase.create("proxied_user")) {
      runner
          .withPropertyValues(PerClassDatabase.properties(db))
          .withPropertyValues("fencing.datasource.exclude=reportsDataSource", "test.proxy=" + proxy)
          .withUserConfiguration(ExcludedReports.class)
          .run(context -> assertThat(context).hasNotFailed());
    }
  }

  /** A proxy of a pool that is no bean is still refused: the proxy leads to no bean. */
  @ParameterizedTest
  @ValueSource(strings = {"transaction-aware", "lazy"})
  void aTemplateOverAProxyOfAPoolThatIsNoBeanFailsStartUp(String proxy) throws Exception {
    try (TestDatabase db = TestDatabase.create("proxied_bare")) {
      runner
          .withPropertyValues(PerClassDatabase.properties(db))
          .withPropertyValues("test.proxy=" + proxy)
          .withUserConfiguration(BareReports.class)
          .run(
              context -> {
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure())
                    .rootCause()
                    .hasMessageContaining("JdbcTemplate bean reportsJdbc")
                    .hasMessageContaining("not fenced");
              });
    }
  }

  private static DataSource proxied(DataSource target, Environment environment) {
    return "lazy".equals(environment.getProperty("test.proxy"))
        ? new LazyConnectionDataSourceProxy(target)
        : new TransactionAwareDataSourceProxy(target);
  }

  @Configuration(proxyBeanMethods = false)
  static class BareReports {
    @Bean
    JdbcTemplate reportsJdbc(DataSourceProperties properties, Environment environment) {
      return new JdbcTemplate(
          proxied(properties.initializeDataSourceBuilder().build(), environment));
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class ExcludedReports {
    @Bean
    @Primary
    DataSource dataSource(DataSourceProperties properties) {
      return properties.initializeDataSourceBuilder().build();
    }

    @Bean
    DataSource reportsDataSource(DataSourceProperties properties) {
      return properties.initializeDataSourceBuilder().build();
    }

    @Bean
    JdbcTemplate reportsJdbc(
        @Qualifier("reportsDataSource") DataSource reports, Environment environment) {
      return new JdbcTemplate(proxied(reports, environment));
    }
  }
}
