package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Applying, re-applying and checking the fence's schema: beside an application's own Flyway
 * history, in a custom schema, after tampering, and through the command line. Every test method
 * gets a fresh, empty database.
 */
class MigrationsTest {
  /** Instance field: a new database for every test method (and every parameterised case). */
  @RegisterExtension final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final List<String> TABLES =
      List.of(
          "resource",
          "lease",
          "issuance",
          "rejection",
          "catalog_checksum",
          "token_seq",
          "protected_table",
          "marker_secret",
          "cluster_epoch",
          "protection_change",
          "external_reset");
  private static final List<String> FUNCTIONS =
      List.of(
          "issue_token(bigint)",
          "advance_epoch()",
          "epoch_status()",
          "check_token(text,bigint)",
          "check_tokens(text[],bigint[])",
          "check_tokens_if_written(text[],bigint[])",
          "check_one(text,bigint)",
          "try_acquire(text,text,interval,interval)",
          "renew(text,bigint,interval)",
          "release(text,bigint)",
          "create_resource(text,boolean,boolean)",
          "status(text)",
          "record_rejection(text)",
          "reset_external(text,bigint)",
          "advance_sequence(bigint)",
          "carry(text,bigint)",
          "protect(regclass,text)",
          "protect_rows(regclass,text,text)",
          "protect_rows_per_row(regclass,text,text)",
          "unprotect(regclass)");

  // ---------------------------------------------------------------------------------------------
  // Migrate
  // ---------------------------------------------------------------------------------------------

  @Test
  void appliesToAnEmptyDatabase() throws SQLException {
    assertThat(Fence.migrate(db)).isEqualTo(Fence.MIGRATIONS);
    try (Connection c = db.connect()) {
      assertSchemaExists(c, "fencing");
      assertThat(
              FenceSql.strings(
                  c,
                  "SELECT version || ' ' || success FROM fencing.fencing_schema_history"
                      + " WHERE version IS NOT NULL ORDER BY installed_rank"))
          .containsExactlyElementsOf(Fence.VERSIONS.stream().map(v -> v + " true").toList());
    }
    assertInfoShowsAllSuccessfulMigrations(Fence.migrations(db).info());
    Fence.migrations(db).validate();
  }

  @Test
  void reRunningMigrateAppliesNothingAndChangesNothing() throws SQLException {
    DataSource ds = db.dataSource();
    assertThat(Fence.migrations(db).migrate()).isEqualTo(Fence.MIGRATIONS);
    List<String> before;
    try (Connection c = db.connect()) {
      before = schemaState(c);
    }
    assertThat(Fence.migrations(db).migrate()).isZero();
    assertThat(Fence.migrations(db).migrate()).isZero();
    try (Connection c = db.connect()) {
      assertThat(schemaState(c)).isEqualTo(before);
    }
    Fence.migrations(db).validate();
  }

