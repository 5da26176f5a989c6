package dev.fencing.spring.boot.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;

/**
 * The registry the fenced data sources report to, a composite that every {@code MeterRegistry} of
 * the application joins when Boot binds this {@link MeterBinder} (so the data sources never wait
 * for the registries, and no global registry is involved). With {@code
 * fencing.metrics.enabled=false} it stays empty: the meters go nowhere.
 */
final class FencingMetricsSupplier implements MeterBinder, FencingMeters {
  private final CompositeMeterRegistry registry = new CompositeMeterRegistry();
  private final boolean enabled;

  FencingMetricsSupplier(boolean enabled) {
    this.enabled = enabled;
  }

  @Override
  public MeterRegistry registry() {
    return registry;
  }

  @Override
  public void bindTo(MeterRegistry meterRegistry) {
    if (enabled && meterRegistry != registry) {
      registry.add(meterRegistry);
    }
  }
}
