package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.fencing.testing.TestDatabase;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The bad input catalogue (docs/BAD-INPUT.md), command-line entry point: {@code MigrateCommand.run}
 * with malformed and hostile arguments. Each case names its exit status and a fragment of stderr,
 * never throws, prints nothing to stdout, and creates nothing in the database (no schema, no
 * relation, no role of a hostile name).
 */
class BadInputCliTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final String URL = "$URL";
  private static final String USER = "$USER";

  static Stream<Arguments> badCommands() {
    return Stream.of(
        bad("B86", "no arguments", List.of(), 2, "usage: java -jar fencing-migrations-cli.jar"),
        bad("B87", "unknown command", List.of("drop", "--url", URL), 2, "unknown command drop"),
        bad(
            "B88",
            "command in upper case",
            List.of("MIGRATE", "--url", URL),
            2,
            "unknown command MIGRATE"),
        bad(
            "B89",
            "unknown option, before --url",
            List.of("migrate", "--force", "yes"),
            2,
            "unknown option --force"),
        bad(
            "B90",
            "option without its value at the end",
            List.of("migrate", "--url"),
            2,
            "option --url needs a value"),
        bad(
            "B91",
            "option whose value is the next option",
            List.of("migrate", "--url", "--user", USER),
            2,
            "option --url needs a value"),
        bad(
            "B92",
            "stray positional argument",
            List.of("migrate", "now", "--url", URL),
            2,
            "unexpected argument now"),
        bad(
            "B93",
            "option given twice",
            List.of("migrate", "--url", URL, "--schema", "a", "--schema", "b"),
            2,
            "option --schema is given twice"),
        bad(
            "B94",
            "URL of another driver",
            List.of("migrate", "--url", "jdbc:mysql://h/db"),
            2,
            "--url jdbc:postgresql://... is required"),
        bad(
            "B95",
            "URL with a port that is not a number",
            List.of("migrate", "--url", "jdbc:postgresql://127.0.0.1:port/db"),
            2,
            "bad --url"),
        bad(
            "B96",
            "SQL injection as schema",
            List.of(
                "migrate",
                "--url",
                URL,
                "--user",
                USER,
                "--schema",
                "fencing; DROP SCHEMA public CASCADE"),
            2,
            "schema must be a lower-case SQL identifier"),
        bad(
            "B97",
            "quoting trick as application role",
            List.of("migrate", "--url", URL, "--user", USER, "--app-role", "app\" SUPERUSER --"),
            2,
            "applicationRole must be a lower-case SQL identifier"),
        bad(
            "B98",
            "owner role of 64 characters",
            List.of("migrate", "--url", URL, "--user", USER, "--owner-role", "o".repeat(64)),
            2,
            "ownerRole must be a lower-case SQL identifier of at most 63 characters"),
        bad(
            "B99",
            "NUL byte in schema",
            List.of("info", "--url", URL, "--user", USER, "--schema", "fen\u0000cing"),
            2,
            "schema must be a lower-case SQL identifier"),
        bad(
            "B100",
            "database that does not exist",
            List.of("validate", "--url", "$URL_missing", "--user", USER),
            1,
            "_missing"),
        bad(
            "B118",
            "--verbose given twice",
            List.of("migrate", "--verbose", "--url", URL, "--verbose"),
            2,
            "option --verbose is given twice"),
        bad(
            "B101",
            "validate a database that was never migrated",
            List.of("validate", "--url", URL, "--user", USER),
            1,
            "fencing schema fencing is not as migrated"));
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("badCommands")
  void exitsWithStatusAndMessageAndCreatesNothing(
      String id, String label, List<String> args, int status, String stderr) throws SQLException {
    List<String> before = databaseObjects();
    String[] resolved =
        args.stream()
            .map(a -> a.replace(URL, db.jdbcUrl()).replace(USER, db.user()))
            .toArray(String[]::new);

    CommandRun run = CommandRun.of(db, resolved);

    assertThat(run.status()).as("%s: %s", id, run.err()).isEqualTo(status);
    assertThat(run.err()).as(id).contains(stderr);
    assertThat(run.out()).as(id).isEmpty();
    assertThat(databaseObjects()).as(id).isEqualTo(before);
  }

  @Test
  @DisplayName("B85 FencingMigrations.builder: null, hostile names, equal roles")
  void builderRefusesBadConfiguration() throws SQLException {
    List<String> before = databaseObjects();
    assertThatThrownBy(() -> FencingMigrations.builder(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("dataSource");
    FencingMigrations.Builder builder = FencingMigrations.builder(db.dataSource());
    assertThatThrownBy(() -> builder.schema("fencing; DROP SCHEMA public CASCADE"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("schema must be a lower-case SQL identifier");
    assertThatThrownBy(() -> builder.applicationRole("\"app\""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("applicationRole must be a lower-case SQL identifier");
    assertThatThrownBy(() -> builder.ownerRole(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("ownerRole");
    assertThatThrownBy(() -> builder.applicationRole("same").ownerRole("same").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("applicationRole and ownerRole must differ");
    assertThat(databaseObjects()).isEqualTo(before);
  }

  @Test
  @DisplayName("B102 a hostile role name reaches no CREATE ROLE")
  void hostileRoleCreatesNoRole() throws SQLException {
    CommandRun run =
        CommandRun.of(
            db,
            "migrate",
            "--url",
            db.jdbcUrl(),
            "--user",
            db.user(),
            "--owner-role",
            "x; CREATE ROLE evil_w7b SUPERUSER");
    assertThat(run.status()).isEqualTo(2);
    assertThat(run.err()).contains("ownerRole must be a lower-case SQL identifier");
    try (Connection c = db.connect()) {
      assertThat(FenceSql.longValue(c, "SELECT count(*) FROM pg_roles WHERE rolname LIKE 'evil%'"))
          .isZero();
    }
  }

  @Test
  @DisplayName("B119 migrate as a deployer that may not create roles, when the roles are missing")
  void deployerWithoutCreateroleIsToldWhatToAskFor() throws SQLException {
    String deployer = FenceSql.unique("deployer");
    String owner = FenceSql.unique("owner");
    String app = FenceSql.unique("app");
    try (Connection c = db.connect()) {
      FenceSql.run(c, "CREATE ROLE " + deployer + " LOGIN NOSUPERUSER NOCREATEROLE");
      FenceSql.run(c, "GRANT CREATE ON DATABASE " + db.name() + " TO " + deployer);
    }
    try {
      List<String> before = databaseObjects();
      CommandRun run =
          CommandRun.of(
              db,
              "migrate",
              "--url",
              db.jdbcUrl(),
              "--user",
              deployer,
              "--owner-role",
              owner,
              "--app-role",
              app);
      assertThat(run.status()).as(run.err()).isEqualTo(1);
      assertThat(run.err())
          .contains("fencing migrations refused, nothing was created")
          .contains("role " + owner + " does not exist, and " + deployer + " may not create roles")
          .contains("GRANT " + owner + " TO " + deployer)
          .endsWith("\n");
      assertThat(run.out()).isEmpty();
      assertThat(databaseObjects()).isEqualTo(before);
      try (Connection c = db.connect()) {
        assertThat(
                FenceSql.longValue(
                    c, "SELECT count(*) FROM pg_roles WHERE rolname IN (?, ?)", owner, app))
            .isZero();
      }
    } finally {
      try (Connection c = db.connect()) {
        FenceSql.run(c, "REVOKE CREATE ON DATABASE " + db.name() + " FROM " + deployer);
        FenceSql.run(c, "DROP ROLE " + deployer);
      }
    }
  }

  @Test
  @DisplayName("B120 migrate with roles that already serve another database")
  void rolesOfAnotherDatabaseAreRefused() throws SQLException {
    try (TestDatabase other = TestDatabase.create("bad_input_cli_other")) {
      FencingMigrations.builder(other.dataSource())
          .ownerRole(other.ownerRole())
          .applicationRole(other.appRole())
          .build()
          .migrate();
      List<String> before = databaseObjects();
      CommandRun run =
          CommandRun.of(
              db,
              "migrate",
              "--url",
              db.jdbcUrl(),
              "--user",
              db.user(),
              "--owner-role",
              other.ownerRole(),
              "--app-role",
              other.appRole());
      assertThat(run.status()).as(run.err()).isEqualTo(1);
      assertThat(run.err())
          .contains("already serve another database")
          .contains("(database " + other.name() + ")")
          .contains("--owner-role NAME --app-role NAME");
      assertThat(run.out()).isEmpty();
      assertThat(databaseObjects()).isEqualTo(before);
    }
  }

  // ---------------------------------------------------------------------------------------------

  /** The schemas and relations of the test database. */
  private static List<String> databaseObjects() throws SQLException {
    try (Connection c = db.connect()) {
      return FenceSql.strings(
          c,
          "SELECT n.nspname || '.' || coalesce(c.relname, '') FROM pg_namespace n"
              + " LEFT JOIN pg_class c ON c.relnamespace = n.oid"
              + " WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')"
              + " AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%'"
              + " ORDER BY 1");
    }
  }

  private static Arguments bad(
      String id, String label, List<String> args, int status, String stderr) {
    return arguments(id, label, args, status, stderr);
  }
}
