package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.jdbc.LeaseClient;
import javax.sql.DataSource;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.flyway.autoconfigure.FlywayConfigurationCustomizer;
import org.springframework.boot.sql.init.dependency.DatabaseInitializationDependencyConfigurer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Fallback;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.task.TaskDecorator;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Fencing for a Spring Boot application (properties {@link FencingProperties}, prefix {@code
 * fencing}):
 *
 * <ul>
 *   <li>every {@code DataSource} bean is wrapped in a {@code FencedDataSource} (static bean
 *       post-processor; {@code fencing.datasource.wrap}, {@code fencing.datasource.exclude});
 *   <li>the fence's migrations run at start-up as their own Flyway instance, registered as a
 *       database initializer that runs before the application's own Flyway and before JPA (bean
 *       {@code fencingSchemaInitializer}; {@code fencing.migrations.migrate=false} validates
 *       instead);
 *   <li>a {@link LeaseClient} bean over the pool, and the {@link dev.fencing.spring.boot.WithLease}
 *       advice; the lease client and the migrations use the {@code DataSource} bean not in {@code
 *       fencing.datasource.exclude} (the only one, or the {@code @Primary} one), and start-up fails
 *       naming the beans when several are candidates and none is chosen ({@link FenceDataSource});
 *   <li>a {@code TaskDecorator} that carries the submitting thread's tokens, with their leases,
 *       into tasks of Boot's task executors ({@code @Async}, {@code applicationTaskExecutor}) and
 *       scheduler ({@code TaskScheduler.schedule}, {@code scheduleAtFixedRate}, {@code
 *       scheduleWithFixedDelay}: every run of a repeating task carries what was bound when it was
 *       scheduled), and leaves nothing bound on a pooled thread ({@link FencingTaskDecorator},
 *       {@link FencedTaskScheduler} for the virtual-thread scheduler). {@code @Scheduled} jobs are
 *       scheduled at start-up with nothing bound: one that is {@code @WithLease} or
 *       {@code @SchedulerLock} takes its lease at each run;
 *   <li>refusals reach callers as {@link dev.fencing.spring.boot.FencingRefusedDataAccessException}
 *       from {@code JdbcTemplate}, {@code JdbcTransactionManager}, {@code JpaTransactionManager}
 *       and repositories;
 *   <li>the application's own Flyway migrates through the pool, not the fenced data source.
 * </ul>
 *
 * <p>Health ({@link FencingHealthAutoConfiguration}), metrics ({@link
 * FencingMetricsAutoConfiguration}) and ShedLock ({@link FencingShedLockAutoConfiguration}) are
 * configured alongside.
 */
@AutoConfiguration(
    afterName = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
    beforeName = {
      "org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration",
      "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration",
      "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
      "org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration"
    })
@ConditionalOnClass({DataSource.class, JdbcTemplate.class, TransactionSynchronizationManager.class})
@ConditionalOnFencingSwitch("fencing.enabled")
@EnableConfigurationProperties(FencingProperties.class)
@Import({
  DatabaseInitializationDependencyConfigurer.class,
  FencingAutoConfiguration.AutoProxying.class
})
public final class FencingAutoConfiguration {
  /** Created by Spring. */
  FencingAutoConfiguration() {}

  @Bean
  @ConditionalOnFencingSwitch("fencing.datasource.wrap")
  static FencingDataSourcePostProcessor fencingDataSourcePostProcessor(
      ObjectProvider<FencingProperties> properties, ObjectProvider<FencingMeters> meters) {
    return new FencingDataSourcePostProcessor(properties, meters);
  }

  @Bean
  static FencingTranslationPostProcessor fencingTranslationPostProcessor() {
    return new FencingTranslationPostProcessor();
  }

  @Bean
  FencingExceptionTranslation.Persistence fencingPersistenceExceptionTranslator() {
    return new FencingExceptionTranslation.Persistence();
  }

