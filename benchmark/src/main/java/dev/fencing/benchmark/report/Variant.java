package dev.fencing.benchmark.report;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One variant of a workload, measured in rounds interleaved with its baseline.
 *
 * <p>{@code samples.get(i)} was measured in the same round as the baseline's {@code
 * samples.get(i)}, so the ratio of round {@code i} is {@code samples[i] / baseline.samples[i]} and
 * the reported ratio is the median of those per-round ratios; the spread is their minimum and
 * maximum. A variant measured in slices adjacent to its baseline's (paired) carries the baseline's
 * throughput in those very slices as {@code baselineSamples}, and its ratio of round {@code i} is
 * {@code samples[i] / baselineSamples[i]}. For a unit where lower is better (a latency) the ratio
 * is still variant over baseline, and {@code higherIsBetter} says how to read it.
 *
 * @param id the variant's stable key, {@code <section id>/<slug>}, e.g. {@code "tpcb/fenced-1000"}
 *     (see {@link Ids}); what scripts and issues refer to, while the name may be reworded
 * @param name the variant's name, e.g. {@code "fenced, 1000 resources"}
 * @param unit the unit of the samples, e.g. {@code "tx/s"}
 * @param samples one value per round
 * @param baseline the name of the variant in the same section this one is compared with, or null
 *     for a baseline itself
 * @param higherIsBetter whether a larger sample is better
 * @param target the ratio the issue asks for (at least it when higher is better, at most it
 *     otherwise), or null
 * @param baselineSamples the baseline measured next to this variant, one value per round (as many
 *     as {@code samples}), or empty: then the baseline's own {@code samples} are the reference
 */
public record Variant(
    String id,
    String name,
    String unit,
    List<Double> samples,
    @Nullable String baseline,
    boolean higherIsBetter,
    @Nullable Double target,
    List<Double> baselineSamples) {

  public Variant {
    samples = List.copyOf(samples);
    baselineSamples = List.copyOf(baselineSamples);
  }

  /** A variant compared with its baseline's own samples, round by round (not paired). */
  public Variant(
      String id,
      String name,
      String unit,
      List<Double> samples,
      @Nullable String baseline,
      boolean higherIsBetter,
      @Nullable Double target) {
    this(id, name, unit, samples, baseline, higherIsBetter, target, List.of());
  }
}
