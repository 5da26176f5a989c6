package dev.fencing.migrations;

import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.jspecify.annotations.Nullable;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The deployment step as a command:
 *
 * <pre>
 * java -jar fencing-migrations-VERSION-cli.jar migrate|info|validate --url jdbc:postgresql://host/db
 *      [--user NAME] [--schema fencing] [--app-role fencing_app] [--owner-role fencing_owner]
 *      [--verbose]
 * java -jar fencing-migrations-VERSION-cli.jar --help
 * </pre>
 *
 * The password is read from the environment variable {@code FENCING_DB_PASSWORD} (never from the
 * command line, where other users of the machine could read it). Flyway's own log lines are shown
 * only with {@code --verbose}. Exit status: 0 success, 1 the database refused or the schema is not
 * as migrated, 2 bad usage.
 */
public final class MigrateCommand {
  static final String USAGE =
      """
      usage: java -jar fencing-migrations-cli.jar COMMAND --url JDBC_URL [options]
             java -jar fencing-migrations-cli.jar --help
      commands:
        migrate    apply pending migrations (a preflight names any missing privilege first)
        info       list the migrations and their state
        validate   check checksums, hand-made changes and the token sequence
      options:
        --url JDBC_URL      jdbc:postgresql://host:port/database (required)
        --user NAME         the migrating user (password: environment FENCING_DB_PASSWORD)
        --schema NAME       the fence's schema (default fencing)
        --owner-role NAME   the NOLOGIN role that owns the fence (default fencing_owner)
        --app-role NAME     the NOLOGIN role the application's login is granted (default fencing_app)
        --verbose           show Flyway's own log lines
        --help              this text
      exit status: 0 success, 1 refused or not as migrated, 2 bad usage
      """;

  private static final Set<String> OPTIONS =
      Set.of("--url", "--user", "--schema", "--app-role", "--owner-role");

  /** Kept: java.util.logging holds its loggers weakly, so a level set on a dropped one is lost. */
  private static final Logger FLYWAY_LOG = Logger.getLogger("org.flywaydb");

  private MigrateCommand() {}

  /** Runs the command and exits with its status. */
  public static void main(String[] args) {
    System.exit(run(args, System.getenv("FENCING_DB_PASSWORD"), System.out, System.err));
  }

  static int run(String[] args, @Nullable String password, PrintStream out, PrintStream err) {
    if (List.of(args).contains("--help") || List.of(args).contains("-h")) {
      out.print(USAGE);
      return 0;
    }
    if (args.length == 0) {
      err.print(USAGE);
      return 2;
    }
    if (!List.of("migrate", "info", "validate").contains(args[0])) {
      err.print("unknown command " + args[0] + "\n" + USAGE);
      return 2;
    }
    Map<String, String> options = new LinkedHashMap<>();
    boolean verbose = false;
    for (int i = 1; i < args.length; i += 2) {
      String name = args[i];
      if (name.equals("--verbose")) {
        if (verbose) {
          err.print("option --verbose is given twice\n" + USAGE);
          return 2;
        }
        verbose = true;
        i--; // takes no value
        continue;
      }
      if (!name.startsWith("--")) {
        err.print("unexpected argument " + name + "\n" + USAGE);
        return 2;
      }
      if (!OPTIONS.contains(name)) {
        err.print("unknown option " + name + "\n" + USAGE);
        return 2;
      }
      // a value that looks like an option means the value was left out
      if (i + 1 >= args.length || args[i + 1].startsWith("--")) {
        err.print("option " + name + " needs a value\n" + USAGE);
        return 2;
      }
      if (options.putIfAbsent(name, args[i + 1]) != null) {
        err.print("option " + name + " is given twice\n" + USAGE);
        return 2;
      }
    }
    String url = options.get("--url");
    String user = options.get("--user");
    FencingMigrations.Builder builder;
    FencingMigrations migrations;
    if (url == null || !url.startsWith("jdbc:postgresql:")) {
      err.print("--url jdbc:postgresql://... is required\n" + USAGE);
      return 2;
    }
    PGSimpleDataSource dataSource = new PGSimpleDataSource();
    try {
      dataSource.setURL(url);
    } catch (IllegalArgumentException e) {
      err.println("bad --url: " + e.getMessage());
      return 2;
    }
    if (user != null) {
      dataSource.setUser(user);
    }
    if (password != null) {
      dataSource.setPassword(password);
    }
    builder = FencingMigrations.builder(dataSource);
    try {
      for (Map.Entry<String, String> o : options.entrySet()) {
        switch (o.getKey()) {
          case "--schema" -> builder.schema(o.getValue());
          case "--app-role" -> builder.applicationRole(o.getValue());
          case "--owner-role" -> builder.ownerRole(o.getValue());
          default -> {} // --url, --user: used above
        }
      }
      migrations = builder.build();
    } catch (IllegalArgumentException e) {
      err.print(e.getMessage() + "\n" + USAGE);
      return 2;
    }
    FLYWAY_LOG.setLevel(verbose ? Level.INFO : Level.WARNING);
    try {
      switch (args[0]) {
        case "migrate" -> {
          out.println("applied " + migrations.migrate() + " migration(s)");
          migrations.absentOptionalFeatures().forEach(out::println);
        }
        case "info" -> migrations.info().forEach(out::println);
        default -> {
          List<String> absent = migrations.validate();
          out.println("schema is as migrated");
          absent.forEach(out::println);
        }
      }
      return 0;
    } catch (FencingMigrationException e) {
      err.println(e.getMessage());
      return 1;
    }
  }
}