  @ParameterizedTest(name = "application first: {0}")
  @ValueSource(booleans = {true, false})
  void appliesBesideAnApplicationsOwnFlywayHistory(boolean applicationFirst) throws SQLException {
    DataSource ds = db.dataSource();
    Flyway app =
        Flyway.configure(MigrationsTest.class.getClassLoader())
            .dataSource(ds)
            .schemas("public")
            .defaultSchema("public")
            .locations("classpath:db/app")
            .load();
    if (applicationFirst) {
      assertThat(app.migrate().migrationsExecuted).isEqualTo(1);
      assertThat(Fence.migrations(db).migrate()).isEqualTo(Fence.MIGRATIONS);
    } else {
      assertThat(Fence.migrations(db).migrate()).isEqualTo(Fence.MIGRATIONS);
      assertThat(app.migrate().migrationsExecuted).isEqualTo(1);
    }
    // and again, in the other order: nothing left to do for either
    assertThat(Fence.migrations(db).migrate()).isZero();
    assertThat(app.migrate().migrationsExecuted).isZero();

    MigrationInfo[] appInfo = app.info().all();
    assertThat(appInfo).hasSize(1);
    assertThat(appInfo[0].getVersion().getVersion()).isEqualTo("1");
    assertThat(appInfo[0].getState()).isEqualTo(MigrationState.SUCCESS);
    assertThat(app.validateWithResult().validationSuccessful).isTrue();
    assertInfoShowsAllSuccessfulMigrations(Fence.migrations(db).info());
    Fence.migrations(db).validate();

    try (Connection c = db.connect()) {
      assertThat(
              FenceSql.strings(
                  c,
                  "SELECT version || ' ' || description || ' ' || success"
                      + " FROM public.flyway_schema_history WHERE version IS NOT NULL"))
          .containsExactly("1 app schema true");
      assertThat(
              FenceSql.strings(
                  c,
                  "SELECT version || ' ' || description || ' ' || success"
                      + " FROM fencing.fencing_schema_history WHERE version IS NOT NULL"
                      + " ORDER BY installed_rank"))
          .containsExactly(
              "1 fencing tables true",
              "2 fencing functions true",
              "3 protected tables true",
              "4 protect new partitions true",
              "5 refuse hostile input true",
              "6 fast accept path true",
              "7 record lease lost refusals true",
              "8 safety defects found by attacking the fence true",
              "9 rejections for the application true",
              "10 accept path at the floor true",
              "11 check tokens with commit true",
              "12 token epochs true",
              "13 protected tables at the floor true",
              "14 issuance without replanning true",
              "15 flat accept path true",
              "16 issuance without epoch row lock true",
              "17 has protected clears true",
              "18 protect rows per row true",
              "19 lean accept path true",
              "20 lease at the floor true",
              "21 check one true",
              "23 intervals without months true",
              "26 lease with less server work true",
              "27 lease reading what it uses true",
              "28 check keyed by name true",
              "29 lease issuing in line true",
              "30 carried check without a call true",
              "32 leftovers of the reviews true",
              "34 negative key space returned true",
              "35 protect flag retries true",
              "36 protected inheritance true",
              "37 held cursor check true",
              "38 issuance lock no role can take true",
              "39 epochs a lost history cannot reach true",
              "40 advance sequence within the epoch true",
              "41 past the last epoch said plainly true",
              "42 edges said plainly true",
              "43 external snapshot retries true",
              "44 arguments judged in one order true",
              "45 read only transactions judged true");
      assertThat(FenceSql.string(c, "SELECT to_regclass('public.app_item')::text"))
          .isEqualTo("app_item");
      // each history stays in its own schema
      assertThat(FenceSql.string(c, "SELECT to_regclass('fencing.flyway_schema_history')::text"))
          .isNull();
      assertThat(FenceSql.string(c, "SELECT to_regclass('public.fencing_schema_history')::text"))
          .isNull();
      assertThat(FenceSql.string(c, "SELECT to_regclass('public.resource')::text")).isNull();
    }
  }

