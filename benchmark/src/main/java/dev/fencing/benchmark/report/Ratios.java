package dev.fencing.benchmark.report;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * A variant's per-round ratios to its baseline: the median is the reported ratio. The reference of
 * round {@code i} is the baseline measured next to the variant ({@link Variant#baselineSamples()})
 * when the variant carries it, else the baseline's own sample of that round.
 */
public record Ratios(List<Double> perRound, double median, double min, double max) {

  public Ratios {
    perRound = List.copyOf(perRound);
  }

  /**
   * The ratios of {@code variant} to its baseline in {@code section}, round by round; empty for a
   * baseline itself.
   *
   * @throws IllegalArgumentException if the baseline is missing or has another number of rounds, or
   *     the variant's paired baseline samples are not one per round
   */
  public static Optional<Ratios> of(Section section, Variant variant) {
    String baselineName = variant.baseline();
    if (baselineName == null) {
      return Optional.empty();
    }
    Variant baseline =
        section.variants().stream()
            .filter(v -> v.name().equals(baselineName))
            .findFirst()
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        "variant \""
                            + variant.name()
                            + "\" names baseline \""
                            + baselineName
                            + "\", which section "
                            + section.id()
                            + " does not have"));
    if (baseline.samples().size() != variant.samples().size() || variant.samples().isEmpty()) {
      throw new IllegalArgumentException(
          "variant \""
              + variant.name()
              + "\" has "
              + variant.samples().size()
              + " rounds, its baseline "
              + baseline.samples().size());
    }
    List<Double> reference =
        variant.baselineSamples().isEmpty() ? baseline.samples() : variant.baselineSamples();
    if (reference.size() != variant.samples().size()) {
      throw new IllegalArgumentException(
          "variant \""
              + variant.name()
              + "\" has "
              + variant.samples().size()
              + " rounds, but "
              + reference.size()
              + " samples of its baseline measured next to it");
    }
    List<Double> ratios = new ArrayList<>();
    for (int i = 0; i < variant.samples().size(); i++) {
      ratios.add(variant.samples().get(i) / reference.get(i));
    }
    double[] sorted = ratios.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    return Optional.of(new Ratios(ratios, median(sorted), sorted[0], sorted[sorted.length - 1]));
  }

  /** The median of {@code values} (the mean of the middle two for an even count). */
  public static double median(List<Double> values) {
    return median(values.stream().mapToDouble(Double::doubleValue).sorted().toArray());
  }

  private static double median(double[] sorted) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    int mid = sorted.length / 2;
    return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  }

  /** Whether the median meets {@code variant}'s target; empty when it has none. */
  public Optional<Boolean> meets(Variant variant) {
    Double target = variant.target();
    if (target == null) {
      return Optional.empty();
    }
    return Optional.of(variant.higherIsBetter() ? median >= target : median <= target);
  }

  @Override
  public String toString() {
    return Arrays.toString(perRound.toArray());
  }
}
