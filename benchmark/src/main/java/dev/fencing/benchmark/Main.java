package dev.fencing.benchmark;

import dev.fencing.benchmark.compare.CompareCommand;
import dev.fencing.migrations.FencingMigrations;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.PrintStream;
import java.sql.SQLException;
import java.util.Arrays;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Entry point of {@code java -jar benchmark/target/fencing-benchmark.jar [--url JDBC_URL] [--user
 * NAME]}: with no URL it starts an embedded PostgreSQL; it migrates the fence's schema and plays
 * the founding race. The password, if any, comes from the environment variable {@code
 * FENCING_DB_PASSWORD}. {@code compare ...} runs {@link CompareCommand} instead.
 */
public final class Main {
  private Main() {}

  /** Runs the demonstration; exits non-zero if any step did not behave as the fence promises. */
  public static void main(String[] args) throws SQLException, IOException {
    // The demonstration prints its own story; the embedded server's log is noise here.
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    if (args.length > 0 && args[0].equals("compare")) {
      System.exit(
          CompareCommand.run(Arrays.copyOfRange(args, 1, args.length), System.out, System.err));
    }
    String url = null;
    String user = null;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--url" -> url = value(args, ++i);
        case "--user" -> user = value(args, ++i);
        default -> usage("unknown argument " + args[i]);
      }
    }
    PrintStream out = System.out;
    if (url == null) {
      out.println("No --url given: starting an embedded PostgreSQL.");
      try (EmbeddedPostgres pg = EmbeddedPostgres.builder().start()) {
        System.exit(run(pg.getPostgresDatabase(), out));
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
    System.exit(run(ds, out));
  }

  static int run(DataSource dataSource, PrintStream out) throws SQLException {
    out.println(
        "Migrating the fence's schema: " + FencingMigrations.migrate(dataSource) + " applied.");
    boolean ok = new FoundingRace(dataSource, out).play();
    out.println(ok ? "The fence held." : "THE FENCE DID NOT HOLD.");
    return ok ? 0 : 1;
  }

  private static String value(String[] args, int i) {
    if (i >= args.length) {
      usage(args[i - 1] + " needs a value");
    }
    return args[i];
  }

  private static void usage(@Nullable String problem) {
    System.err.println(problem);
    System.err.println("usage: java -jar fencing-benchmark.jar [--url JDBC_URL] [--user NAME]");
    System.exit(2);
  }
}
