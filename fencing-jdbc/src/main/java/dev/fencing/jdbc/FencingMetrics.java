package dev.fencing.jdbc;

import org.jspecify.annotations.Nullable;

/**
 * Where the fence reports what it did: Micrometer when it is on the classpath, else nowhere. The
 * only place that knows Micrometer exists.
 */
interface FencingMetrics {
  FencingMetrics NONE =
      new FencingMetrics() {
        @Override
        public void checked(int resources, int advanced, long nanos) {}

        @Override
        public void refused(FencingRefusedException refusal) {}
      };

  /** A check of {@code resources} tokens passed, {@code advanced} of them moved max_seen. */
  void checked(int resources, int advanced, long nanos);

  /** A write was refused. */
  void refused(FencingRefusedException refusal);

  /**
   * Metrics into {@code registry} (a {@code io.micrometer.core.instrument.MeterRegistry}), or into
   * Micrometer's global registry when it is null and Micrometer is present; else none.
   */
  static FencingMetrics create(@Nullable Object registry) {
    if (registry == null && !micrometerPresent()) {
      return NONE;
    }
    return MicrometerFencingMetrics.create(registry);
  }

  private static boolean micrometerPresent() {
    try {
      Class.forName(
          "io.micrometer.core.instrument.MeterRegistry",
          false,
          FencingMetrics.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }
}
