package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.LeaseClient;
import dev.fencing.testing.TestDatabase;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
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
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.LazyConnectionDataSourceProxy;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A {@code JdbcTemplate}, {@code NamedParameterJdbcTemplate} or transaction manager bean built over
 * a {@code DataSource} that is no bean (the common shape of a second database's configuration:
 * {@code new JdbcTemplate(properties.initializeDataSourceBuilder().build())}): fencing wraps only
 * {@code DataSource} beans, so such a bean handed out by the context wrote with no token checked,
 * and a superseded token's write through it committed. Start-up now fails naming the bean, unless
 * it is listed in {@code fencing.datasource.exclude}.
 */
class BareDataSourceUserTest {
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  DataSourceAutoConfiguration.class,
                  JdbcTemplateAutoConfiguration.class,
                  DataSourceTransactionManagerAutoConfiguration.class,
                  FencingAutoConfiguration.class));

  @Test
  void aJdbcTemplateBeanOverADataSourceThatIsNoBeanFailsStartUp() throws Exception {
    assertRefused(ReportsJdbc.class, "JdbcTemplate bean reportsJdbc");
  }

  @Test
  void aNamedParameterJdbcTemplateBeanOverADataSourceThatIsNoBeanFailsStartUp() throws Exception {
    assertRefused(ReportsNamed.class, "NamedParameterJdbcTemplate bean reportsNamed");
  }

  @Test
  void aTransactionManagerBeanOverADataSourceThatIsNoBeanFailsStartUp() throws Exception {
    assertRefused(
        ReportsTransactions.class, "DataSourceTransactionManager bean reportsTransactions");
  }

  @Test
  void aBeanListedInExcludeStartsUnfenced() throws Exception {
    try (TestDatabase db = TestDatabase.create("bare_user_excluded")) {
      runner
          .withPropertyValues(PerClassDatabase.properties(db))
          .withPropertyValues("fencing.datasource.exclude=reportsJdbc")
          .withUserConfiguration(ReportsJdbc.class)
          .run(context -> assertThat(context).hasNotFailed());
    }
  }

  private void assertRefused(Class<?> configuration, String named) throws Exception {
    try (TestDatabase db = TestDatabase.create("bare_user")) {
      PerClassDatabase.execute(
          db, "CREATE TABLE report_entry (id serial PRIMARY KEY, text text NOT NULL)");
      runner
          .withPropertyValues(PerClassDatabase.properties(db))
          .withUserConfiguration(configuration)
          .run(
              context -> {
                if (context.getStartupFailure() == null) {
                  // what the started application did (before the fix)
                  LeaseClient leases = context.getBean(LeaseClient.class);
                  JdbcTemplate checked = new JdbcTemplate(context.getBean(DataSource.class));
                  try (Superseded zombie = Superseded.take(leases, "reports")) {
                    Throwable refused = zombie.attempt(() -> write(context.getBean(configuration)));
                    assertThat(
                            checked.queryForObject("SELECT count(*) FROM report_entry", Long.class))
                        .as("a write with a superseded token through %s (%s)", named, refused)
                        .isZero();
                  }
                }
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure())
                    .rootCause()
                    .hasMessageContaining(named)
                    .hasMessageContaining("not fenced")
                    .hasMessageContaining("fencing.datasource.exclude");
              });
    }
  }

  private static void write(Object configuration) {
    String insert = "INSERT INTO report_entry (text) VALUES ('stale')";
    if (configuration instanceof ReportsJdbc c) {
      c.template.update(insert);
    } else if (configuration instanceof ReportsNamed c) {
      c.template.update(insert, java.util.Map.of());
    } else if (configuration instanceof ReportsTransactions c) {
      new TransactionTemplate(c.manager)
          .executeWithoutResult(s -> new JdbcTemplate(c.manager.getDataSource()).update(insert));
    }
  }

  /** A second database's pool built in place: no bean, so never wrapped. */
  private static DataSource bare(DataSourceProperties properties) {
    return properties.initializeDataSourceBuilder().build();
  }

  @Configuration(proxyBeanMethods = false)
  static class ReportsJdbc {
    JdbcTemplate template;

    @Bean
    JdbcTemplate reportsJdbc(DataSourceProperties properties) {
      template = new JdbcTemplate(bare(properties));
      return template;
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class ReportsNamed {
    NamedParameterJdbcTemplate template;

    @Bean
    NamedParameterJdbcTemplate reportsNamed(DataSourceProperties properties) {
      template = new NamedParameterJdbcTemplate(bare(properties));
      return template;
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class ReportsTransactions {
    DataSourceTransactionManager manager;

    @Bean
    DataSourceTransactionManager reportsTransactions(DataSourceProperties properties) {
      manager = new DataSourceTransactionManager(bare(properties));
      return manager;
    }
  }

  // A JdbcTemplate bean over one of Spring's own proxies (TransactionAwareDataSourceProxy,
  // LazyConnectionDataSourceProxy: a DelegatingDataSource) built in place: judged as what it
  // writes through. Over a DataSource bean listed in fencing.datasource.exclude it starts (it
  // failed: the proxy is no bean); over a pool that is no bean it is still refused.

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
