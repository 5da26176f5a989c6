package dev.fencing.benchmark.compare;

import dev.fencing.benchmark.compare.Comparison.Row;
import dev.fencing.benchmark.compare.Comparison.Settings;
import dev.fencing.migrations.FencingMigrations;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * {@code java -jar fencing-benchmark.jar compare [--url JDBC_URL] [--user NAME] [--redis HOST:PORT]
 * [--out FILE]}: plays the founding document's zombie race against each way of holding a lock —
 * lease + trusting the client, a Redis lock with a random value, ZooKeeper, etcd, and this
 * library's PostgreSQL lease — with a PostgreSQL table as the protected state, and prints the
 * document's table with what was measured. The table also goes to {@code FILE} as Markdown (default
 * {@value #DEFAULT_OUT}).
 *
 * <p>With no URL it starts an embedded PostgreSQL; the password, if any, comes from {@code
 * FENCING_DB_PASSWORD}. Exit status: 0 when every row that ran came out as the founding document
 * says, 1 otherwise, 2 for bad usage.
 */
public final class CompareCommand {
  /** Where the Markdown table goes unless {@code --out} says otherwise. */
  public static final String DEFAULT_OUT = "benchmark-results/founding-table.md";

  private static final String USAGE =
      "usage: java -jar fencing-benchmark.jar compare [--url JDBC_URL] [--user NAME]"
          + " [--owner-role NAME] [--app-role NAME] [--redis HOST:PORT] [--out FILE]";

  private CompareCommand() {}

  /**
   * Runs the command with the arguments that follow {@code compare}.
   *
   * @return the exit status; a failure of the run itself is printed to {@code err}, status 1
   */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    // Client 1's frozen ZooKeeper connection makes the client library complain, as it should.
    for (String logger : List.of("org.apache.zookeeper", "org.apache.curator")) {
      String property = "org.slf4j.simpleLogger.log." + logger;
      if (System.getProperty(property) == null) {
        System.setProperty(property, "error");
      }
    }
    try {
      return parseAndRun(args, out, err);
    } catch (Exception e) {
      err.println("compare failed: " + e);
      e.printStackTrace(err);
      return 1;
    }
  }

  private static int parseAndRun(String[] args, PrintStream out, PrintStream err) throws Exception {
    @Nullable String url = null;
    @Nullable String user = null;
    String ownerRole = FencingMigrations.DEFAULT_OWNER_ROLE;
    String appRole = FencingMigrations.DEFAULT_APPLICATION_ROLE;
    Settings settings = Settings.defaults();
    Path file = Path.of(DEFAULT_OUT);
    if (List.of(args).contains("--help") || List.of(args).contains("-h")) {
      out.println(USAGE);
      return 0;
    }
    for (int i = 0; i < args.length; i += 2) {
      String option = args[i];
      if (!List.of("--url", "--user", "--owner-role", "--app-role", "--redis", "--out")
          .contains(option)) {
        return usage(err, "unknown argument " + option);
      }
      if (i + 1 >= args.length) {
        return usage(err, option + " needs a value");
      }
      String value = args[i + 1];
      switch (option) {
        case "--url" -> url = value;
        case "--user" -> user = value;
        case "--owner-role" -> ownerRole = value;
        case "--app-role" -> appRole = value;
        case "--out" -> file = Path.of(value);
        default -> {
          int colon = value.lastIndexOf(':');
          int port = colon > 0 ? parsePort(value.substring(colon + 1)) : -1;
          if (port < 0) {
            return usage(err, "--redis needs HOST:PORT with a port from 1 to 65535, was " + value);
          }
          settings =
              new Settings(settings.ttl(), value.substring(0, colon), port, settings.runId());
        }
      }
    }
    try {
      FencingMigrations.builder(new PGSimpleDataSource())
          .ownerRole(ownerRole)
          .applicationRole(appRole)
          .build();
    } catch (IllegalArgumentException e) {
      return usage(err, e.getMessage());
    }
    if (url == null) {
      out.println("No --url given: starting an embedded PostgreSQL.");
      try (EmbeddedPostgres pg = EmbeddedPostgres.builder().start()) {
        DataSource embedded = pg.getPostgresDatabase();
        return compare(embedded, fence(embedded, ownerRole, appRole), settings, out, file);
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
    return compare(ds, fence(ds, ownerRole, appRole), settings, out, file);
  }

  private static FencingMigrations fence(DataSource dataSource, String ownerRole, String appRole) {
    return FencingMigrations.builder(dataSource)
        .ownerRole(ownerRole)
        .applicationRole(appRole)
        .build();
  }

  /** The fence's migrations ({@code fence}), then the comparison. */
  static int compare(
      DataSource dataSource, FencingMigrations fence, Settings settings, PrintStream out, Path file)
      throws Exception {
    out.println("Migrating the fence's schema: " + fence.migrate() + " applied.");
    out.printf(
        "%nThe founding table, measured: client 1 takes the lock and reads balance %d; its lease"
            + " (%d ms) expires while it is paused; client 2 takes the lock"
            + " and withdraws %d; client 1 wakes and writes balance %d.%n%n",
        Scenario.OPENING_BALANCE,
        settings.ttl().toMillis(),
        Scenario.CLIENT_2_WITHDRAWS,
        Scenario.OPENING_BALANCE - Scenario.CLIENT_1_WITHDRAWS);
    return report(new Comparison(dataSource, settings).run(), out, file);
  }

  /** Prints the table, writes it to {@code file}, and says whether it agrees with the document. */
  static int report(List<Row> rows, PrintStream out, Path file) throws IOException {
    String table = FoundingTable.markdown(rows);
    out.print(table);
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    Files.writeString(file, table, StandardCharsets.UTF_8);
    long run = rows.stream().filter(r -> r.measurement() != null).count();
    long agree = rows.stream().filter(Row::agreesWithDocument).count();
    out.printf(
        "%nRows run: %d of %d; as the founding document says: %d of %d. Table written to %s%n",
        run, rows.size(), agree, run, file);
    return agree == run ? 0 : 1;
  }

  private static int usage(PrintStream err, String problem) {
    err.println(problem);
    err.println(USAGE);
    return 2;
  }

  /** Allows {@code java -cp fencing-benchmark.jar dev.fencing.benchmark.compare.CompareCommand}. */
  public static void main(String[] args) {
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    System.exit(run(args, System.out, System.err));
  }

  private static int parsePort(String text) {
    try {
      int port = Integer.parseInt(text);
      return port >= 1 && port <= 65535 ? port : -1;
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}
