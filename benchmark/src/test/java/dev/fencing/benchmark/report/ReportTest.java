package dev.fencing.benchmark.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.awt.Color;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The report renders all four record types; no database needed. */
class ReportTest {
  @TempDir Path out;

  private static final Environment ENVIRONMENT =
      new Environment(
          "2026-11-30T00:00:00Z",
          "test",
          "none",
          2,
          "Linux",
          "OpenJDK 17",
          "embedded",
          "PostgreSQL 15.0",
          Map.of("fsync", "on", "synchronous_commit", "on"));

  private static final Section THROUGHPUT =
      new Section(
          "tpcb",
          "TPC-B-like",
          "two rounds",
          List.of(
              new Variant(
                  "tpcb/unfenced", "unfenced", "tx/s", List.of(100.0, 200.0), null, true, null),
              new Variant(
                  "tpcb/fenced-1000",
                  "fenced",
                  "tx/s",
                  List.of(90.0, 200.0),
                  "unfenced",
                  true,
                  0.95)),
          List.of(),
          List.of(),
          List.of("a finding"));

  private static final Section LEASES =
      new Section(
          "lease",
          "Lease operations",
          "one client",
          List.of(),
          List.of(
              new Distribution(
                  "lease/acquire-release-p50",
                  "acquire+release",
                  "ms",
                  1000,
                  0.8,
                  1.1,
                  2.5,
                  9.0,
                  1.0),
              new Distribution(
                  "lease/zookeeper",
                  "ZooKeeper acquire+release",
                  "ms",
                  1000,
                  1.7,
                  2.0,
                  3.0,
                  12.0,
                  null)),
          List.of(
              new Figure(
                  "lease/multixacts-per-1000",
                  "multixacts per 1,000",
                  "per 1,000 tx",
                  12.5,
                  10.0,
                  false)),
          List.of(
              new Series(
                  "check cost by resource count",
                  "resources",
                  "µs per check",
                  List.of(
                      new Series.Point(1, 40),
                      new Series.Point(1000, 41),
                      new Series.Point(1_000_000, 43)))),
          List.of());

  @Test
  void writesJsonMarkdownAndPngWithEveryRecordType() throws Exception {
    List<Path> files = new Report(ENVIRONMENT, List.of(THROUGHPUT, LEASES)).write(out);

    assertThat(files)
        .containsExactly(
            out.resolve(Report.JSON), out.resolve(Report.MARKDOWN), out.resolve(Report.CHART));
    JsonNode json = new ObjectMapper().readTree(out.resolve(Report.JSON).toFile());
    JsonNode fenced = json.path("sections").get(0).path("variants").get(1);
    assertThat(fenced.path("ratio").asDouble()).isEqualTo(0.95); // median of 0.9 and 1.0
    assertThat(fenced.path("ratioMin").asDouble()).isEqualTo(0.9);
    assertThat(fenced.path("ratioMax").asDouble()).isEqualTo(1.0);
    assertThat(fenced.path("targetMet").asBoolean()).isTrue();
    assertThat(fenced.path("samples")).hasSize(2);
    assertThat(fenced.path("id").asText()).isEqualTo("tpcb/fenced-1000");
    assertThat(fenced.path("baselineId").asText()).isEqualTo("tpcb/unfenced");
    assertThat(json.path("sections").get(0).path("id").asText()).isEqualTo("tpcb");
    assertThat(json.path("sections").get(0).path("variants").get(0).has("ratio")).isFalse();
    JsonNode leases = json.path("sections").get(1);
    assertThat(leases.path("distributions").get(0).path("p99").asDouble()).isEqualTo(2.5);
    assertThat(leases.path("distributions").get(0).path("id").asText())
        .isEqualTo("lease/acquire-release-p50");
    assertThat(leases.path("distributions").get(0).path("targetMet").asBoolean()).isTrue();
    JsonNode figure = leases.path("figures").get(0);
    assertThat(figure.path("id").asText()).isEqualTo("lease/multixacts-per-1000");
    assertThat(figure.path("value").asDouble()).isEqualTo(12.5);
    assertThat(figure.path("target").asDouble()).isEqualTo(10.0);
    assertThat(figure.path("targetMet").asBoolean()).isFalse();
    assertThat(leases.path("series").get(0).path("points")).hasSize(3);
    assertThat(json.path("environment").path("settings").path("fsync").asText()).isEqualTo("on");

    String markdown = Files.readString(out.resolve(Report.MARKDOWN));
    assertThat(markdown)
        .contains("## TPC-B-like (`tpcb`)")
        .contains(
            "| `tpcb/fenced-1000` | fenced | 145 tx/s | 0.950 (0.900–1.000) vs unfenced | ≥ 0.95 |"
                + " yes |")
        .contains(
            "| `lease/acquire-release-p50` | acquire+release | 1000 | 0.800 ms | 1.10 | 2.50 | 9 |"
                + " ≤ 1 | yes |")
        .contains("| `lease/zookeeper` | ZooKeeper acquire+release | 1000 | 1.70 ms |")
        .contains(
            "| `lease/multixacts-per-1000` | multixacts per 1,000 | 12.50 per 1,000 tx | ≤ 10.00 |"
                + " **NO** |")
        // every target in one table at the top
        .contains("| `tpcb/fenced-1000` | 0.950 × `tpcb/unfenced` | ≥ 0.95 | yes |")
        .contains("| `lease/acquire-release-p50` | p50 0.800 ms | ≤ 1.00 ms | yes |")
        .contains("| `lease/multixacts-per-1000` | 12.50 per 1,000 tx | ≤ 10.00 | **NO** |")
        .contains("| 1000000 | 43 |")
        .contains("- a finding");

    BufferedImage chart = ImageIO.read(out.resolve(Report.CHART).toFile());
    assertThat(chart).isNotNull();
    assertThat(chart.getHeight()).isGreaterThan(400);
  }

