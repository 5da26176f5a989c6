package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.fencing.testing.TestDatabase;
import dev.fencing.testing.TestDatabaseExtension;
import dev.fencing.testing.TestPostgres;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Deploying the way teams deploy (issue 17): migrating as a superuser, as a non-superuser {@code
 * CREATEROLE} owner of the database (managed PostgreSQL's administrator), as a plain owner of the
 * database when the roles were created beforehand, and as a role that lacks a privilege: the error
 * names it and the database and cluster are left exactly as they were. Every test gets a fresh
 * database; the deployer roles are unique and dropped afterwards.
 */
class DeployerMigrationTest {
  @RegisterExtension final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final Duration TTL = Duration.ofMinutes(1);

  private final List<String> roles = new ArrayList<>();

  @AfterEach
  void dropRoles() throws SQLException {
    db.database().close(); // the database first: a deployer that owns it cannot be dropped
    try (Connection c = TestPostgres.get().adminConnection()) {
      for (int i = roles.size() - 1; i >= 0; i--) {
        FenceSql.run(c, "DROP ROLE IF EXISTS " + roles.get(i));
      }
    }
  }

  @Test
  void superuserMigratesWithTheEventTrigger() throws SQLException {
    FencingMigrations fence = migrations(db.dataSource());
    assertThat(fence.migrate()).isEqualTo(Fence.MIGRATIONS);
    assertThat(fence.validate()).isEmpty();
    assertThat(fence.absentOptionalFeatures()).isEmpty();
    assertFenceWorks();
  }

  @Test
  void createroleOwnerOfTheDatabaseMigratesWithoutSuperuser() throws SQLException {
    String deployer = role("LOGIN NOSUPERUSER CREATEROLE");
    ownDatabase(deployer);

    FencingMigrations fence = migrations(as(deployer));
    assertThat(fence.migrate()).isEqualTo(Fence.MIGRATIONS);

    assertSkippedOnlyTheEventTrigger(fence);
    assertThat(fence.migrate()).isZero();
    try (Connection c = db.connect()) {
      assertThat(
              FenceSql.string(
                  c,
                  "SELECT string_agg(DISTINCT relowner::regrole::text, ',') FROM pg_class"
                      + " WHERE relnamespace = 'fencing'::regnamespace"
                      + " AND relname IN ('resource', 'lease', 'issuance', 'rejection', 'token_seq')"))
          .isEqualTo(db.ownerRole());
    }
    assertFenceWorks();
  }

  @Test
  void ownerOfTheDatabaseMigratesWhenTheRolesExist() throws SQLException {
    String deployer = role("LOGIN NOSUPERUSER NOCREATEROLE");
    ownDatabase(deployer);
    try (Connection c = db.connect()) {
      FenceSql.run(c, "CREATE ROLE " + db.ownerRole() + " NOLOGIN NOINHERIT");
      FenceSql.run(c, "CREATE ROLE " + db.appRole() + " NOLOGIN");
      FenceSql.run(c, "GRANT " + db.ownerRole() + " TO " + deployer);
    }

    FencingMigrations fence = migrations(as(deployer));
    assertThat(fence.migrate()).isEqualTo(Fence.MIGRATIONS);
    assertSkippedOnlyTheEventTrigger(fence);
    assertFenceWorks();
  }

  /** A deployer, what it lacks, and what the error must say. */
  record Lacking(
      String label, String attributes, boolean ownsDatabase, String setUp, List<String> message) {
    @Override
    public String toString() {
      return label;
    }
  }

  static Stream<Arguments> lacking() {
    return Stream.of(
        arguments(
            new Lacking(
                "no CREATEROLE and no roles",
                "LOGIN NOSUPERUSER NOCREATEROLE",
                true,
                "",
                List.of(
                    "role $OWNER does not exist, and $DEPLOYER may not create roles (needs"
                        + " CREATEROLE)",
                    "CREATE ROLE $OWNER NOLOGIN NOINHERIT; CREATE ROLE $APP NOLOGIN;"
                        + " GRANT $OWNER TO $DEPLOYER;"))),
        arguments(
            new Lacking(
                "roles exist, not a member of the owner role, no CREATEROLE",
                "LOGIN NOSUPERUSER NOCREATEROLE",
                true,
                "CREATE ROLE $OWNER NOLOGIN NOINHERIT; CREATE ROLE $APP NOLOGIN",
                List.of("$DEPLOYER must be a member of role $OWNER", "GRANT $OWNER TO $DEPLOYER"))),
        arguments(
            new Lacking(
                "a member that does not inherit",
                "LOGIN NOSUPERUSER NOCREATEROLE NOINHERIT",
                true,
                "CREATE ROLE $OWNER NOLOGIN NOINHERIT; CREATE ROLE $APP NOLOGIN;"
                    + " GRANT $OWNER TO $DEPLOYER",
                List.of("$DEPLOYER", "$OWNER", "$INHERIT"))),
        arguments(
            new Lacking(
                "CREATEROLE but no CREATE on the database",
                "LOGIN NOSUPERUSER CREATEROLE",
                false,
                "",
                List.of(
                    "$DEPLOYER may not create schema fencing in database $DATABASE (needs CREATE on"
                        + " the database",
                    "GRANT CREATE ON DATABASE \"$DATABASE\" TO \"$DEPLOYER\""))),
        arguments(
            new Lacking(
                "a schema given to it that it may not share with the owner role",
                "LOGIN NOSUPERUSER CREATEROLE",
                false,
                "CREATE SCHEMA fencing; GRANT USAGE, CREATE ON SCHEMA fencing TO $DEPLOYER",
                List.of(
                    "role $OWNER needs CREATE on schema fencing",
                    "GRANT CREATE ON SCHEMA fencing TO $OWNER;"))));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("lacking")
  void aMissingPrivilegeIsNamedAndNothingIsLeftBehind(Lacking lacking) throws SQLException {
    String deployer = role(lacking.attributes());
    if (lacking.ownsDatabase()) {
      ownDatabase(deployer);
    }
    try (Connection c = db.connect()) {
      for (String sql : lacking.setUp().split(";")) {
        if (!sql.isBlank()) {
          FenceSql.run(c, placeholders(sql, deployer));
        }
      }
    }
    List<String> before = catalog(deployer);

    FencingMigrationException e =
        catchThrowableOfType(
            FencingMigrationException.class, () -> migrations(as(deployer)).migrate());

    assertThat((Throwable) e).as(lacking.label()).isNotNull();
    assertThat(e.getMessage())
        .as(lacking.label())
        .startsWith("fencing migrations refused, nothing was created: ")
        .contains(lacking.message().stream().map(m -> placeholders(m, deployer)).toList());
    assertThat(catalog(deployer)).as(lacking.label()).isEqualTo(before);
  }

  @Test
  void rolesThatServeAnotherDatabaseAreRefusedNamingTheOptions() throws SQLException {
    try (TestDatabase other = TestDatabase.create("deployer_other")) {
      String owner = db.ownerRole();
      String app = db.appRole();
      assertThat(
              FencingMigrations.builder(other.dataSource())
                  .ownerRole(owner)
                  .applicationRole(app)
                  .build()
                  .migrate())
          .isEqualTo(Fence.MIGRATIONS);
      List<String> before = catalog(db.user());

      assertThatThrownBy(() -> migrations(db.dataSource()).migrate())
          .isInstanceOf(FencingMigrationException.class)
          .hasMessageStartingWith("fencing migrations refused, nothing was created: ")
          .hasMessageContaining(
              "the roles " + owner + "/" + app + " already serve another database")
          .hasMessageContaining("(database " + other.name() + ")")
          .hasMessageContaining("--owner-role NAME --app-role NAME")
          .hasMessageContaining("FencingMigrations.Builder.ownerRole/applicationRole");
      assertThat(catalog(db.user())).isEqualTo(before);

      // with roles of its own, the second database migrates
      assertThat(
              FencingMigrations.builder(db.dataSource())
                  .ownerRole(db.ownerRole() + "2")
                  .applicationRole(db.appRole() + "2")
                  .build()
                  .migrate())
          .isEqualTo(Fence.MIGRATIONS);
      roles.add(db.ownerRole() + "2");
      roles.add(db.appRole() + "2");
      other.close(); // before dropping the roles that own objects in it
    }
  }

  @Test
  void validateTellsAnAbsentEventTriggerFromATamperedOne() throws SQLException {
    FencingMigrations fence = migrations(db.dataSource());
    fence.migrate();
    try (Connection c = db.connect()) {
      FenceSql.run(c, "ALTER EVENT TRIGGER fencing_protect_new_partitions DISABLE");
    }
    assertThatThrownBy(fence::validate)
        .isInstanceOf(FencingMigrationException.class)
        .hasMessageContaining("event trigger fencing_protect_new_partitions is disabled");
    try (Connection c = db.connect()) {
      FenceSql.run(c, "DROP EVENT TRIGGER fencing_protect_new_partitions");
    }
    assertThat(fence.validate())
        .singleElement()
        .asString()
        .startsWith("optional, absent: event trigger fencing_protect_new_partitions");
  }

  // ---------------------------------------------------------------------------------------------

  private void assertSkippedOnlyTheEventTrigger(FencingMigrations fence) throws SQLException {
    List<String> notes = fence.validate();
    assertThat(notes)
        .singleElement()
        .asString()
        .startsWith("optional, absent: event trigger fencing_protect_new_partitions")
        .contains("run protect() or protect_rows() on the table again");
    assertThat(fence.absentOptionalFeatures()).isEqualTo(notes);
    try (Connection c = db.connect()) {
      assertThat(
              FenceSql.longValue(
                  c,
                  "SELECT count(*) FROM pg_event_trigger"
                      + " WHERE evtname = 'fencing_protect_new_partitions'"))
          .isZero();
    }
  }

  /** The application's login, a member of the application role, can take a lease and write. */
  private void assertFenceWorks() throws SQLException {
    String login = role("LOGIN");
    try (Connection c = db.connect()) {
      FenceSql.run(c, "GRANT " + db.appRole() + " TO " + login);
    }
    try (Connection app = db.connect(login)) {
      long token = Fence.acquire(app, "deployed", "worker-1", TTL);
      assertThat(Fence.check(app, "deployed", token)).isEqualTo(token);
      assertThat(FenceSql.string(app, "SELECT fencing.release('deployed', ?)::text", token))
          .isEqualTo("true");
      long next = Fence.acquire(app, "deployed", "worker-2", TTL);
      Fence.assertFails(Fence.STALE, () -> Fence.check(app, "deployed", token));
      assertThat(next).isGreaterThan(token);
    }
  }

  /**
   * What a refused migration must not have changed: the database's schemas, the roles named after
   * it, their memberships and dependencies, and who may create in the database.
   */
  private List<String> catalog(String deployer) throws SQLException {
    try (Connection c = db.connect()) {
      List<String> lines = new ArrayList<>();
      lines.addAll(
          FenceSql.strings(
              c,
              "SELECT 'schema ' || nspname || ' ' || nspowner::regrole || ' '"
                  + " || coalesce(nspacl::text, '') FROM pg_namespace ORDER BY 1"));
      lines.addAll(
          FenceSql.strings(
              c,
              "SELECT 'role ' || rolname FROM pg_roles WHERE rolname IN (?, ?, ?) ORDER BY 1",
              db.ownerRole(),
              db.appRole(),
              deployer));
      lines.addAll(
          FenceSql.strings(
              c,
              "SELECT 'member ' || roleid::regrole || ' ' || member::regrole"
                  + " FROM pg_auth_members WHERE roleid::regrole::text IN (?, ?)"
                  + " OR member::regrole::text IN (?, ?) ORDER BY 1",
              db.ownerRole(),
              db.appRole(),
              db.ownerRole(),
              db.appRole()));
      lines.addAll(
          FenceSql.strings(
              c,
              "SELECT 'shdepend ' || dbid || ' ' || classid || ' ' || objid || ' ' || deptype::text"
                  + " FROM pg_shdepend WHERE refobjid::regrole::text IN (?, ?) ORDER BY 1",
              db.ownerRole(),
              db.appRole()));
      lines.addAll(
          FenceSql.strings(
              c,
              "SELECT 'database ' || datdba::regrole || ' ' || coalesce(datacl::text, '')"
                  + " FROM pg_database WHERE datname = current_database()"));
      lines.addAll(
          FenceSql.strings(
              c,
              "SELECT 'relation ' || oid::regclass FROM pg_class"
                  + " WHERE relnamespace NOT IN ('pg_catalog'::regnamespace,"
                  + " 'information_schema'::regnamespace, 'pg_toast'::regnamespace) ORDER BY 1"));
      return lines;
    }
  }

  private boolean postgres16() {
    try (Connection c = db.connect()) {
      return FenceSql.longValue(c, "SELECT current_setting('server_version_num')::int") >= 160000;
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private FencingMigrations migrations(DataSource dataSource) {
    return FencingMigrations.builder(dataSource)
        .ownerRole(db.ownerRole())
        .applicationRole(db.appRole())
        .build();
  }

  private String role(String attributes) throws SQLException {
    String name = FenceSql.unique("deployer");
    try (Connection c = db.connect()) {
      FenceSql.run(c, "CREATE ROLE " + name + " " + attributes);
    }
    roles.add(name);
    return name;
  }

  private void ownDatabase(String deployer) throws SQLException {
    try (Connection c = db.connect()) {
      FenceSql.run(c, "ALTER DATABASE " + db.name() + " OWNER TO " + deployer);
    }
  }

  private DataSource as(String role) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(db.jdbcUrl());
    ds.setUser(role);
    if (!db.password().isEmpty()) {
      ds.setPassword(db.password());
    }
    return ds;
  }

  private String placeholders(String text, String deployer) {
    // PostgreSQL 16 inherits per grant, not per role: the fix it needs is another grant
    String inherit =
        postgres16()
            ? "GRANT $OWNER TO $DEPLOYER WITH INHERIT TRUE, SET TRUE"
            : "ALTER ROLE $DEPLOYER INHERIT";
    return text.replace("$INHERIT", inherit)
        .replace("$OWNER", db.ownerRole())
        .replace("$APP", db.appRole())
        .replace("$DEPLOYER", deployer)
        .replace("$DATABASE", db.name());
  }
}
