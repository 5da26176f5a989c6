package dev.fencing.benchmark.measure;

import dev.fencing.benchmark.report.Distribution;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** Percentiles and medians of measured values. */
public final class Samples {
  private Samples() {}

  /**
   * Latency percentiles (nearest rank) of {@code nanos}, in milliseconds.
   *
   * @throws IllegalArgumentException if there are no samples
   */
  public static Distribution millis(
      String id, String name, long[] nanos, @Nullable Double targetP50) {
    if (nanos.length == 0) {
      throw new IllegalArgumentException("no samples for " + name);
    }
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
    return new Distribution(
        id,
        name,
        "ms",
        sorted.length,
        percentile(sorted, 50) / 1e6,
        percentile(sorted, 90) / 1e6,
        percentile(sorted, 99) / 1e6,
        sorted[sorted.length - 1] / 1e6,
        targetP50);
  }

  /** The nearest-rank percentile {@code p} (0 to 100) of sorted values. */
  static long percentile(long[] sorted, double p) {
    int rank = (int) Math.ceil(p / 100 * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
  }

  /** The median of {@code values} (mean of the middle two for an even count). */
  public static double median(List<Double> values) {
    if (values.isEmpty()) {
      throw new IllegalArgumentException("no values");
    }
    double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    int mid = sorted.length / 2;
    return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  }

  /** The median of the per-round ratios {@code variant[i] / baseline[i]}. */
  public static double medianRatio(List<Double> variant, List<Double> baseline) {
    if (variant.size() != baseline.size()) {
      throw new IllegalArgumentException("rounds differ: " + variant + " vs " + baseline);
    }
    List<Double> ratios =
        java.util.stream.IntStream.range(0, variant.size())
            .mapToObj(i -> variant.get(i) / baseline.get(i))
            .toList();
    return median(ratios);
  }
}
