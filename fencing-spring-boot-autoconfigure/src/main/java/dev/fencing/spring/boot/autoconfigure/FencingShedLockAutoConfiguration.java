package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.jdbc.LeaseClient;
import dev.fencing.shedlock.FencedLockProvider;
import net.javacrumbs.shedlock.core.LockProvider;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * A ShedLock {@code LockProvider} backed by fencing leases ({@link FencedLockProvider}), when
 * ShedLock is on the classpath and the application defines no {@code LockProvider} of its own
 * ({@code fencing.shedlock.enabled}, {@code fencing.shedlock.resource-prefix}). Its leases are not
 * kept alive: {@code lockAtMostFor} is their limit, as ShedLock defines it. A job whose ShedLock
 * advice runs inside a transaction keeps its token bound until that transaction completed ({@link
 * DeferredRelease}), so the commit is fenced.
 */
@AutoConfiguration(after = FencingAutoConfiguration.class)
@ConditionalOnClass({LockProvider.class, FencedLockProvider.class})
@ConditionalOnBean(FencingSchemaInitializer.class)
@ConditionalOnFencingSwitch("fencing.shedlock.enabled")
public final class FencingShedLockAutoConfiguration {
  /** Created by Spring. */
  FencingShedLockAutoConfiguration() {}

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean(LockProvider.class)
  FencedLockProvider fencingLockProvider(
      ListableBeanFactory beanFactory,
      FencingProperties properties,
      ObjectProvider<FencingDataSourcePostProcessor> wrapper,
      ObjectProvider<LeaseClient> leases) {
    FencingProperties.Lease lease = properties.lease();
    LeaseClient.Builder builder =
        LeaseClient.builder(FenceDataSource.pool(beanFactory, properties, wrapper))
            .schema(properties.schema())
            .handoverTimeout(lease.handoverTimeout())
            .keepAlive(false);
    LeaseClient shared = leases.getIfAvailable();
    if (lease.holder() != null) {
      builder.holder(lease.holder());
    } else if (shared != null) {
      builder.holder(shared.holder()); // one holder name per instance
    }
    return FencedLockProvider.builder(builder.build())
        .resourcePrefix(properties.shedlock().resourcePrefix())
        .deferUnlock(DeferredRelease::deferUnlock)
        .build();
  }
}
