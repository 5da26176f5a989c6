package dev.fencing.torture;

import dev.fencing.testing.EmbeddedCluster;
import dev.fencing.testing.PatroniCluster;
import dev.fencing.testing.PatroniConfig;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The long torture run: {@code java -jar torture/target/fencing-torture.jar [--seed N] [--duration
 * 10m] [--workers 4] [--resources 2] [--ttl 1500ms] [--url JDBC_URL | --patroni] [--unfenced]
 * [--report FILE]}. Without {@code --url} it runs on an embedded PostgreSQL that it kills and
 * restarts; with it, that fault is skipped (and the report says so). With {@code --patroni} it
 * starts a two-node Patroni cluster on loopback ({@link PatroniCluster}) and the crash fault is an
 * asynchronous failover. Writes a Markdown report, prints a summary, and exits 1 if the checker
 * found any violation.
 */
public final class Main {
  private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|h)");

  private Main() {}

  /** Runs the command; see the class comment. */
  public static void main(String[] args) throws IOException, SQLException {
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    // a crash makes zonky and the cluster complain that the dead server cannot be stopped: expected
    System.setProperty("org.slf4j.simpleLogger.log.io.zonky", "off");
    System.setProperty("org.slf4j.simpleLogger.log.dev.fencing.testing", "error");
    long seed = ThreadLocalRandom.current().nextLong(1, 1_000_000);
    Duration duration = Duration.ofMinutes(10);
    int workers = 4;
    int resources = 2;
    Duration ttl = Duration.ofMillis(1500);
    String url = null;
    boolean fenced = true;
    boolean patroni = false;
    Path report = null;
    try {
      for (int i = 0; i < args.length; i++) {
        switch (args[i]) {
          case "--seed" -> seed = Long.parseLong(value(args, ++i));
          case "--duration" -> duration = duration(value(args, ++i));
          case "--workers" -> workers = Integer.parseInt(value(args, ++i));
          case "--resources" -> resources = Integer.parseInt(value(args, ++i));
          case "--ttl" -> ttl = duration(value(args, ++i));
          case "--url" -> url = value(args, ++i);
          case "--unfenced" -> fenced = false;
          case "--patroni" -> patroni = true;
          case "--report" -> report = Path.of(value(args, ++i));
          case "--help", "-h" -> {
            System.out.print(USAGE);
            System.exit(0);
          }
          default -> usage("unknown argument " + args[i]);
        }
      }
    } catch (NumberFormatException e) {
      usage("not a number: " + e.getMessage());
    }
    if (report == null) {
      report = Path.of("torture-report-" + seed + ".md");
    }
    TortureRun.Settings settings = null;
    try {
      settings = new TortureRun.Settings(seed, workers, resources, ttl, fenced);
    } catch (IllegalArgumentException e) {
      usage(e.getMessage());
    }
    if (duration.isZero()) {
      usage("--duration must be more than 0");
    }
    if (patroni && url != null) {
      usage("--patroni and --url exclude each other");
    }
    String missing = patroni ? PatroniCluster.missing(PatroniConfig.defaults()) : null;
    if (missing != null) {
      usage("--patroni: " + missing);
    }
    PrintStream out = System.out;
    Path directory = Files.createTempDirectory("fencing-torture-");
    out.println(
        "Torture run, seed "
            + seed
            + ", "
            + Report.human(duration)
            + "; worker logs in "
            + directory);
    TortureRun.Result result;
    if (patroni) {
      out.println(
          "--patroni: starting a two-node Patroni cluster (its primary will be killed and the"
              + " replica promoted).");
      try (PatroniCluster cluster = PatroniCluster.start()) {
        result = run(settings, TortureDatabase.patroni(cluster), directory, duration, out);
      }
    } else if (url == null) {
      out.println(
          "No --url given: starting an embedded PostgreSQL (it will be killed and restarted).");
      try (EmbeddedCluster cluster = EmbeddedCluster.start()) {
        result = run(settings, TortureDatabase.embedded(cluster), directory, duration, out);
      }
    } else {
      result = run(settings, TortureDatabase.external(url), directory, duration, out);
    }
    Files.writeString(report, Report.markdown(result, duration), StandardCharsets.UTF_8);
    out.println(Report.summary(result));
    out.println("Report written to " + report.toAbsolutePath());
    System.exit(status(result));
  }

  /**
   * The exit status of a finished run: 0 passed, 1 violations, 3 inconclusive (no violation, but
   * the run proves nothing: {@link TortureRun.Result#inconclusive()}).
   */
  static int status(TortureRun.Result result) {
    if (!result.violations().isEmpty()) {
      return 1;
    }
    return result.inconclusive().isEmpty() ? 0 : 3;
  }

  static TortureRun.Result run(
      TortureRun.Settings settings,
      TortureDatabase database,
      Path directory,
      Duration duration,
      PrintStream out)
      throws SQLException {
    try (TortureRun run = TortureRun.start(settings, database, directory)) {
      long[] lastReport = {System.nanoTime()};
      Scenarios.random(
          run,
          duration,
          settings.seed(),
          r -> {
            if (System.nanoTime() - lastReport[0] > Duration.ofSeconds(30).toNanos()) {
              lastReport[0] = System.nanoTime();
              out.println("  faults so far: " + r.faults().counts());
            }
          });
      return run.finish();
    }
  }

  static Duration duration(String text) {
    Matcher m = DURATION.matcher(text.toLowerCase(Locale.ROOT));
    if (!m.matches()) {
      usage("a duration is a number with ms, s, m or h, e.g. 90s or 10m; was " + text);
    }
    long n = Long.parseLong(m.group(1));
    return switch (m.group(2)) {
      case "ms" -> Duration.ofMillis(n);
      case "s" -> Duration.ofSeconds(n);
      case "m" -> Duration.ofMinutes(n);
      default -> Duration.ofHours(n);
    };
  }

  private static String value(String[] args, int i) {
    if (i >= args.length) {
      usage(args[i - 1] + " needs a value");
    }
    return args[i];
  }

  static final String USAGE =
      """
      usage: java -jar fencing-torture.jar [--seed N] [--duration 10m] [--workers 4] [--resources 2]
                                          [--ttl 1500ms] [--url JDBC_URL | --patroni] [--unfenced]
                                          [--report FILE]
             java -jar fencing-torture.jar --help
      Runs worker processes against the fence with seeded faults and checks the history; exits 1
      on violations, 3 if the run proves nothing (no zombie, crash or failover landed, no write committed, or
      fencing off and no violation). Without --url: an embedded PostgreSQL it may crash. Password of --url:
      environment FENCING_DB_PASSWORD. --patroni: a two-node Patroni cluster on loopback (Debian
      packages patroni, etcd-server, postgresql-15) whose primary it kills: asynchronous failover.
      """;

  private static void usage(@Nullable String problem) {
    if (problem != null) {
      System.err.println(problem);
    }
    System.err.print(USAGE);
    System.exit(2);
  }
}
