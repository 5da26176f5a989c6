package dev.fencing.benchmark;

import dev.fencing.benchmark.compare.CompareCommand;
import dev.fencing.benchmark.growth.GrowthBenchmark;
import dev.fencing.benchmark.lease.LeaseBenchmark;
import dev.fencing.benchmark.report.Environment;
import dev.fencing.benchmark.report.Report;
import dev.fencing.benchmark.report.Section;
import dev.fencing.benchmark.throughput.Plan;
import dev.fencing.benchmark.throughput.ThroughputBenchmark;
import dev.fencing.migrations.FencingMigrations;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.PrintStream;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Entry point of {@code java -jar benchmark/target/fencing-benchmark.jar [--url JDBC_URL] [--user
 * NAME] [--full | --no-benchmark] [--sections IDS] [--out DIR]}: with no URL it starts an embedded
 * PostgreSQL; it migrates the fence's schema, plays the founding race, then measures what the fence
 * costs (quick mode unless {@code --full}; only the sections {@code IDS} names, comma-separated,
 * when given) and writes the report to {@code DIR} (default {@code target/benchmark-results}). The
 * password, if any, comes from the environment variable {@code FENCING_DB_PASSWORD}. {@code compare
 * ...} runs {@link CompareCommand} instead: the founding document's table, measured.
 */
public final class Main {
  /** The ids of the lease measurement's sections. */
  private static final List<String> LEASE = List.of("lease", "handover");

  /** The ids of the growth measurement's sections. */
  private static final List<String> GROWTH =
      List.of("growth-resources", "growth-writes", "growth-multixact", "growth-row-triggers");

  /** Every section id of the report, in order: what {@code --sections} may name. */
  static final List<String> SECTIONS = concat(ThroughputBenchmark.SECTIONS, LEASE, GROWTH);

  /**
   * The measurements of the report, in order. The lease and the growth measurements run whole when
   * any of their sections is selected (the others are then dropped from the report).
   */
  static final List<Benchmark> BENCHMARKS =
      List.of(
          (database, quick, selected) ->
              ThroughputBenchmark.run(database, quick ? Plan.quick() : Plan.full(), selected),
          (database, quick, selected) ->
              LEASE.stream().anyMatch(selected) ? LeaseBenchmark.run(database, quick) : List.of(),
          (database, quick, selected) ->
              GROWTH.stream().anyMatch(selected)
                  ? GrowthBenchmark.run(database, quick)
                  : List.of());

  private static final String USAGE =
      "usage: java -jar fencing-benchmark.jar [--url JDBC_URL] [--user NAME]"
          + " [--owner-role NAME] [--app-role NAME] [--full | --no-benchmark]"
          + " [--sections ID,...] [--out DIR]\n"
          + "       java -jar fencing-benchmark.jar compare [--url JDBC_URL] [--user NAME]"
          + " [--owner-role NAME] [--app-role NAME] [--redis HOST:PORT] [--out FILE]";

  private Main() {}

  /**
   * What to run after the founding race.
   *
   * @param mode {@code "quick"}, {@code "full"}, or another name for a custom list (tests)
   * @param benchmarks the measurements; none skips the benchmark
   * @param quick passed to each benchmark
   * @param out where the report goes
   * @param database how the database was reached, for the report
   * @param sections the section ids to measure; empty for all
   */
  record Options(
      String mode,
      List<Benchmark> benchmarks,
      boolean quick,
      Path out,
      String database,
      Set<String> sections) {

    /** All sections. */
    Options(String mode, List<Benchmark> benchmarks, boolean quick, Path out, String database) {
      this(mode, benchmarks, quick, out, database, Set.of());
    }

    /** Whether section {@code id} is measured. */
    boolean selected(String id) {
      return sections.isEmpty() || sections.contains(id);
    }
  }

