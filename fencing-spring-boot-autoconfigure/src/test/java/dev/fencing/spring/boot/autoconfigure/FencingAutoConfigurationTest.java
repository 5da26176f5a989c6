package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.shedlock.FencedLockProvider;
import dev.fencing.testing.TestDatabaseExtension;
import java.util.Optional;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.LockProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Which beans exist under which properties and classpaths. */
class FencingAutoConfigurationTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  DataSourceAutoConfiguration.class,
                  FencingAutoConfiguration.class,
                  FencingHealthAutoConfiguration.class,
                  FencingMetricsAutoConfiguration.class,
                  FencingShedLockAutoConfiguration.class))
          .withPropertyValues(
              "spring.datasource.url=" + db.jdbcUrl(),
              "spring.datasource.username=" + db.user(),
              "spring.datasource.password=" + db.password());

  @Test
  void byDefaultEverythingIsThere() {
    runner.run(
        context -> {
          assertThat(context).hasNotFailed();
          assertThat(context.getBean(DataSource.class)).isInstanceOf(FencedDataSource.class);
          assertThat(context.getBean(DataSource.class).unwrap(HikariDataSource.class)).isNotNull();
          assertThat(context).hasSingleBean(LeaseClient.class);
          assertThat(context).hasSingleBean(FencingSchemaInitializer.class);
          assertThat(context).hasSingleBean(LeaseAdvisor.class);
          assertThat(context).hasSingleBean(FencingMetricsSupplier.class);
          assertThat(context).hasBean("fencingHealthIndicator");
          assertThat(context.getBean(LockProvider.class)).isInstanceOf(FencedLockProvider.class);
          assertThat(context).hasSingleBean(FencingProperties.class);
        });
  }

  @Test
  void disabledMeansNothing() {
    runner
        .withPropertyValues("fencing.enabled=false")
        .run(
            context -> {
              assertThat(context.getBean(DataSource.class)).isInstanceOf(HikariDataSource.class);
              assertThat(context).doesNotHaveBean(LeaseClient.class);
              assertThat(context).doesNotHaveBean(FencingSchemaInitializer.class);
              assertThat(context).doesNotHaveBean(LeaseAdvisor.class);
              assertThat(context).doesNotHaveBean(LockProvider.class);
              assertThat(context).doesNotHaveBean(HealthIndicator.class);
              assertThat(context).doesNotHaveBean(FencingMetricsSupplier.class);
            });
  }

  @Test
  void wrapOffLeavesTheDataSourceAsItIsButKeepsTheRest() {
    runner
        .withPropertyValues("fencing.datasource.wrap=false")
        .run(
            context -> {
              assertThat(context.getBean(DataSource.class)).isInstanceOf(HikariDataSource.class);
              assertThat(context).doesNotHaveBean(FencingDataSourcePostProcessor.class);
              assertThat(context).hasSingleBean(LeaseClient.class);
              assertThat(context).hasSingleBean(FencingSchemaInitializer.class);
            });
  }

  @Test
  void anExcludedDataSourceBeanIsNotWrapped() {
    runner
        .withPropertyValues("fencing.datasource.exclude=dataSource")
        .run(
            context ->
                assertThat(context.getBean(DataSource.class)).isInstanceOf(HikariDataSource.class));
  }

  @Test
  void shedLockProviderOnlyWithShedLockOnTheClasspathAndNoProviderOfTheApplication() {
    runner
        .withPropertyValues("fencing.shedlock.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean(LockProvider.class));
    runner
        .withClassLoader(new FilteredClassLoader(LockProvider.class))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).doesNotHaveBean("fencingLockProvider");
            });
    runner
        .withUserConfiguration(OwnLockProvider.class)
        .run(
            context -> {
              assertThat(context).hasSingleBean(LockProvider.class);
              assertThat(context.getBean(LockProvider.class))
                  .isNotInstanceOf(FencedLockProvider.class);
            });
  }

  @Test
  void healthIndicatorCanBeSwitchedOffAndNeedsBootsHealth() {
    runner
        .withPropertyValues("management.health.fencing.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean("fencingHealthIndicator"));
    runner
        .withClassLoader(new FilteredClassLoader(HealthIndicator.class))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).doesNotHaveBean("fencingHealthIndicator");
            });
  }

  @Test
  void metricsNeedMicrometer() {
    runner
        .withClassLoader(new FilteredClassLoader("io.micrometer.core"))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).doesNotHaveBean(FencingMetricsSupplier.class);
              assertThat(context.getBean(DataSource.class)).isInstanceOf(FencedDataSource.class);
            });
  }

  @Test
  void anApplicationsOwnLeaseClientWins() {
    runner
        .withUserConfiguration(OwnLeaseClient.class)
        .run(context -> assertThat(context.getBean(LeaseClient.class).holder()).isEqualTo("mine"));
  }

  @Test
  void withoutADataSourceThereIsNothingToFence() {
    new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                FencingAutoConfiguration.class, FencingShedLockAutoConfiguration.class))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).doesNotHaveBean(LeaseClient.class);
              assertThat(context).doesNotHaveBean(FencingSchemaInitializer.class);
              assertThat(context).doesNotHaveBean(LockProvider.class);
            });
  }

  @Configuration(proxyBeanMethods = false)
  static class OwnLockProvider {
    @Bean
    LockProvider myLockProvider() {
      return configuration -> Optional.empty();
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class OwnLeaseClient {
    @Bean
    LeaseClient myLeaseClient(DataSource dataSource) {
      return LeaseClient.builder(dataSource).holder("mine").build();
    }
  }
}
