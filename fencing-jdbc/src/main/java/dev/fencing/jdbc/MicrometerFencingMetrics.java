package dev.fencing.jdbc;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/** Loaded only when Micrometer is on the classpath (it is an optional dependency). */
final class MicrometerFencingMetrics implements FencingMetrics {
  private final MeterRegistry registry;
  private final Counter checks;
  private final Counter advances;
  private final Timer latency;

  private MicrometerFencingMetrics(MeterRegistry registry) {
    this.registry = registry;
    this.checks =
        Counter.builder("fencing.checks")
            .description("Tokens checked by PostgreSQL (first write of a transaction)")
            .register(registry);
    this.advances =
        Counter.builder("fencing.advances")
            .description("Checks that moved a resource's max_seen forward")
            .register(registry);
    this.latency =
        Timer.builder("fencing.check.latency")
            .description("Time of one check round trip")
            .register(registry);
  }

  static FencingMetrics create(@Nullable Object registry) {
    if (registry == null) {
      return new MicrometerFencingMetrics(Metrics.globalRegistry);
    }
    if (!(registry instanceof MeterRegistry meterRegistry)) {
      throw new IllegalArgumentException(
          "meterRegistry must be an io.micrometer.core.instrument.MeterRegistry, was "
              + registry.getClass().getName());
    }
    return new MicrometerFencingMetrics(meterRegistry);
  }

  @Override
  public void checked(int resources, int advanced, long nanos) {
    checks.increment(resources);
    advances.increment(advanced);
    latency.record(nanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public void refused(FencingRefusedException refusal) {
    Counter.builder("fencing.refusals")
        .description("Writes refused by the fence, by reason")
        .tag("reason", refusal.getClass().getSimpleName())
        .register(registry)
        .increment();
  }
}
