package dev.fencing.migrations;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
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

  private MigrateCommand() {}

  /** Runs the command and exits with its status. */
  public static void main(String[] args) {
    System.exit(run(args, System.getenv("FENCING_DB_PASSWORD"), System.out, System.err));
  }

  static int run(String[] args, @Nullable String password, PrintStream out, PrintStream err) {
    if (args.length == 0 || !List.of("migrate", "info", "validate").contains(args[0])) {
      err.println(USAGE);
      return 2;
    }
    String url = null;
    String user = null;
    FencingMigrations.Builder builder;
    FencingMigrations migrations;
    List<String[]> options = new ArrayList<>();
    for (int i = 1; i < args.length; i += 2) {
      if (i + 1 >= args.length) {
        err.println("option " + args[i] + " needs a value\n" + USAGE);
        return 2;
      }
      options.add(new String[] {args[i], args[i + 1]});
    }
    for (String[] o : options) {
      if (o[0].equals("--url")) {
        url = o[1];
      } else if (o[0].equals("--user")) {
        user = o[1];
      }
    }
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
      for (String[] o : options) {
        switch (o[0]) {
          case "--url", "--user" -> {}
          case "--schema" -> builder.schema(o[1]);
          case "--app-role" -> builder.applicationRole(o[1]);
          case "--owner-role" -> builder.ownerRole(o[1]);
          default -> {
            err.println("unknown option " + o[0] + "\n" + USAGE);
            return 2;
          }
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
