import dev.fencing.benchmark.report.Ratios;
import dev.fencing.benchmark.report.Section;
import dev.fencing.benchmark.report.Variant;
import dev.fencing.benchmark.throughput.ThroughputBenchmark;
import dev.fencing.migrations.FencingMigrations;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import java.util.Locale;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The throughput section alone, quick plan, on a PostgreSQL server (127.0.0.1:5432, user postgres,
 * trust): creates database {@code args[0]} and roles of its own, migrates the fence, runs, writes
 * each ratio (median, min, max, per round) as tab-separated lines to {@code args[1]}, drops them.
 *
 * <p>{@code java -cp benchmark/target/fencing-benchmark.jar docs/benchmark/ThroughputOnly.java
 * bench_new new.tsv}; for the method before paired turns, a jar built from commit 1af0e6f.
 */
public class ThroughputOnly {
  private static final String SERVER = "jdbc:postgresql://127.0.0.1:5432/";
  private static final String OWNER = "throughput_only_owner";
  private static final String APP = "throughput_only_app";

  public static void main(String[] args) throws Exception {
    String db = args[0];
    try (Connection c = DriverManager.getConnection(SERVER + "postgres", "postgres", "");
        Statement s = c.createStatement()) {
      s.execute("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
      s.execute("DROP ROLE IF EXISTS " + APP);
      s.execute("DROP ROLE IF EXISTS " + OWNER);
      s.execute("CREATE DATABASE " + db);
    }
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(SERVER + db);
    ds.setUser("postgres");
    FencingMigrations.builder(ds).ownerRole(OWNER).applicationRole(APP).build().migrate();
    long t0 = System.nanoTime();
    List<Section> sections = ThroughputBenchmark.run(ds, true);
    double secs = (System.nanoTime() - t0) / 1e9;
    try (PrintStream out = new PrintStream(Files.newOutputStream(Path.of(args[1])))) {
      out.printf(Locale.ROOT, "# throughput section took %.0f s%n", secs);
      for (Section s : sections) {
        for (Variant v : s.variants()) {
          Ratios.of(s, v)
              .ifPresent(
                  r ->
                      out.printf(
                          Locale.ROOT,
                          "%s\t%.3f\t%.3f\t%.3f\t%s%n",
                          v.id(),
                          r.median(),
                          r.min(),
                          r.max(),
                          r.perRound().stream()
                              .map(x -> String.format(Locale.ROOT, "%.3f", x))
                              .toList()));
        }
      }
    }
    try (Connection c = DriverManager.getConnection(SERVER + "postgres", "postgres", "");
        Statement s = c.createStatement()) {
      s.execute("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
      s.execute("DROP ROLE IF EXISTS " + APP);
      s.execute("DROP ROLE IF EXISTS " + OWNER);
    }
  }
}
