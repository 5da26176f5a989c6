package dev.fencing.benchmark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fencing.benchmark.growth.GrowthBenchmark;
import dev.fencing.benchmark.lease.LeaseBenchmark;
import dev.fencing.benchmark.measure.Scale;
import dev.fencing.benchmark.report.Report;
import dev.fencing.benchmark.throughput.Plan;
import dev.fencing.benchmark.throughput.ThroughputBenchmark;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.testing.TestDatabaseExtension;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The report written after the founding race, with a tiny plan (its figures mean nothing). */
class BenchmarkReportTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  /**
   * The ids the issues' targets name, with the targets: renaming an id or changing a target is a
   * visible change here. Issue 13: the first four; issue 14: the rest.
   */
  static final Map<String, String> TARGETS =
      new LinkedHashMap<>(
          Map.ofEntries(
              Map.entry("update/fenced-1000", ">= 0.85"),
              Map.entry("tpcb/fenced-1000", ">= 0.95"),
              Map.entry("hibernate/fenced", ">= 0.95"),
              Map.entry("read-only/bound-1000", ">= 0.95"),
              Map.entry("tpcb/fenced-hot", ">= 0.93"),
              Map.entry("tpcb/protected-row", ">= 0.9"),
              Map.entry("tpcb/protected-statement", ">= 0.97"),
              Map.entry("tpcb/check-vs-floor-1000", ">= 0.97"),
              Map.entry("tpcb/check-vs-floor-hot", ">= 0.97"),
              Map.entry("growth-row-triggers/row-trigger-us", "<= 3.0"),
              Map.entry("growth-multixact/multixacts-per-1000", "<= 10.0"),
              Map.entry("growth-multixact/fenced-same-token", ">= 0.93"),
              Map.entry("lease/acquire-release-p50", "<= 0.5"),
              Map.entry("lease/acquire-release-p50-vs-zookeeper", "<= 0.5")));

  private static final Pattern ID =
      Pattern.compile("[a-z0-9]+(-[a-z0-9]+)*(/[a-z0-9]+(-[a-z0-9]+)*)?");

  @TempDir Path out;

  /** Every variant runs (tiny plan: figures mean nothing); the three files are complete. */
  @Test
  void theBenchmarkWritesJsonMarkdownAndChart() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    Main.Options options =
        new Main.Options(
            "tiny",
            List.of(
                (database, quick, selected) -> ThroughputBenchmark.run(database, Plan.tiny()),
                (database, quick, selected) -> LeaseBenchmark.run(database, Scale.tiny()),
                (database, quick, selected) -> GrowthBenchmark.run(database, Scale.tiny())),
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
    List<String> all = new ArrayList<>();
    Map<String, JsonNode> items = new LinkedHashMap<>();
    for (JsonNode section : json.path("sections")) {
      ids.add(section.path("id").asText());
      all.add(section.path("id").asText());
      for (String kind : List.of("variants", "distributions", "figures")) {
        for (JsonNode item : section.path(kind)) {
          String id = item.path("id").asText();
          assertThat(id).as(item.toString()).startsWith(section.path("id").asText() + "/");
          all.add(id);
          items.put(id, item);
        }
      }
      for (JsonNode variant : section.path("variants")) {
        if (section.path("id").asText().startsWith("growth-")) {
          continue; // sample counts per scale: GrowthBenchmarkTest
        }
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
          if (List.of("tpcb", "update", "hibernate", "read-only")
              .contains(section.path("id").asText())) {
            // throughput: each round's ratio comes from the baseline measured next to the variant
            JsonNode paired = variant.path("baselineSamples");
            assertThat(paired).as(variant.toString()).hasSize(Plan.tiny().rounds());
            for (int i = 0; i < paired.size(); i++) {
              assertThat(variant.path("ratios").get(i).asDouble())
                  .as(variant.toString())
                  .isCloseTo(
                      variant.path("samples").get(i).asDouble() / paired.get(i).asDouble(),
                      within(1e-9));
            }
          }
        }
      }
    }
    assertThat(ids)
        .containsExactly(
            "tpcb",
            "update",
            "hibernate",
            "read-only",
            "lease",
            "handover",
            "growth-resources",
            "growth-writes",
            "growth-multixact",
            "growth-row-triggers");
    assertThat(ids).as("what --sections may name").isEqualTo(Main.SECTIONS);
    // every section, variant, distribution and figure: an id, well-formed, used once
    assertThat(all).allSatisfy(id -> assertThat(id).matches(ID));
    assertThat(all).doesNotHaveDuplicates();
    // the ids the issues' targets name exist, carry that target and a measured value
    assertThat(items.keySet()).as("ids the issues' targets name").containsAll(TARGETS.keySet());
    for (Map.Entry<String, String> target : TARGETS.entrySet()) {
      JsonNode item = items.get(target.getKey());
      boolean distribution = item.has("p50");
      JsonNode value = distribution ? item.path("targetP50") : item.path("target");
      boolean higher = !distribution && item.path("higherIsBetter").asBoolean();
      assertThat((higher ? ">= " : "<= ") + value.asDouble())
          .as(target.getKey())
          .isEqualTo(target.getValue());
      JsonNode measured =
          distribution
              ? item.path("p50")
              : item.has("ratio") ? item.path("ratio") : item.path("value");
      assertThat(measured.isNumber()).as(item.toString()).isTrue();
      assertThat(item.path("targetMet").isBoolean()).as(item.toString()).isTrue();
    }
    // the new variants are measured in the same rounds as their baselines
    assertThat(items.get("tpcb/floor-1000").path("baselineId").asText()).isEqualTo("tpcb/unfenced");
    assertThat(items.get("tpcb/check-vs-floor-1000").path("baselineId").asText())
        .isEqualTo("tpcb/floor-1000");
    assertThat(items.get("tpcb/check-vs-floor-1000").path("name").asText())
        .isEqualTo("fenced, 10 resources, against the SQL-level floor");
    // the single-row UPDATE's floor: measured next to update/unfenced, no target
    assertThat(items.get("update/floor-1000").path("baselineId").asText())
        .isEqualTo("update/unfenced");
    assertThat(items.get("update/floor-1000").has("target")).isFalse();
    assertThat(items.get("update/floor-1000").path("ratio").isNumber()).isTrue();
    assertThat(items.get("tpcb/check-vs-floor-hot").path("baselineId").asText())
        .isEqualTo("tpcb/floor-hot");
    assertThat(items.get("tpcb/protected-statement").path("baselineId").asText())
        .isEqualTo("tpcb/fenced-hot");
    assertThat(items.get("read-only/bound-1000").path("baselineId").asText())
        .isEqualTo("read-only/unbound");
    assertThat(items.get("read-only/unbound").path("baselineId").asText())
        .isEqualTo("read-only/unfenced");
    assertThat(compared)
        .contains(
            "fenced, 10 resources",
            "fenced, one hot resource (leader)",
            "protected tables (row triggers), fenced, 10 resources",
            "lock row FOR UPDATE, per branch",
            "Hibernate, @Fenced, 10 resources",
            "Hibernate, @Version optimistic locking",
            "protected tables (statement triggers, one resource for all four), fenced, one hot"
                + " resource",
            "SQL-level floor (bare FOR SHARE read), unfenced, 10 resources",
            "SQL-level floor (bare FOR SHARE read), unfenced, one hot resource",
            "SQL-level floor (bare FOR SHARE read), unfenced, in the UPDATE's round trip,"
                + " 10 resources",
            "3 SELECTs through FencedDataSource, the branch's token bound, 10 resources");

    String markdown = Files.readString(out.resolve(Report.MARKDOWN));
    assertThat(markdown)
        .contains("## TPC-B-like transaction (pgbench), JDBC (`tpcb`)")
        .contains("## Targets")
        .contains("| `tpcb/check-vs-floor-1000` | ")
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

  /** {@code --sections hibernate,read-only}: those sections alone, each whole, in report order. */
  @Test
  void theSelectedSectionsAloneAreMeasuredAndReported() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    Main.Options options =
        new Main.Options(
            "tiny",
            List.of(
                (database, quick, selected) ->
                    ThroughputBenchmark.run(database, Plan.tiny(), selected)),
            true,
            out,
            "test database",
            Set.of("read-only", "hibernate"));
    int status =
        Main.run(
            db.dataSource(),
            fence(),
            new PrintStream(bytes, true, StandardCharsets.UTF_8),
            options);

    assertThat(status).as(bytes.toString(StandardCharsets.UTF_8)).isZero();
    JsonNode json = new ObjectMapper().readTree(out.resolve(Report.JSON).toFile());
    List<String> ids = new ArrayList<>();
    for (JsonNode section : json.path("sections")) {
      ids.add(section.path("id").asText());
      for (JsonNode variant : section.path("variants")) {
        ids.add(variant.path("id").asText());
        assertThat(variant.path("samples")).hasSize(Plan.tiny().rounds());
      }
    }
    assertThat(ids)
        .containsExactly(
            "hibernate",
            "hibernate/unfenced",
            "hibernate/fenced",
            "hibernate/floor-1000",
            "hibernate/version",
            "read-only",
            "read-only/unfenced",
            "read-only/unbound",
            "read-only/bound-1000");
  }

  /**
   * {@code --sections lease}: the throughput measurement, none of whose sections is selected, sets
   * nothing up (no bank to seed, no pool, no leases): it does not touch the database at all.
   */
  @Test
  void aThroughputRunWithNoSectionSelectedTouchesNothing() throws Exception {
    DataSource real = db.dataSource();
    AtomicInteger calls = new AtomicInteger();
    DataSource counted =
        (DataSource)
            Proxy.newProxyInstance(
                DataSource.class.getClassLoader(),
                new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                  calls.incrementAndGet();
                  try {
                    return method.invoke(real, args);
                  } catch (InvocationTargetException e) {
                    throw e.getCause();
                  }
                });

    assertThat(ThroughputBenchmark.run(counted, Plan.tiny(), id -> id.equals("lease"))).isEmpty();
    assertThat(calls).as("calls on the data source").hasValue(0);
  }

  private static FencingMigrations fence() {
    return FencingMigrations.builder(db.migrationDataSource())
        .ownerRole(db.ownerRole())
        .applicationRole(db.appRole())
        .build();
  }
}