  @Test
  void customSchemaWorksEndToEnd() throws SQLException {
    DataSource ds = db.dataSource();
    FencingMigrations locks =
        FencingMigrations.builder(db.migrationDataSource())
            .ownerRole(db.ownerRole())
            .applicationRole(db.appRole())
            .schema("locks")
            .build();
    assertThat(locks.migrate()).isEqualTo(Fence.MIGRATIONS);
    assertInfoShowsAllSuccessfulMigrations(locks.info());
    locks.validate();
    try (Connection c = db.connect()) {
      assertSchemaExists(c, "locks");
      assertThat(FenceSql.string(c, "SELECT to_regnamespace('fencing')::text")).isNull();
      assertThat(FenceSql.longValue(c, "SELECT count(*) FROM locks.fencing_schema_history"))
          .isGreaterThanOrEqualTo(2);

      long first;
      try (var ps =
              FenceSql.prepare(
                  c,
                  "SELECT acquired, token, holder FROM locks.try_acquire(?, ?, interval '1 minute')",
                  "custom/r",
                  "worker-1");
          var rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getBoolean(1)).isTrue();
        first = rs.getLong(2);
        assertThat(first).isPositive();
        assertThat(rs.getString(3)).isEqualTo("worker-1");
      }
      assertThat(FenceSql.longValue(c, "SELECT locks.check_token(?, ?)", "custom/r", first))
          .isEqualTo(first);
      assertThat(FenceSql.status(c, "locks", "custom/r").maxSeen()).isEqualTo(first);
      assertThat(FenceSql.string(c, "SELECT locks.release(?, ?)::text", "custom/r", first))
          .isEqualTo("true");
      long second =
          FenceSql.longValue(
              c,
              "SELECT token FROM locks.try_acquire(?, ?, interval '1 minute')",
              "custom/r",
              "worker-2");
      assertThat(second).isGreaterThan(first);
      Fence.assertFails(
          Fence.STALE, () -> FenceSql.run(c, "SELECT locks.check_token(?, ?)", "custom/r", first));
      assertThat(FenceSql.longValue(c, "SELECT count(*) FROM locks.issuance")).isEqualTo(2);
      assertThat(
              FenceSql.string(
                  c,
                  "SELECT bool_and(prosecdef AND proowner = ?::regrole)::text"
                      + " FROM pg_proc WHERE pronamespace = 'locks'::regnamespace"
                      + " AND has_function_privilege(?, oid, 'EXECUTE')",
                  db.ownerRole(),
                  db.appRole()))
          .isEqualTo("true");
    }
    // the default configuration sees nothing of it
    assertThatThrownBy(() -> Fence.migrations(db).validate())
        .isInstanceOf(FencingMigrationException.class);
    locks.validate();
  }

  // ---------------------------------------------------------------------------------------------
  // Validate
  // ---------------------------------------------------------------------------------------------

  static Stream<Arguments> tampering() {
    return Stream.of(
        arguments(
            "function body replaced",
            "CREATE OR REPLACE FUNCTION fencing.check_token(p_resource text, p_token bigint)"
                + " RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER"
                + " SET search_path = pg_catalog, pg_temp"
                + " AS $$ BEGIN RETURN p_token; END $$",
            List.of("function fencing.check_token(text,bigint) was changed since migration")),
        arguments(
            "SECURITY INVOKER",
            "ALTER FUNCTION fencing.renew(text, bigint, interval) SECURITY INVOKER",
            List.of("function fencing.renew(text,bigint,interval) was changed since migration")),
        arguments(
            "search_path reset",
            "ALTER FUNCTION fencing.release(text, bigint) RESET search_path",
            List.of("function fencing.release(text,bigint) was changed since migration")),
        arguments(
            "UPDATE granted to PUBLIC",
            "GRANT UPDATE ON fencing.resource TO PUBLIC",
            List.of("relation fencing.resource was changed since migration")),
        arguments(
            "operator function granted to the application",
            "GRANT EXECUTE ON FUNCTION fencing.advance_sequence(bigint) TO $APP",
            List.of("function fencing.advance_sequence(bigint) was changed since migration")),
        arguments(
            "table given to the application role",
            "ALTER TABLE fencing.lease OWNER TO $APP",
            List.of("relation fencing.lease was changed since migration")),
        arguments(
            "constraint added",
            "ALTER TABLE fencing.issuance ADD CONSTRAINT evil CHECK (true)",
            List.of("relation fencing.issuance was changed since migration")),
        arguments(
            "sequence CACHE 20",
            "ALTER SEQUENCE fencing.token_seq CACHE 20",
            List.of(
                "relation fencing.token_seq was changed since migration",
                "token sequence is not CACHE 1")),
        arguments(
            "sequence CYCLE",
            "ALTER SEQUENCE fencing.token_seq CYCLE",
            List.of(
                "relation fencing.token_seq was changed since migration",
                "token sequence is not NO CYCLE")),
        arguments(
            "sequence UNLOGGED",
            "ALTER SEQUENCE fencing.token_seq SET UNLOGGED",
            List.of(
                "relation fencing.token_seq was changed since migration",
                "token sequence is not logged")),
        arguments(
            "function added",
            "CREATE FUNCTION fencing.backdoor() RETURNS int LANGUAGE sql AS 'SELECT 1'",
            List.of("function fencing.backdoor() was added since migration")),
        arguments(
            "function dropped",
            "DROP FUNCTION fencing.advance_sequence(bigint)",
            List.of("function fencing.advance_sequence(bigint) was dropped since migration")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("tampering")
  void validateNamesTheTamperedObject(String label, String tamper, List<String> expected)
      throws SQLException {
    DataSource ds = db.dataSource();
    assertThat(Fence.migrations(db).migrate()).isEqualTo(Fence.MIGRATIONS);
    Fence.migrations(db).validate();
    try (Connection c = db.connect()) {
      FenceSql.run(c, tamper.replace("$APP", db.appRole()));
    }
    FencingMigrationException e =
        catchThrowableOfType(
            FencingMigrationException.class, () -> Fence.migrations(db).validate());
    assertThat((Throwable) e).as(label).isNotNull();
    assertThat(e.getMessage())
        .as(label)
        .startsWith("fencing schema fencing is not as migrated: ")
        .contains(expected);

    // a migrate that applies nothing must not bless the tampered object
    assertThat(Fence.migrations(db).migrate()).isZero();
    assertThatThrownBy(() -> Fence.migrations(db).validate())
        .as(label + ", after a migrate")
        .isInstanceOf(FencingMigrationException.class)
        .hasMessageContaining(expected.get(0));
  }

  @Test
  void validateDetectsAChangedMigrationChecksum() throws SQLException {
    DataSource ds = db.dataSource();
    assertThat(Fence.migrations(db).migrate()).isEqualTo(Fence.MIGRATIONS);
    try (Connection c = db.connect()) {
      FenceSql.run(
          c,
          "UPDATE fencing.fencing_schema_history SET checksum = coalesce(checksum, 0) + 1"
              + " WHERE version = '2'");
    }
    assertThatThrownBy(() -> Fence.migrations(db).validate())
        .isInstanceOf(FencingMigrationException.class)
        .hasMessageContaining("fencing schema fencing is not as migrated")
        .hasMessageContaining("migration 2")
        .hasMessageContainingAll("checksum", "mismatch");
  }

  @Test
  void validateFailsOnADatabaseThatWasNeverMigrated() {
    assertThatThrownBy(() -> Fence.migrations(db).validate())
        .isInstanceOf(FencingMigrationException.class)
        .hasMessageContaining("fencing schema fencing is not as migrated");
  }

  // ---------------------------------------------------------------------------------------------
  // Builder
  // ---------------------------------------------------------------------------------------------

  static Stream<Arguments> badIdentifiers() {
    List<Arguments> cases = new ArrayList<>();
    for (String field : List.of("schema", "applicationRole", "ownerRole")) {
      for (String value :
          List.of(
              "Locks",
              "LOCKS",
              "lo\"cks",
              "\"locks\"",
              "lo'cks",
              "",
              " ",
              "x".repeat(64),
              "1locks",
              "lock-s",
              "lock s",
              "locks;drop",
              "l\u00f6cks")) {
        cases.add(arguments(field, value));
      }
    }
    return cases.stream();
  }

  @ParameterizedTest(name = "{0} = ''{1}''")
  @MethodSource("badIdentifiers")
  void builderRejectsBadIdentifiersNamingTheField(String field, String value) {
    FencingMigrations.Builder builder = FencingMigrations.builder(new PGSimpleDataSource());
    Consumer<String> setter =
        switch (field) {
          case "schema" -> builder::schema;
          case "applicationRole" -> builder::applicationRole;
          default -> builder::ownerRole;
        };
    assertThatThrownBy(() -> setter.accept(value))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(field + " ")
        .hasMessageContaining("'" + value + "'");
  }

  @Test
  void builderAcceptsTheLongestIdentifierAndRejectsEqualRoles() {
    String longest = "x".repeat(63);
    assertThatCode(
            () ->
                FencingMigrations.builder(new PGSimpleDataSource())
                    .schema(longest)
                    .applicationRole("_app_" + "1".repeat(58))
                    .ownerRole(longest)
                    .build())
        .doesNotThrowAnyException();

    assertThatThrownBy(
            () ->
                FencingMigrations.builder(new PGSimpleDataSource())
                    .applicationRole("same_role")
                    .ownerRole("same_role")
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContainingAll("applicationRole", "ownerRole", "same_role");
    assertThatThrownBy(
            () ->
                FencingMigrations.builder(new PGSimpleDataSource())
                    .applicationRole(FencingMigrations.DEFAULT_OWNER_ROLE)
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContainingAll("applicationRole", "ownerRole");
    assertThatThrownBy(() -> FencingMigrations.builder(new PGSimpleDataSource()).schema(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("schema");
  }

  // ---------------------------------------------------------------------------------------------
  // MigrateCommand
  // ---------------------------------------------------------------------------------------------

  static Stream<Arguments> usageErrors() {
    return Stream.of(
        arguments("no arguments", List.of()),
        arguments("unknown command", List.of("frobnicate", "--url", "jdbc:postgresql://x/y")),
        arguments("no --url", List.of("migrate")),
        arguments("option without value", List.of("migrate", "--url")),
        arguments("not a PostgreSQL URL", List.of("info", "--url", "jdbc:mysql://localhost/db")),
        arguments(
            "unknown option",
            List.of("validate", "--url", "jdbc:postgresql://localhost/db", "--bogus", "x")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("usageErrors")
  void commandUsageErrorsExitWithTwoAndPrintUsage(String label, List<String> args) {
    CommandRun run = CommandRun.of(db, args.toArray(new String[0]));
    assertThat(run.status()).as(label).isEqualTo(2);
    assertThat(run.err()).as(label).contains(MigrateCommand.USAGE);
    assertThat(run.out()).as(label).isEmpty();
  }

  @Test
  void commandHelpPrintsTheUsageToStdoutAndEveryUsageEndsWithANewline() {
    CommandRun help = CommandRun.of(db, "--help");
    assertThat(help.status()).isZero();
    assertThat(help.out()).isEqualTo(MigrateCommand.USAGE).endsWith("\n");
    assertThat(help.out())
        .contains("--owner-role NAME", "--app-role NAME", "--verbose", "migrate", "validate");
    assertThat(help.err()).isEmpty();
    assertThat(CommandRun.of(db, "migrate", "--url", db.jdbcUrl(), "-h").out())
        .isEqualTo(MigrateCommand.USAGE);
    CommandRun bad = CommandRun.of(db, "migrate");
    assertThat(bad.status()).isEqualTo(2);
    assertThat(bad.err()).endsWith(MigrateCommand.USAGE).endsWith("\n");
  }

  @Test
  void commandRejectsBadNamesWithTwoAndMigratesNothing() throws SQLException {
    CommandRun badSchema = CommandRun.of(db, "migrate", "--url", db.jdbcUrl(), "--schema", "Locks");
    assertThat(badSchema.status()).isEqualTo(2);
    assertThat(badSchema.err()).contains("schema must be").contains("'Locks'");

    CommandRun badRole =
        CommandRun.of(db, "migrate", "--url", db.jdbcUrl(), "--app-role", "app-role");
    assertThat(badRole.status()).isEqualTo(2);
    assertThat(badRole.err()).contains("applicationRole must be");

    try (Connection c = db.connect()) {
      assertThat(
              FenceSql.longValue(
                  c,
                  "SELECT count(*) FROM pg_namespace WHERE nspname IN ('fencing', 'Locks', 'locks')"))
          .isZero();
    }
  }

  @Test
  void commandRejectsEqualRolesAsAUsageError() throws SQLException {
    AtomicReference<CommandRun> run = new AtomicReference<>();
    assertThatCode(
            () ->
                run.set(
                    CommandRun.of(
                        db,
                        "migrate",
                        "--url",
                        db.jdbcUrl(),
                        "--user",
                        db.user(),
                        "--app-role",
                        "same_role",
                        "--owner-role",
                        "same_role")))
        .as("MigrateCommand.run must report a bad combination of options, not throw")
        .doesNotThrowAnyException();
    assertThat(run.get().status()).isEqualTo(2);
    assertThat(run.get().err()).contains("applicationRole", "ownerRole");
    try (Connection c = db.connect()) {
      assertThat(FenceSql.string(c, "SELECT to_regnamespace('fencing')::text")).isNull();
    }
  }

  @Test
  void commandMigratesInformsAndValidates() throws SQLException {
    String url = db.jdbcUrl();
    CommandRun migrate =
        CommandRun.of(
            db,
            "migrate",
            "--url",
            url,
            "--user",
            db.user(),
            "--owner-role",
            db.ownerRole(),
            "--app-role",
            db.appRole());
    assertThat(migrate.status()).as(migrate.err()).isZero();
    assertThat(migrate.out()).contains("applied " + Fence.MIGRATIONS + " migration(s)");

    CommandRun again =
        CommandRun.of(
            db,
            "migrate",
            "--url",
            url,
            "--user",
            db.user(),
            "--owner-role",
            db.ownerRole(),
            "--app-role",
            db.appRole());
    assertThat(again.status()).isZero();
    assertThat(again.out()).contains("applied 0 migration(s)");

    CommandRun info =
        CommandRun.of(
            db,
            "info",
            "--url",
            url,
            "--user",
            db.user(),
            "--owner-role",
            db.ownerRole(),
            "--app-role",
            db.appRole());
    assertThat(info.status()).as(info.err()).isZero();
    assertInfoShowsAllSuccessfulMigrations(info.out().lines().toList());

    CommandRun valid =
        CommandRun.of(
            db,
            "validate",
            "--url",
            url,
            "--user",
            db.user(),
            "--owner-role",
            db.ownerRole(),
            "--app-role",
            db.appRole());
    assertThat(valid.status()).as(valid.err()).isZero();
    assertThat(valid.out()).contains("schema is as migrated");

    try (Connection c = db.connect()) {
      FenceSql.run(c, "ALTER FUNCTION fencing.check_token(text, bigint) SECURITY INVOKER");
    }
    CommandRun tampered =
        CommandRun.of(
            db,
            "validate",
            "--url",
            url,
            "--user",
            db.user(),
            "--owner-role",
            db.ownerRole(),
            "--app-role",
            db.appRole());
    assertThat(tampered.status()).isEqualTo(1);
    assertThat(tampered.err())
        .contains("function fencing.check_token(text,bigint) was changed since migration");
    assertThat(tampered.out()).doesNotContain("schema is as migrated");
  }

  @Test
  void commandWithACustomSchemaMigratesThatSchema() throws SQLException {
    CommandRun migrate =
        CommandRun.of(
            db,
            "migrate",
            "--url",
            db.jdbcUrl(),
            "--user",
            db.user(),
            "--schema",
            "locks",
            "--owner-role",
            db.ownerRole(),
            "--app-role",
            db.appRole());
    assertThat(migrate.status()).as(migrate.err()).isZero();
    assertThat(migrate.out()).contains("applied " + Fence.MIGRATIONS + " migration(s)");
    assertThat(
            CommandRun.of(
                    db,
                    "validate",
                    "--url",
                    db.jdbcUrl(),
                    "--user",
                    db.user(),
                    "--schema",
                    "locks",
                    "--owner-role",
                    db.ownerRole(),
                    "--app-role",
                    db.appRole())
                .status())
        .isZero();
    try (Connection c = db.connect()) {
      assertSchemaExists(c, "locks");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"migrate", "info", "validate"})
  void commandExitsWithOneWhenTheDatabaseRefuses(String action) {
    String missing = db.jdbcUrl().replace(db.name(), db.name() + "_missing");
    AtomicReference<CommandRun> run = new AtomicReference<>();
    assertThatCode(() -> run.set(CommandRun.of(db, action, "--url", missing, "--user", db.user())))
        .as("%s on a database that does not exist must exit with 1, not throw", action)
        .doesNotThrowAnyException();
    assertThat(run.get().status()).isEqualTo(1);
    assertThat(run.get().err()).contains(db.name() + "_missing");
  }

  // ---------------------------------------------------------------------------------------------

  private static void assertInfoShowsAllSuccessfulMigrations(List<String> info) {
    List<String> versioned = info.stream().filter(line -> line.matches("^[0-9]+\\s.*")).toList();
    assertThat(versioned).as(String.join("\n", info)).hasSize(Fence.MIGRATIONS);
    assertThat(versioned.get(0)).startsWith("1 ").contains("fencing tables").contains("Success");
    assertThat(versioned.get(1)).startsWith("2 ").contains("fencing functions").contains("Success");
    assertThat(versioned.get(2)).startsWith("3 ").contains("protected tables").contains("Success");
    assertThat(versioned.get(3))
        .startsWith("4 ")
        .contains("protect new partitions")
        .contains("Success");
    assertThat(versioned.get(4))
        .startsWith("5 ")
        .contains("refuse hostile input")
        .contains("Success");
    assertThat(versioned.get(5)).startsWith("6 ").contains("fast accept path").contains("Success");
    assertThat(versioned.get(6))
        .startsWith("7 ")
        .contains("record lease lost refusals")
        .contains("Success");
    assertThat(versioned.get(7)).startsWith("8 ").contains("safety defects").contains("Success");
    assertThat(versioned.get(8))
        .startsWith("9 ")
        .contains("rejections for the application")
        .contains("Success");
    assertThat(versioned.get(9))
        .startsWith("10 ")
        .contains("accept path at the floor")
        .contains("Success");
    assertThat(versioned.get(10))
        .startsWith("11 ")
        .contains("check tokens with commit")
        .contains("Success");
    assertThat(versioned.get(11)).startsWith("12 ").contains("token epochs").contains("Success");
    assertThat(info)
        .as(String.join("\n", info))
        .allSatisfy(line -> assertThat(line).doesNotContain("Pending", "Failed"));
  }

  private static void assertSchemaExists(Connection c, String schema) throws SQLException {
    for (String table : TABLES) {
      assertThat(FenceSql.string(c, "SELECT to_regclass(?)::text", schema + "." + table))
          .as("%s.%s", schema, table)
          .isNotNull();
    }
    for (String function : FUNCTIONS) {
      assertThat(FenceSql.string(c, "SELECT to_regprocedure(?)::text", schema + "." + function))
          .as("%s.%s", schema, function)
          .isNotNull();
    }
    assertThat(
            FenceSql.string(
                c,
                "SELECT concat_ws(' ', s.seqtypid::regtype, s.seqcache, s.seqcycle::text,"
                    + " c.relpersistence)"
                    + " FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid"
                    + " WHERE s.seqrelid = to_regclass(?)",
                schema + ".token_seq"))
        .isEqualTo("bigint 1 false p");
  }

  /** Everything a migrate could change: history, recorded fingerprints, catalog, grants. */
  private static List<String> schemaState(Connection c) throws SQLException {
    List<String> state = new ArrayList<>();
    state.addAll(
        FenceSql.strings(
            c,
            "SELECT concat_ws(' ', installed_rank, version, description, type, checksum,"
                + " installed_on, success) FROM fencing.fencing_schema_history"
                + " ORDER BY installed_rank"));
    state.addAll(
        FenceSql.strings(
            c,
            "SELECT concat_ws(' ', object, fingerprint, recorded_at) FROM fencing.catalog_checksum"
                + " ORDER BY object"));
    state.addAll(
        FenceSql.strings(
            c,
            "SELECT concat_ws(' ', object, fingerprint) FROM fencing.catalog_fingerprint()"
                + " ORDER BY object"));
    state.addAll(
        FenceSql.strings(
            c,
            "SELECT concat_ws(' ', c.oid::regclass, c.relowner::regrole, c.relacl)"
                + " FROM pg_class c WHERE c.relnamespace = 'fencing'::regnamespace ORDER BY 1"));
    state.add(
        FenceSql.string(c, "SELECT concat_ws(' ', last_value, is_called) FROM fencing.token_seq"));
    return state;
  }
}
