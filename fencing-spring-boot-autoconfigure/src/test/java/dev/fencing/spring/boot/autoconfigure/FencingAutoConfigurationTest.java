package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.shedlock.FencedLockProvider;
import dev.fencing.testing.TestDatabase;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
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
          .withPropertyValues(PerClassDatabase.properties(db.database()));

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
  void everyPropertyBinds() {
    // its own database (a second fence schema in one database collides on V4's event trigger)
    // and that database's roles, which close() drops
    try (TestDatabase own = TestDatabase.create("bind_everything")) {
      bindEverything(own, own.appRole(), own.ownerRole());
    }
  }

  private void bindEverything(TestDatabase own, String appRole, String ownerRole) {
    runner
        .withPropertyValues(
            "spring.datasource.url=" + own.jdbcUrl(),
            "spring.datasource.username=" + own.migrationUser(),
            "fencing.schema=locks",
            "fencing.migrations.migrate=true",
            "fencing.migrations.application-role=" + appRole,
            "fencing.migrations.owner-role=" + ownerRole,
            "fencing.datasource.require-token=true",
            "fencing.datasource.record-rejections=false",
            "fencing.datasource.exclude=reportingDataSource,archiveDataSource",
            "fencing.lease.holder=node-1",
            "fencing.lease.ttl=PT45S",
            "fencing.lease.max-wait=2m",
            "fencing.lease.handover-timeout=750ms",
            "fencing.lease.keep-alive=false",
            "fencing.lease.renew-fraction=0.5",
            "fencing.shedlock.resource-prefix=job:",
            "fencing.metrics.enabled=false")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              FencingProperties p = context.getBean(FencingProperties.class);
              assertThat(p.schema()).isEqualTo("locks");
              assertThat(p.migrations())
                  .isEqualTo(new FencingProperties.Migrations(true, appRole, ownerRole));
              assertThat(p.datasource())
                  .isEqualTo(
                      new FencingProperties.DataSourceFencing(
                          true, List.of("reportingDataSource", "archiveDataSource"), true, false));
              assertThat(p.lease())
                  .isEqualTo(
                      new FencingProperties.Lease(
                          "node-1",
                          Duration.ofSeconds(45),
                          Duration.ofMinutes(2),
                          Duration.ofMillis(750),
                          false,
                          0.5));
              assertThat(p.shedlock().resourcePrefix()).isEqualTo("job:");
              assertThat(p.metrics().enabled()).isFalse();
              assertThat(context.getBean(LeaseClient.class).holder()).isEqualTo("node-1");
              // the schema and roles reached the migrations
              try (Connection c = own.connect();
                  Statement s = c.createStatement();
                  ResultSet rs =
                      s.executeQuery(
                          "SELECT (SELECT count(*) FROM locks.fencing_schema_history WHERE success),"
                              + " (SELECT relowner::regrole::text FROM pg_class"
                              + "   WHERE oid = 'locks.token_seq'::regclass),"
                              + " has_function_privilege('"
                              + appRole
                              + "', 'locks.check_token(text, bigint)', 'EXECUTE')")) {
                rs.next();
                assertThat(rs.getLong(1)).isPositive();
                assertThat(rs.getString(2)).isEqualTo(ownerRole);
                assertThat(rs.getBoolean(3)).isTrue();
              }
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
  void resourcesBindPerBeanNameAndAnExcludedBeanCannotHaveAny() {
    runner
        .withPropertyValues("fencing.datasource.resources.dataSource=ledger,shard-a/*")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context.getBean(FencingProperties.class).datasource().resources())
                  .isEqualTo(Map.of("dataSource", List.of("ledger", "shard-a/*")));
              assertThat(context.getBean(DataSource.class)).isInstanceOf(FencedDataSource.class);
            });
    runner
        .withPropertyValues(
            "fencing.datasource.exclude=dataSource",
            "fencing.datasource.resources.dataSource=ledger")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining(
                        "fencing.datasource.resources.dataSource: the bean is not fenced"
                            + " (fencing.datasource.exclude)"));
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
              // the defaults, bound without a database to migrate
              FencingProperties p = context.getBean(FencingProperties.class);
              assertThat(p.schema()).isEqualTo(FencingMigrations.DEFAULT_SCHEMA);
              assertThat(p.migrations())
                  .isEqualTo(
                      new FencingProperties.Migrations(
                          true,
                          FencingMigrations.DEFAULT_APPLICATION_ROLE,
                          FencingMigrations.DEFAULT_OWNER_ROLE));
              assertThat(p.migrations().applicationRole()).isEqualTo("fencing_app");
              assertThat(p.migrations().ownerRole()).isEqualTo("fencing_owner");
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
