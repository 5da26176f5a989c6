package dev.fencing.benchmark.report;

import org.jspecify.annotations.Nullable;

/**
 * One derived quantity with an absolute target, e.g. the multixacts a same-token load consumes per
 * 1,000 fenced transactions, or what the per-row trigger adds per row.
 *
 * @param id its stable key, {@code <section id>/<slug>} (see {@link Ids}), e.g. {@code
 *     "growth-multixact/multixacts-per-1000"}
 * @param name what it is, in words
 * @param unit e.g. {@code "µs per row"}
 * @param value the measured value (for a per-round measurement, the median of the rounds)
 * @param target the value the issue asks for (at least it when higher is better, at most it
 *     otherwise), or null
 * @param higherIsBetter whether a larger value is better
 */
public record Figure(
    String id,
    String name,
    String unit,
    double value,
    @Nullable Double target,
    boolean higherIsBetter) {

  /** Whether the value meets the target; null when there is none or the value is not a number. */
  public @Nullable Boolean meets() {
    if (target == null || !Double.isFinite(value)) {
      return null;
    }
    return higherIsBetter ? value >= target : value <= target;
  }
}