  @Test
  void aVariantWhoseBaselineIsMissingIsRefused() {
    Section broken =
        new Section(
            "x",
            "x",
            "x",
            List.of(new Variant("x/fenced", "fenced", "tx/s", List.of(1.0), "nowhere", true, null)),
            List.of(),
            List.of(),
            List.of());

    assertThatThrownBy(() -> new Report(ENVIRONMENT, List.of(broken)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("baseline \"nowhere\"");
  }

  /**
   * A paired variant's ratio of each round is against the baseline measured next to it ({@code
   * baselineSamples}), not the baseline's own per-round figure; both are in the JSON.
   */
  @Test
  void aPairedVariantIsComparedWithTheBaselineMeasuredNextToIt() throws Exception {
    Section paired =
        new Section(
            "update",
            "single-row UPDATE",
            "pairs",
            List.of(
                new Variant(
                    "update/unfenced", "unfenced", "tx/s", List.of(100.0, 100.0), null, true, null),
                new Variant(
                    "update/fenced-1000",
                    "fenced",
                    "tx/s",
                    List.of(80.0, 45.0),
                    "unfenced",
                    true,
                    0.85,
                    List.of(100.0, 50.0))),
            List.of(),
            List.of(),
            List.of());

    new Report(ENVIRONMENT, List.of(paired)).write(out);

    JsonNode fenced =
        new ObjectMapper()
            .readTree(out.resolve(Report.JSON).toFile())
            .path("sections")
            .get(0)
            .path("variants")
            .get(1);
    assertThat(fenced.path("ratios").get(0).asDouble()).isCloseTo(0.8, within(1e-9));
    assertThat(fenced.path("ratios").get(1).asDouble()).isCloseTo(0.9, within(1e-9));
    assertThat(fenced.path("ratio").asDouble()).isCloseTo(0.85, within(1e-9));
    assertThat(fenced.path("targetMet").asBoolean()).isTrue();
    assertThat(fenced.path("baselineSamples")).hasSize(2);
    assertThat(fenced.path("baselineSamples").get(1).asDouble()).isEqualTo(50.0);
    assertThat(
            new ObjectMapper()
                .readTree(out.resolve(Report.JSON).toFile())
                .path("sections")
                .get(0)
                .path("variants")
                .get(0)
                .has("baselineSamples"))
        .isFalse();
  }

  @Test
  void pairedBaselineSamplesMustBeOnePerRound() {
    Section broken =
        new Section(
            "x",
            "x",
            "x",
            List.of(
                new Variant("x/unfenced", "unfenced", "tx/s", List.of(1.0, 1.0), null, true, null),
                new Variant(
                    "x/fenced",
                    "fenced",
                    "tx/s",
                    List.of(1.0, 1.0),
                    "unfenced",
                    true,
                    null,
                    List.of(1.0))),
            List.of(),
            List.of(),
            List.of());

    assertThatThrownBy(() -> new Report(ENVIRONMENT, List.of(broken)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("1 samples of its baseline measured next to it");
  }

  /** Ids: one slug per section, {@code <section>/<slug>} for its items, none used twice. */
  @Test
  void malformedMisplacedOrRepeatedIdsAreRefusedNamingTheItem() {
    assertThatThrownBy(() -> new Report(ENVIRONMENT, List.of(withVariantId("tpcb", "tpcb/Fenced"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("variant \"fenced\" of section tpcb has id \"tpcb/Fenced\"");
    assertThatThrownBy(
            () -> new Report(ENVIRONMENT, List.of(withVariantId("tpcb", "update/fenced-1000"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("expected \"tpcb/<slug>\"");
    assertThatThrownBy(() -> new Report(ENVIRONMENT, List.of(withVariantId("tpcb", "tpcb/"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("has id \"tpcb/\"");
    assertThatThrownBy(() -> new Report(ENVIRONMENT, List.of(withVariantId("tpcb", "tpcb/a--b"))))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(
            () -> new Report(ENVIRONMENT, List.of(withVariantId("TPC-B", "TPC-B/fenced"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("has id \"TPC-B\", not a slug");
    assertThatThrownBy(
            () ->
                new Report(
                    ENVIRONMENT,
                    List.of(withVariantId("tpcb", "tpcb/x"), withVariantId("tpcb", "tpcb/y"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("id \"tpcb\" is used twice");
    Section twice =
        new Section(
            "tpcb",
            "t",
            "m",
            List.of(
                new Variant("tpcb/a", "a", "tx/s", List.of(1.0), null, true, null),
                new Variant("tpcb/a", "b", "tx/s", List.of(1.0), "a", true, null)),
            List.of(),
            List.of(),
            List.of());
    assertThatThrownBy(() -> new Report(ENVIRONMENT, List.of(twice)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("id \"tpcb/a\" is used twice: by variant \"a\" and by variant \"b\"");
    assertThat(new Report(ENVIRONMENT, List.of(withVariantId("read-only", "read-only/bound-1000"))))
        .isNotNull();
  }

  private static Section withVariantId(String section, String id) {
    return new Section(
        section,
        "t",
        "m",
        List.of(new Variant(id, "fenced", "tx/s", List.of(1.0), null, true, null)),
        List.of(),
        List.of(),
        List.of());
  }

  /**
   * Figures are drawn as bars against their targets: one bar per figure (on a scale of its own),
   * the target a red tick where it falls against the bar; a figure without a target has no tick.
   */
  @Test
  void theChartDrawsEachFigureAsABarAgainstItsTarget() throws Exception {
    Section figures =
        new Section(
            "growth-row-triggers",
            "Row triggers",
            "one round",
            List.of(),
            List.of(),
            List.of(
                new Figure(
                    "growth-row-triggers/row-trigger-us",
                    "per row",
                    "µs per row",
                    12.5,
                    10.0,
                    false),
                new Figure("growth-row-triggers/headroom", "headroom", "x", 3.0, 4.0, true),
                new Figure(
                    "growth-row-triggers/untargeted", "untargeted", "µs", 40.0, null, false)),
            List.of(),
            List.of());

    new Report(ENVIRONMENT, List.of(figures)).write(out);

    BufferedImage chart = ImageIO.read(out.resolve(Report.CHART).toFile());
    List<int[]> bars = bands(chart, Chart.BAR);
    assertThat(bars).as("one bar per figure").hasSize(3);
    // the target's place on the bar: 10 of 12.5 (missed, at most 10), 4 of 3 (missed, at least 4)
    assertThat(targetAlongBar(chart, bars.get(0))).isCloseTo(10.0 / 12.5, within(0.02));
    assertThat(targetAlongBar(chart, bars.get(1))).isCloseTo(4.0 / 3.0, within(0.02));
    assertThat(targetX(chart, bars.get(2))).as("no target, no tick").isEqualTo(-1);
  }

  /** The runs of image rows holding {@code color}: {first row, last row}. */
  private static List<int[]> bands(BufferedImage image, Color color) {
    List<int[]> bands = new ArrayList<>();
    int start = -1;
    for (int y = 0; y <= image.getHeight(); y++) {
      boolean has = y < image.getHeight() && firstX(image, y, color) >= 0;
      if (has && start < 0) {
        start = y;
      } else if (!has && start >= 0) {
        bands.add(new int[] {start, y - 1});
        start = -1;
      }
    }
    return bands;
  }

  /** Where the target tick stands along the bar of {@code band}: 1.0 at the bar's end. */
  private static double targetAlongBar(BufferedImage image, int[] band) {
    int y = (band[0] + band[1]) / 2;
    int barStart = firstX(image, y, Chart.BAR);
    int barEnd = barStart; // the last of the bar's colour: the tick may stand inside the bar
    for (int x = barStart; x < image.getWidth(); x++) {
      if (near(image.getRGB(x, y), Chart.BAR)) {
        barEnd = x;
      }
    }
    int tick = targetX(image, band);
    assertThat(tick).as("a target tick on the bar's row").isPositive();
    return (double) (tick - barStart) / (barEnd + 1 - barStart);
  }

  /** The middle of the target tick in {@code band}, or -1. */
  private static int targetX(BufferedImage image, int[] band) {
    int y = (band[0] + band[1]) / 2;
    int first = firstX(image, y, Chart.TARGET);
    if (first < 0) {
      return -1;
    }
    int last = first;
    while (last + 1 < image.getWidth() && near(image.getRGB(last + 1, y), Chart.TARGET)) {
      last++;
    }
    return (first + last) / 2;
  }

  private static int firstX(BufferedImage image, int y, Color color) {
    for (int x = 0; x < image.getWidth(); x++) {
      if (near(image.getRGB(x, y), color)) {
        return x;
      }
    }
    return -1;
  }

  private static boolean near(int rgb, Color color) {
    Color c = new Color(rgb);
    return Math.abs(c.getRed() - color.getRed()) < 8
        && Math.abs(c.getGreen() - color.getGreen()) < 8
        && Math.abs(c.getBlue() - color.getBlue()) < 8;
  }
}
