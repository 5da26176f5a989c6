package dev.fencing.benchmark;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.benchmark.report.Distribution;
import dev.fencing.benchmark.report.Section;
import dev.fencing.benchmark.report.Series;
import dev.fencing.benchmark.report.Variant;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/** Structural checks of measurement results: what a report writer relies on, no timings. */
public final class SectionAssertions {
  private SectionAssertions() {}

  /** The sections by id, after checking that every one is well-formed. */
  public static Map<String, Section> wellFormed(List<Section> sections) {
    for (Section s : sections) {
      assertThat(s.title()).as(s.id()).isNotBlank();
      assertThat(s.method()).as(s.id()).isNotBlank();
      assertThat(s.findings()).as(s.id()).isNotEmpty().allSatisfy(f -> assertThat(f).isNotBlank());
      Map<String, Variant> byName =
          s.variants().stream().collect(Collectors.toMap(Variant::name, Function.identity()));
      assertThat(byName).as("variant names of %s are distinct", s.id()).hasSameSizeAs(s.variants());
      for (Variant v : s.variants()) {
        assertThat(v.samples())
            .as(v.name())
            .isNotEmpty()
            .allSatisfy(x -> assertThat(x).isPositive());
        if (v.baseline() != null) {
          Variant base = byName.get(v.baseline());
          assertThat(base).as("baseline of %s", v.name()).isNotNull();
          assertThat(base.samples()).as("rounds of %s", v.name()).hasSameSizeAs(v.samples());
          assertThat(base.unit()).isEqualTo(v.unit());
          if (!v.baselineSamples().isEmpty()) {
            assertThat(v.baselineSamples())
                .as("paired rounds of %s", v.name())
                .hasSameSizeAs(v.samples());
          }
        }
      }
      for (Distribution d : s.distributions()) {
        assertThat(d.count()).as(d.name()).isPositive();
        assertThat(d.p50()).as(d.name()).isPositive().isLessThanOrEqualTo(d.p90());
        assertThat(d.p90()).as(d.name()).isLessThanOrEqualTo(d.p99());
        assertThat(d.p99()).as(d.name()).isLessThanOrEqualTo(d.max());
      }
      for (Series series : s.series()) {
        assertThat(series.points()).as(series.name()).isNotEmpty();
        assertThat(series.points().stream().mapToDouble(Series.Point::x).toArray())
            .as("%s in x order", series.name())
            .isSorted();
      }
    }
    Map<String, Section> byId =
        sections.stream().collect(Collectors.toMap(Section::id, Function.identity()));
    assertThat(byId).as("section ids are distinct").hasSameSizeAs(sections);
    return byId;
  }

  /** The x values of a series. */
  public static List<Double> xs(Series series) {
    return series.points().stream().map(Series.Point::x).toList();
  }
}
