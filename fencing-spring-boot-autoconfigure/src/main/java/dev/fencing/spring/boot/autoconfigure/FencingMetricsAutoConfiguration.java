package dev.fencing.spring.boot.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;

/**
 * The fence's meters ({@code fencing.checks}, {@code fencing.advances}, {@code fencing.refusals},
 * {@code fencing.check.latency}) in the application's Micrometer registries, bound the Boot way (a
 * {@code MeterBinder} bean); {@code fencing.metrics.enabled=false} keeps them out.
 */
@AutoConfiguration(after = FencingAutoConfiguration.class)
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean(FencingDataSourcePostProcessor.class)
public final class FencingMetricsAutoConfiguration {
  /** Created by Spring. */
  FencingMetricsAutoConfiguration() {}

  @Bean
  FencingMetricsSupplier fencingMetrics(FencingProperties properties) {
    return new FencingMetricsSupplier(properties.metrics().enabled());
  }
}
