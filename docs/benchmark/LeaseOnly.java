import dev.fencing.benchmark.lease.LeaseBenchmark;
import dev.fencing.benchmark.report.Distribution;
import dev.fencing.benchmark.report.Section;
import dev.fencing.benchmark.report.Variant;
import dev.fencing.migrations.FencingMigrations;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * The benchmark's lease section alone (docs/benchmark/lease-and-growth.md, "Where an
 * acquire+release goes, and V27"): starts the embedded PostgreSQL the main command starts (fsync
 * and synchronous_commit on), migrates it with the fence of the jar on the class path, runs
 * LeaseBenchmark.run(dataSource, true) (ZooKeeper in-process, in the same rounds) and prints the
 * per-round p50s, their ratios, the distributions and the findings. One build per run: for two
 * builds, run it once with each jar, back to back.
 *
 * <p>usage: java -cp fencing-benchmark.jar docs/benchmark/LeaseOnly.java
 */
public class LeaseOnly {
  public static void main(String[] args) throws Exception {
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    try (EmbeddedPostgres pg =
        EmbeddedPostgres.builder()
            .setServerConfig("fsync", "on")
            .setServerConfig("synchronous_commit", "on")
            .setServerConfig("full_page_writes", "on")
            .start()) {
      DataSource ds = pg.getPostgresDatabase();
      System.out.println("migrated: " + FencingMigrations.builder(ds).build().migrate());
      for (Section s : LeaseBenchmark.run(ds, true)) {
        if (!s.id().equals("lease")) continue;
        Map<String, Variant> v = s.variants().stream().collect(Collectors.toMap(Variant::id, x -> x));
        List<Double> fence = v.get("lease/acquire-release-p50-vs-zookeeper").samples();
        List<Double> zk = v.get("lease/zookeeper-p50").samples();
        List<Double> ratios = new ArrayList<>();
        for (int i = 0; i < fence.size(); i++) ratios.add(fence.get(i) / zk.get(i));
        System.out.println("fence p50 per round " + fence);
        System.out.println("zk p50 per round    " + zk);
        Collections.sort(ratios);
        System.out.println("ratio per round (sorted) " + ratios + " median " + ratios.get(ratios.size() / 2));
        for (Distribution d : s.distributions()) {
          System.out.printf("%s: p50 %.3f p90 %.3f ms (n=%d)%n", d.id(), d.p50(), d.p90(), d.count());
        }
        s.findings().forEach(f -> System.out.println("finding: " + f));
      }
    }
    System.exit(0);
  }
}
