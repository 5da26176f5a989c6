package dev.fencing.benchmark;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fencing.benchmark.report.Report;
import dev.fencing.benchmark.throughput.Plan;
import dev.fencing.benchmark.throughput.ThroughputBenchmark;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.testing.TestDatabaseExtension;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The report written after the founding race, with a tiny plan (its figures mean nothing). */
class BenchmarkReportTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  @TempDir Path out;

  /** Every variant runs (tiny plan: figures mean nothing); the three files are complete. */
  @Test
  void theBenchmarkWritesJsonMarkdownAndChart() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    Main.Options options =
        new Main.Options(
            "tiny",
            List.of((database, quick) -> ThroughputBenchmark.run(database, Plan.tiny())),
            true,
            out,
            "test database");
    int status =
        Main.run(
            db.dataSource(),
            fence(),
            new PrintStream(bytes, true, StandardCharsets.UTF_8),
            options);
    String console = bytes.toString(StandardCharsets.UTF_8);

    assertThat(status).as(console).isZero();
    assertThat(console)
        .contains("The fence held.")
        .contains("| variant | median | ratio to baseline")
        .contains(out.resolve(Report.JSON).toAbsolutePath().normalize().toString());

    JsonNode json = new ObjectMapper().readTree(out.resolve(Report.JSON).toFile());
    assertThat(json.path("environment").path("postgres").asText()).startsWith("PostgreSQL");
    assertThat(json.path("environment").path("settings").path("synchronous_commit").asText())
        .isNotEmpty();
    List<String> ids = new ArrayList<>();
    List<String> compared = new ArrayList<>();
    for (JsonNode section : json.path("sections")) {
      ids.add(section.path("id").asText());
      for (JsonNode variant : section.path("variants")) {
        assertThat(variant.path("samples")).hasSize(Plan.tiny().rounds());
        for (JsonNode sample : variant.path("samples")) {
          assertThat(sample.asDouble()).as(variant.toString()).isPositive();
        }
        if (!variant.path("baseline").isNull()) {
          compared.add(variant.path("name").asText());
          assertThat(variant.path("ratio").isNumber()).as(variant.toString()).isTrue();
          assertThat(variant.path("ratioMin").asDouble())
              .isLessThanOrEqualTo(variant.path("ratio").asDouble());
          assertThat(variant.path("ratioMax").asDouble())
              .isGreaterThanOrEqualTo(variant.path("ratio").asDouble());
          assertThat(variant.path("ratios")).hasSize(Plan.tiny().rounds());
        }
      }
    }
    assertThat(ids).containsExactly("tpcb", "update", "hibernate");
    assertThat(compared)
        .contains(
            "fenced, 10 resources",
            "fenced, one hot resource (leader)",
            "protected tables (row triggers), fenced, 10 resources",
            "lock row FOR UPDATE, per branch",
            "Hibernate, @Fenced, 10 resources",
            "Hibernate, @Version optimistic locking");

    String markdown = Files.readString(out.resolve(Report.MARKDOWN));
    assertThat(markdown)
        .contains("## TPC-B-like transaction (pgbench), JDBC")
        .contains("| synchronous_commit |")
        .contains("Hibernate, @Fenced, 10 resources");

    BufferedImage chart = ImageIO.read(out.resolve(Report.CHART).toFile());
    assertThat(chart).isNotNull();
    assertThat(chart.getWidth()).isGreaterThan(500);
    assertThat(chart.getHeight()).isGreaterThan(300);

    // the benchmark cleans up: no tables, no protection, no leases left behind
    try (var c = db.dataSource().getConnection();
        var s = c.createStatement();
        var rs =
            s.executeQuery(
                "SELECT (SELECT count(*) FROM pg_namespace WHERE nspname = 'fencing_benchmark'),"
                    + " (SELECT count(*) FROM fencing.protected_table),"
                    + " (SELECT count(*) FROM fencing.status('branch:1') WHERE lease_valid)")) {
      rs.next();
      assertThat(rs.getInt(1)).isZero();
      assertThat(rs.getInt(2)).isZero();
      assertThat(rs.getInt(3)).isZero();
    }
  }

  private static FencingMigrations fence() {
    return FencingMigrations.builder(db.migrationDataSource())
        .ownerRole(db.ownerRole())
        .applicationRole(db.appRole())
        .build();
  }
}
