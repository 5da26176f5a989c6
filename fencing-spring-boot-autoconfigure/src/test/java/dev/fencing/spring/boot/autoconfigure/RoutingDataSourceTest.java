package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.testing.TestDatabase;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceProperties;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;
import org.springframework.jdbc.datasource.lookup.AbstractRoutingDataSource;

/**
 * A routing {@code DataSource} bean whose default target is a fenced {@code DataSource} bean
 * answered {@code isWrapperFor(FencedDataSource)} with true, so it was not wrapped, although it
 * routes other keys to targets that are not fenced: a stale token's write through such a key
 * committed. Start-up now fails naming the bean and the key.
 */
class RoutingDataSourceTest {
  private static final ThreadLocal<String> KEY = new ThreadLocal<>();

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  JdbcTemplateAutoConfiguration.class, FencingAutoConfiguration.class));

  @Test
  void aRouterWithAFencedDefaultAndAnUnfencedTargetFailsStartUp() throws Exception {
    try (TestDatabase db = TestDatabase.create("routing_datasource")) {
      PerClassDatabase.execute(
          db, "CREATE TABLE routed_entry (id serial PRIMARY KEY, text text NOT NULL)");
      runner
          .withUserConfiguration(Routing.class)
          .withPropertyValues(PerClassDatabase.properties(db))
          .run(
              context -> {
                if (context.getStartupFailure() == null) {
                  // what the started application did (before the fix)
                  LeaseClient leases = context.getBean(LeaseClient.class);
                  try (Superseded zombie = Superseded.take(leases, "routed")) {
                    JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
                    KEY.set("archive");
                    Throwable refused;
                    try {
                      refused =
                          zombie.attempt(
                              () ->
                                  jdbc.update("INSERT INTO routed_entry (text) VALUES ('stale')"));
                    } finally {
                      KEY.remove();
                    }
                    assertThat(
                            jdbc.queryForObject(
                                "SELECT count(*) FROM routed_entry WHERE text = 'stale'",
                                Long.class))
                        .as("a write with a superseded token (" + refused + ")")
                        .isZero();
                  }
                }
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure())
                    .rootCause()
                    .hasMessageContaining("router")
                    .hasMessageContaining("archive");
              });
    }
  }

  @Test
  void uniformRoutersStart() {
    try (TestDatabase db = TestDatabase.create("routing_uniform")) {
      runner
          .withUserConfiguration(PlainTargets.class)
          .withPropertyValues(PerClassDatabase.properties(db))
          .run(
              context -> {
                assertThat(context).hasNotFailed();
                assertThat(context.getBean("router"))
                    .as("no target is fenced: the router is fenced as a whole")
                    .isInstanceOf(FencedDataSource.class);
              });
      runner
          .withUserConfiguration(BeanTargets.class)
          .withPropertyValues(PerClassDatabase.properties(db))
          .run(
              context -> {
                assertThat(context).hasNotFailed();
                assertThat(context.getBean("router"))
                    .as("every target is a fenced bean: the router is left as it is")
                    .isInstanceOf(AbstractRoutingDataSource.class);
              });
    }
  }

  private static AbstractRoutingDataSource routing(
      DataSource fallback, Map<String, DataSource> targets) {
    AbstractRoutingDataSource router =
        new AbstractRoutingDataSource() {
          @Override
          protected Object determineCurrentLookupKey() {
            return KEY.get();
          }
        };
    router.setDefaultTargetDataSource(fallback);
    router.setTargetDataSources(new java.util.HashMap<Object, Object>(targets));
    return router;
  }

  private static DataSource plain(org.springframework.core.env.Environment env) {
    return properties(env).initializeDataSourceBuilder().type(SimpleDriverDataSource.class).build();
  }

  @Configuration(proxyBeanMethods = false)
  static class PlainTargets {
    @Bean
    DataSource router(org.springframework.core.env.Environment env) {
      DataSource a = plain(env);
      return routing(a, Map.of("a", a, "b", plain(env)));
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class BeanTargets {
    @Bean
    DataSource a(org.springframework.core.env.Environment env) {
      return plain(env);
    }

    @Bean
    DataSource b(org.springframework.core.env.Environment env) {
      return plain(env);
    }

    @Bean
    @Primary
    DataSource router(DataSource a, DataSource b) {
      return routing(a, Map.of("a", a, "b", b));
    }
  }

  private static DataSourceProperties properties(org.springframework.core.env.Environment env) {
    DataSourceProperties p = new DataSourceProperties();
    p.setUrl(env.getProperty("spring.datasource.url"));
    p.setUsername(env.getProperty("spring.datasource.username"));
    p.setPassword(env.getProperty("spring.datasource.password"));
    return p;
  }

  @Configuration(proxyBeanMethods = false)
  static class Routing {
    @Bean
    DataSourceProperties mainProperties(org.springframework.core.env.Environment env) {
      DataSourceProperties p = new DataSourceProperties();
      p.setUrl(env.getProperty("spring.datasource.url"));
      p.setUsername(env.getProperty("spring.datasource.username"));
      p.setPassword(env.getProperty("spring.datasource.password"));
      return p;
    }

    @Bean(destroyMethod = "close")
    DataSource main(DataSourceProperties mainProperties) {
      return mainProperties.initializeDataSourceBuilder().type(HikariDataSource.class).build();
    }

    @Bean
    @Primary
    DataSource router(DataSource main, DataSourceProperties mainProperties) {
      AbstractRoutingDataSource router =
          new AbstractRoutingDataSource() {
            @Override
            protected Object determineCurrentLookupKey() {
              return KEY.get();
            }
          };
      DataSource archive =
          mainProperties.initializeDataSourceBuilder().type(SimpleDriverDataSource.class).build();
      router.setDefaultTargetDataSource(main);
      router.setTargetDataSources(Map.of("main", main, "archive", archive));
      return router;
    }
  }
}
