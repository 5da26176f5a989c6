package dev.fencing.migrations;

import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The deployment step as a command:
 *
 * <pre>
 * java -jar fencing-migrations-VERSION-cli.jar migrate|info|validate --url jdbc:postgresql://host/db
 *      [--user NAME] [--schema fencing] [--app-role fencing_app] [--owner-role fencing_owner]
 * </pre>
 *
 * The password is read from the environment variable {@code FENCING_DB_PASSWORD} (never from the
 * command line, where other users of the machine could read it). Exit status: 0 success, 1 the
 * database refused or the schema is not as migrated, 2 bad usage.
 */
public final class MigrateCommand {
  static final String USAGE =
      "usage: migrate|info|validate --url JDBC_URL [--user NAME] [--schema NAME]"
          + " [--app-role NAME] [--owner-role NAME]   (password: env FENCING_DB_PASSWORD)";

  private static final Set<String> OPTIONS =
      Set.of("--url", "--user", "--schema", "--app-role", "--owner-role");

  private MigrateCommand() {}

  /** Runs the command and exits with its status. */
  public static void main(String[] args) {
    System.exit(run(args, System.getenv("FENCING_DB_PASSWORD"), System.out, System.err));
  }

  static int run(String[] args, @Nullable String password, PrintStream out, PrintStream err) {
    if (args.length == 0) {
      err.println(USAGE);
      return 2;
    }
    if (!List.of("migrate", "info", "validate").contains(args[0])) {
      err.println("unknown command " + args[0] + "\n" + USAGE);
      return 2;
    }
    Map<String, String> options = new LinkedHashMap<>();
    for (int i = 1; i < args.length; i += 2) {
      String name = args[i];
      if (!name.startsWith("--")) {
        err.println("unexpected argument " + name + "\n" + USAGE);
        return 2;
      }
      if (!OPTIONS.contains(name)) {
        err.println("unknown option " + name + "\n" + USAGE);
        return 2;
      }
      // a value that looks like an option means the value was left out
      if (i + 1 >= args.length || args[i + 1].startsWith("--")) {
        err.println("option " + name + " needs a value\n" + USAGE);
        return 2;
      }
      if (options.putIfAbsent(name, args[i + 1]) != null) {
        err.println("option " + name + " is given twice\n" + USAGE);
        return 2;
      }
    }
    String url = options.get("--url");
    String user = options.get("--user");
    FencingMigrations.Builder builder;
    FencingMigrations migrations;
    if (url == null || !url.startsWith("jdbc:postgresql:")) {
      err.println("--url jdbc:postgresql://... is required\n" + USAGE);
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
      err.println(e.getMessage() + "\n" + USAGE);
      return 2;
    }
    try {
      switch (args[0]) {
        case "migrate" -> out.println("applied " + migrations.migrate() + " migration(s)");
        case "info" -> migrations.info().forEach(out::println);
        default -> {
          migrations.validate();
          out.println("schema is as migrated");
        }
      }
      return 0;
    } catch (FencingMigrationException e) {
      err.println(e.getMessage());
      return 1;
    }
  }
}
