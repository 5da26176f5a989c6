package dev.fencing.benchmark.lease;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.benchmark.SectionAssertions;
import dev.fencing.benchmark.measure.Scale;
import dev.fencing.benchmark.report.Distribution;
import dev.fencing.benchmark.report.Section;
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

/** The lease benchmark at a tiny scale: its results are complete and well-formed (no timings). */
class LeaseBenchmarkTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  @Test
  void measuresAcquireReleaseAgainstZooKeeperAndHandovers() throws Exception {
    FencingMigrations.builder(db.migrationDataSource())
        .ownerRole(db.ownerRole())
        .applicationRole(db.appRole())
        .build()
        .migrate();
    Scale tiny = Scale.tiny();

    Map<String, Section> sections =
        SectionAssertions.wellFormed(LeaseBenchmark.run(db.dataSource(), tiny));

    assertThat(sections).containsOnlyKeys("lease", "handover");
    Section lease = sections.get("lease");
    assertThat(lease.variants())
        .extracting(Variant::name)
        .containsExactlyInAnyOrder(
            FenceLeases.NAME + ", 1 client",
            FenceLeases.NAME + ", 2 clients (distinct locks)",
            ZooKeeperLocks.NAME + ", 1 client",
            ZooKeeperLocks.NAME + ", 2 clients (distinct locks)",
            FenceLeases.NAME + " acquire+release p50 of the round, 1 client",
            ZooKeeperLocks.NAME + " acquire+release p50 of the round, 1 client");
    assertThat(lease.variants()).allSatisfy(v -> assertThat(v.samples()).hasSize(tiny.rounds()));
    assertThat(lease.variants())
        .filteredOn(v -> v.name().startsWith(FenceLeases.NAME))
        .allSatisfy(v -> assertThat(v.baseline()).startsWith(ZooKeeperLocks.NAME));
    Distribution fence = lease.distributions().get(0);
    assertThat(fence.name()).startsWith(FenceLeases.NAME);
    assertThat(fence.count()).isEqualTo((long) tiny.rounds() * tiny.latencyOps());
    assertThat(fence.targetP50()).isEqualTo(0.5);
    assertThat(fence.id()).isEqualTo(LeaseBenchmark.P50_ID);
    // the fence's p50 against ZooKeeper's, round by round: lower is better, at most half
    Variant vsZooKeeper =
        lease.variants().stream()
            .filter(v -> v.id().equals(LeaseBenchmark.P50_VS_ZOOKEEPER_ID))
            .findFirst()
            .orElseThrow();
    assertThat(vsZooKeeper.higherIsBetter()).isFalse();
    assertThat(vsZooKeeper.target()).isEqualTo(0.5);
    assertThat(vsZooKeeper.unit()).isEqualTo("ms");
    assertThat(vsZooKeeper.baseline()).startsWith(ZooKeeperLocks.NAME);
    assertThat(lease.distributions().get(1).name()).startsWith(ZooKeeperLocks.NAME);

    List<Distribution> handover = sections.get("handover").distributions();
    assertThat(handover).hasSize(2).allSatisfy(d -> assertThat(d.count()).isEqualTo(2));
    // the handover starts at the old lease's expiry, so it cannot be shorter than the write
    assertThat(handover.get(0).max()).isGreaterThanOrEqualTo(handover.get(1).p50());

    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT count(*) FROM pg_class WHERE relname IN"
                    + " ('bench_handover', 'bench_commit_probe')")) {
      rs.next();
      assertThat(rs.getInt(1)).as("the benchmark's tables are dropped").isZero();
    }
  }
}
