package dev.fencing.benchmark.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
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
              new Variant("unfenced", "tx/s", List.of(100.0, 200.0), null, true, null),
              new Variant("fenced", "tx/s", List.of(90.0, 200.0), "unfenced", true, 0.95)),
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
              new Distribution("acquire+release", "ms", 1000, 0.8, 1.1, 2.5, 9.0, 1.0),
              new Distribution("ZooKeeper acquire+release", "ms", 1000, 1.7, 2.0, 3.0, 12.0, null)),
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
    assertThat(json.path("sections").get(0).path("variants").get(0).has("ratio")).isFalse();
    JsonNode leases = json.path("sections").get(1);
    assertThat(leases.path("distributions").get(0).path("p99").asDouble()).isEqualTo(2.5);
    assertThat(leases.path("series").get(0).path("points")).hasSize(3);
    assertThat(json.path("environment").path("settings").path("fsync").asText()).isEqualTo("on");

    String markdown = Files.readString(out.resolve(Report.MARKDOWN));
    assertThat(markdown)
        .contains("| fenced | 145 tx/s | 0.950 (0.900–1.000) vs unfenced | ≥ 0.95 | yes |")
        .contains("| acquire+release | 1000 | 0.800 ms | 1.10 | 2.50 | 9 | ≤ 1 | yes |")
        .contains("| ZooKeeper acquire+release | 1000 | 1.70 ms |")
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
            List.of(new Variant("fenced", "tx/s", List.of(1.0), "nowhere", true, null)),
            List.of(),
            List.of(),
            List.of());

    assertThatThrownBy(() -> new Report(ENVIRONMENT, List.of(broken)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("baseline \"nowhere\"");
  }
}