  @Bean
  @ConditionalOnBean(DataSource.class)
  FencingSchemaInitializer fencingSchemaInitializer(
      ListableBeanFactory beanFactory,
      FencingProperties properties,
      ObjectProvider<FencingDataSourcePostProcessor> wrapper,
      Environment environment) {
    FencingDataSourcePostProcessor postProcessor = wrapper.getIfAvailable();
    if (postProcessor != null) {
      postProcessor.requireFenced(); // before the application's Flyway or JPA writes
    }
    return new FencingSchemaInitializer(
        FenceDataSource.pool(beanFactory, properties, wrapper),
        properties,
        environment.getProperty("spring.application.name"));
  }

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  @ConditionalOnBean(DataSource.class)
  LeaseClient fencingLeaseClient(
      ListableBeanFactory beanFactory,
      FencingProperties properties,
      ObjectProvider<FencingDataSourcePostProcessor> wrapper) {
    FencingProperties.Lease lease = properties.lease();
    LeaseClient.Builder builder =
        LeaseClient.builder(FenceDataSource.pool(beanFactory, properties, wrapper))
            .schema(properties.schema())
            .handoverTimeout(lease.handoverTimeout())
            .keepAlive(lease.keepAlive())
            .renewFraction(lease.renewFraction());
    if (lease.holder() != null) {
      builder.holder(lease.holder());
    }
    return builder.build();
  }

  @Bean
  @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
  static HeldLeases fencingHeldLeases() {
    return new HeldLeases();
  }

  @Bean
  @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
  static LeaseAdvisor fencingLeaseAdvisor(
      ConfigurableListableBeanFactory beanFactory,
      ObjectProvider<LeaseClient> leases,
      ObjectProvider<FencingProperties> properties,
      HeldLeases held) {
    LeaseAttributeSource attributes = new LeaseAttributeSource(beanFactory);
    return new LeaseAdvisor(attributes, new LeaseInterceptor(attributes, leases, properties, held));
  }

  /**
   * Boot's task executors ({@code @Async}, {@code applicationTaskExecutor}) carry the submitting
   * thread's tokens into each task. Boot composes every {@code TaskDecorator} bean;
   * {@code @Fallback}: an injection point of one {@code TaskDecorator} gets the application's own.
   */
  @Bean
  @Fallback
  TaskDecorator fencingTaskDecorator() {
    return new FencingTaskDecorator();
  }

  /**
   * A {@code SimpleAsyncTaskScheduler} (Boot's {@code taskScheduler} with virtual threads)
   * decorates a task only when a run fires: Boot's builder makes a {@link FencedTaskScheduler}
   * instead, whose {@code schedule*} calls carry the caller's tokens.
   */
  @Bean
  @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
  static FencingSchedulerPostProcessor fencingSchedulerPostProcessor() {
    return new FencingSchedulerPostProcessor();
  }

  /** The pool under a data source fenced by this configuration (lease and migration SQL). */
  static DataSource pool(
      DataSource dataSource, ObjectProvider<FencingDataSourcePostProcessor> wrapper) {
    FencingDataSourcePostProcessor postProcessor = wrapper.getIfAvailable();
    return postProcessor == null ? dataSource : postProcessor.unfenced(dataSource);
  }

  /** The application's own Flyway migrates through the pool (its DDL carries no token). */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(FlywayConfigurationCustomizer.class)
  static final class ApplicationFlyway {
    @Bean
    FlywayConfigurationCustomizer fencingFlywayUsesThePool(
        ObjectProvider<FencingDataSourcePostProcessor> wrapper) {
      return configuration -> {
        DataSource dataSource = configuration.getDataSource();
        if (dataSource != null) {
          configuration.dataSource(pool(dataSource, wrapper));
        }
      };
    }
  }

  /** Makes sure an auto-proxy creator exists, so {@code @WithLease} works without Boot's AOP. */
  static final class AutoProxying implements ImportBeanDefinitionRegistrar {
    @Override
    public void registerBeanDefinitions(
        AnnotationMetadata importingClassMetadata, BeanDefinitionRegistry registry) {
      AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
    }
  }
}