  /** Runs the demonstration; exits non-zero if any step did not behave as the fence promises. */
  public static void main(String[] args) throws Exception {
    // The demonstration prints its own story; the embedded server's log is noise here.
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    System.setProperty("java.awt.headless", "true");
    System.setProperty("org.jboss.logging.provider", "slf4j"); // Hibernate's INFO lines: noise too
    if (args.length > 0 && args[0].equals("compare")) {
      System.exit(
          CompareCommand.run(Arrays.copyOfRange(args, 1, args.length), System.out, System.err));
    }
    String url = null;
    String user = null;
    String ownerRole = FencingMigrations.DEFAULT_OWNER_ROLE;
    String appRole = FencingMigrations.DEFAULT_APPLICATION_ROLE;
    boolean full = false;
    boolean benchmark = true;
    Set<String> sections = Set.of();
    Path out = Path.of("target", "benchmark-results");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--url" -> url = value(args, ++i);
        case "--user" -> user = value(args, ++i);
        case "--owner-role" -> ownerRole = value(args, ++i);
        case "--app-role" -> appRole = value(args, ++i);
        case "--out" -> out = Path.of(value(args, ++i));
        case "--full" -> full = true;
        case "--quick" -> full = false;
        case "--no-benchmark" -> benchmark = false;
        case "--sections" -> sections = sections(value(args, ++i));
        case "--help", "-h" -> {
          System.out.println(USAGE);
          System.exit(0);
        }
        default -> usage("unknown argument " + args[i]);
      }
    }
    PrintStream out0 = System.out;
    List<Benchmark> benchmarks = benchmark ? BENCHMARKS : List.of();
    String mode = full ? "full" : "quick";
    if (url == null) {
      out0.println("No --url given: starting an embedded PostgreSQL.");
      // zonky turns fsync and synchronous_commit off; the fence's durability (and a fair
      // comparison with ZooKeeper, which flushes) needs both
      try (EmbeddedPostgres pg =
          EmbeddedPostgres.builder()
              .setServerConfig("fsync", "on")
              .setServerConfig("synchronous_commit", "on")
              .setServerConfig("full_page_writes", "on")
              .start()) {
        DataSource embedded = pg.getPostgresDatabase();
        int status =
            run(
                embedded,
                fence(embedded, ownerRole, appRole),
                out0,
                new Options(
                    mode, benchmarks, !full, out, "embedded (zonky) on this machine", sections));
        System.exit(status);
      }
    }
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(url);
    if (user != null) {
      ds.setUser(user);
    }
    String password = System.getenv("FENCING_DB_PASSWORD");
    if (password != null) {
      ds.setPassword(password);
    }
    // the URL without its parameters: they may hold credentials
    String shown = url.replaceAll("\\?.*", "");
    System.exit(
        run(
            ds,
            fence(ds, ownerRole, appRole),
            out0,
            new Options(mode, benchmarks, !full, out, shown, sections)));
  }

  /** The fence's migrations with the roles given, or the usage if a name is not one. */
  private static FencingMigrations fence(DataSource dataSource, String ownerRole, String appRole) {
    try {
      return FencingMigrations.builder(dataSource)
          .ownerRole(ownerRole)
          .applicationRole(appRole)
          .build();
    } catch (IllegalArgumentException e) {
      usage(e.getMessage());
      throw e; // not reached
    }
  }

  /** The founding race alone, after {@code fence}'s migrations. */
  static int run(DataSource dataSource, FencingMigrations fence, PrintStream out) throws Exception {
    return run(dataSource, fence, out, new Options("none", List.of(), true, Path.of("."), "?"));
  }

  /**
   * The fence's migrations, the founding race, then the benchmarks of {@code options}. Returns 1 if
   * the fence did not hold; a benchmark that fails throws.
   */
  static int run(DataSource dataSource, FencingMigrations fence, PrintStream out, Options options)
      throws Exception {
    out.println("Migrating the fence's schema: " + fence.migrate() + " applied.");
    boolean ok = new FoundingRace(dataSource, out).play();
    out.println(ok ? "The fence held." : "THE FENCE DID NOT HOLD.");
    if (!ok || options.benchmarks().isEmpty()) {
      return ok ? 0 : 1;
    }
    out.printf(
        "%nMeasuring what the fence costs (%s mode; --full for longer, --no-benchmark to skip)...%n",
        options.mode());
    Instant started = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    List<Section> sections = new ArrayList<>();
    Predicate<String> selected = options::selected;
    for (Benchmark benchmark : options.benchmarks()) {
      for (Section section : benchmark.run(dataSource, options.quick(), selected)) {
        if (selected.test(section.id())) {
          sections.add(section);
        }
      }
    }
    long seconds = Instant.now().getEpochSecond() - started.getEpochSecond();
    Environment environment = environment(dataSource, options, started, seconds);
    Report report = new Report(environment, sections);
    List<Path> files = report.write(options.out());
    out.println();
    out.print(report.summary());
    out.printf("Benchmark took %d s. Report written:%n", seconds);
    for (Path file : files) {
      out.println("  " + file.toAbsolutePath().normalize());
    }
    return 0;
  }

  private static Environment environment(
      DataSource dataSource, Options options, Instant started, long seconds) throws SQLException {
    Map<String, String> settings = new LinkedHashMap<>();
    String version;
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      try (ResultSet rs = s.executeQuery("SELECT version()")) {
        rs.next();
        version = rs.getString(1);
      }
      try (ResultSet rs =
          s.executeQuery(
              "SELECT name, setting || coalesce(' ' || unit, '') FROM pg_settings WHERE name IN"
                  + " ('shared_buffers', 'synchronous_commit', 'fsync', 'max_connections',"
                  + " 'wal_level', 'wal_sync_method', 'wal_buffers', 'max_wal_size',"
                  + " 'full_page_writes', 'commit_delay', 'checkpoint_timeout', 'wal_compression',"
                  + " 'synchronous_standby_names', 'work_mem', 'effective_io_concurrency')"
                  + " ORDER BY name")) {
        while (rs.next()) {
          settings.put(rs.getString(1), rs.getString(2));
        }
      }
    }
    Runtime.Version jvm = Runtime.version();
    return new Environment(
        started.toString(),
        options.mode(),
        "the whole benchmark took " + seconds + " s; per measurement: see each section's method",
        Runtime.getRuntime().availableProcessors(),
        System.getProperty("os.name")
            + " "
            + System.getProperty("os.version")
            + " "
            + System.getProperty("os.arch"),
        System.getProperty("java.vm.name") + " " + jvm,
        options.database(),
        version,
        settings);
  }

  /** The section ids of {@code --sections}, or the usage if one is not a section of the report. */
  private static Set<String> sections(String ids) {
    Set<String> selected = new java.util.LinkedHashSet<>();
    for (String id : ids.split(",", -1)) {
      String trimmed = id.trim();
      if (!SECTIONS.contains(trimmed)) {
        usage(
            "--sections: unknown section '"
                + trimmed
                + "'; the sections are "
                + String.join(",", SECTIONS));
      }
      selected.add(trimmed);
    }
    return Set.copyOf(selected);
  }

  @SafeVarargs
  private static List<String> concat(List<String>... lists) {
    List<String> all = new ArrayList<>();
    for (List<String> l : lists) {
      all.addAll(l);
    }
    return List.copyOf(all);
  }

  private static String value(String[] args, int i) {
    if (i >= args.length) {
      usage(args[i - 1] + " needs a value");
    }
    return args[i];
  }

  private static void usage(@Nullable String problem) {
    System.err.println(problem);
    System.err.println(USAGE);
    System.exit(2);
  }
}
