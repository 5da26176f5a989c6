package dev.fencing.benchmark.growth;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.benchmark.SectionAssertions;
import dev.fencing.benchmark.measure.Scale;
import dev.fencing.benchmark.report.Figure;
import dev.fencing.benchmark.report.Section;
import dev.fencing.benchmark.report.Series;
import dev.fencing.benchmark.report.Variant;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The growth benchmark at a tiny scale: its results are complete and well-formed (no timings). */
class GrowthBenchmarkTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  @Test
  void measuresEveryGrowthCurve() throws Exception {
    FencingMigrations.builder(db.migrationDataSource())
        .ownerRole(db.ownerRole())
        .applicationRole(db.appRole())
        .build()
        .migrate();
    Scale tiny = Scale.tiny();

    Map<String, Section> sections =
        SectionAssertions.wellFormed(GrowthBenchmark.run(db.dataSource(), tiny));

    assertThat(sections)
        .containsOnlyKeys(
            "growth-resources", "growth-writes", "growth-multixact", "growth-row-triggers");
    List<Double> counts = tiny.resourceCounts().stream().map(Integer::doubleValue).toList();
    Section resources = sections.get("growth-resources");
    assertThat(resources.series())
        .hasSize(3)
        .allSatisfy(s -> assertThat(SectionAssertions.xs(s)).isEqualTo(counts));
    assertThat(resources.variants()).hasSize(2 * counts.size());
    assertThat(resources.variants())
        .allSatisfy(v -> assertThat(v.samples()).hasSize(tiny.rounds()));

    List<Double> writes = tiny.writesPerTransaction().stream().map(Integer::doubleValue).toList();
    Section perTransaction = sections.get("growth-writes");
    assertThat(perTransaction.series())
        .hasSize(2)
        .allSatisfy(s -> assertThat(SectionAssertions.xs(s)).isEqualTo(writes));
    assertThat(perTransaction.variants()).hasSize(2 * writes.size());

    Section multixact = sections.get("growth-multixact");
    assertThat(multixact.series()).hasSize(2);
    for (Series s : multixact.series()) {
      assertThat(s.points().get(0)).isEqualTo(new Series.Point(0, 0));
      assertThat(s.points()).hasSizeGreaterThanOrEqualTo(2);
    }
    assertThat(multixact.series().get(0).name()).contains("fenced");

    assertThat(multixact.variants())
        .extracting(Variant::id)
        .containsExactly("growth-multixact/unfenced", "growth-multixact/fenced-same-token");
    // interleaved: one sample per round for both, so the ratio is a median of per-round ratios
    assertThat(multixact.variants())
        .allSatisfy(v -> assertThat(v.samples()).hasSize(tiny.rounds()));
    Figure perThousand = multixact.figures().get(0);
    assertThat(perThousand.id()).isEqualTo(MultixactGrowth.PER_THOUSAND_ID);
    assertThat(perThousand.target()).isEqualTo(10.0);
    assertThat(perThousand.higherIsBetter()).isFalse();
    assertThat(perThousand.value())
        .as("the accept path takes an advisory share lock, not a row lock (V10)")
        .isLessThanOrEqualTo(perThousand.target());

    Section triggers = sections.get("growth-row-triggers");
    assertThat(triggers.variants()).hasSize(5);
    Figure rowTrigger = triggers.figures().get(0);
    assertThat(rowTrigger.id()).isEqualTo(RowTriggerCost.ROW_TRIGGER_ID);
    assertThat(rowTrigger.target()).isEqualTo(3.0);
    assertThat(rowTrigger.value()).isFinite();
    assertThat(triggers.variants())
        .filteredOn(v -> v.baseline() != null)
        .allSatisfy(v -> assertThat(v.baseline()).isEqualTo("unprotected"));

    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT count(*) FROM pg_class WHERE relname LIKE 'bench\\_%'"
                    + " AND relkind = 'r'")) {
      rs.next();
      assertThat(rs.getInt(1)).as("the benchmark's tables are dropped").isZero();
    }
  }
}
