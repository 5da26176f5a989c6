package dev.fencing.benchmark.report;

import java.util.List;

/**
 * One part of the benchmark report: a title, what was measured and how, and its results. Every
 * measurement class returns one or more sections; {@code Report} writes them to JSON, Markdown and
 * PNG.
 *
 * @param id a short, stable key (one slug, see {@link Ids}), e.g. {@code "tpcb"}; the ids of the
 *     section's variants, distributions and figures start with it
 * @param title the heading in the Markdown report
 * @param method how it was measured (clients, rounds, durations, interleaving), one paragraph
 * @param variants throughput-like results compared with a baseline measured in the same rounds
 * @param distributions latency percentiles
 * @param figures derived quantities with absolute targets
 * @param series curves (x against y), for growth measurements
 * @param findings plain sentences: targets missed and why, where the time goes, caveats
 */
public record Section(
    String id,
    String title,
    String method,
    List<Variant> variants,
    List<Distribution> distributions,
    List<Figure> figures,
    List<Series> series,
    List<String> findings) {

  public Section {
    variants = List.copyOf(variants);
    distributions = List.copyOf(distributions);
    figures = List.copyOf(figures);
    series = List.copyOf(series);
    findings = List.copyOf(findings);
  }

  /** A section without figures. */
  public Section(
      String id,
      String title,
      String method,
      List<Variant> variants,
      List<Distribution> distributions,
      List<Series> series,
      List<String> findings) {
    this(id, title, method, variants, distributions, List.of(), series, findings);
  }
}
