package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.jdbc.Lease;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.shedlock.FencedLockProvider;
import java.util.ArrayList;
import java.util.List;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.util.ClassUtils;

/**
 * Health contributor {@code fencing} (bean {@code fencingHealthIndicator}; {@code
 * management.health.fencing.enabled}): the fence's schema is valid, and the leases this instance
 * holds.
 */
@AutoConfiguration(after = {FencingAutoConfiguration.class, FencingShedLockAutoConfiguration.class})
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(FencingSchemaInitializer.class)
@ConditionalOnEnabledHealthIndicator("fencing")
public final class FencingHealthAutoConfiguration {
  private static final boolean SHEDLOCK =
      ClassUtils.isPresent(
              "net.javacrumbs.shedlock.core.LockProvider",
              FencingHealthAutoConfiguration.class.getClassLoader())
          && ClassUtils.isPresent(
              "dev.fencing.shedlock.FencedLockProvider",
              FencingHealthAutoConfiguration.class.getClassLoader());

  /** Created by Spring. */
  FencingHealthAutoConfiguration() {}

  @Bean
  @ConditionalOnMissingBean(name = "fencingHealthIndicator")
  FencingHealthIndicator fencingHealthIndicator(
      FencingProperties properties,
      ObjectProvider<FencingDataSourcePostProcessor> wrapper,
      HeldLeases held,
      ListableBeanFactory beanFactory) {
    FencingMigrations migrations =
        FencingMigrations.builder(FenceDataSource.pool(beanFactory, properties, wrapper))
            .schema(properties.schema())
            .applicationRole(properties.migrations().applicationRole())
            .ownerRole(properties.migrations().ownerRole())
            .build();
    return new FencingHealthIndicator(
        migrations,
        properties.schema(),
        () -> {
          List<Lease> leases = new ArrayList<>(held.snapshot());
          if (SHEDLOCK) {
            leases.addAll(ShedLockLeases.held(beanFactory));
          }
          return leases;
        });
  }

  /** Loaded only when ShedLock and fencing-shedlock are present. */
  private static final class ShedLockLeases {
    static List<Lease> held(ListableBeanFactory beanFactory) {
      List<Lease> leases = new ArrayList<>();
      beanFactory
          .getBeanProvider(FencedLockProvider.class)
          .forEach(p -> leases.addAll(p.heldLeases()));
      return leases;
    }
  }
}
