package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Hazard 12: the application's login role, a member of {@code fencing_app}, can use the fence's API
 * functions and nothing else: no table, sequence, internal function, DDL or role switch that would
 * let it read, rewrite or bypass the fence.
 */
class PrivilegesTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final String INSUFFICIENT_PRIVILEGE = "42501";
  private static final Duration TTL = Duration.ofSeconds(60);
  private static final String RESOURCE = "privileges/api";

  /** The API the application role is granted: exactly these, nothing else. */
  private static final List<String> API =
      List.of(
          "fencing.carry(text,bigint)",
          "fencing.check_one(text,bigint)",
          "fencing.check_token(text,bigint)",
          "fencing.check_tokens(text[],bigint[])",
          "fencing.check_tokens_if_written(text[],bigint[])",
          "fencing.create_resource(text,boolean,boolean)",
          "fencing.record_rejection(text)",
          "fencing.rejections(text,integer)",
          "fencing.release(text,bigint)",
          "fencing.renew(text,bigint,interval)",
          "fencing.status(text)",
          "fencing.try_acquire(text,text,interval,interval)");

  /** Every table of the fence with a column an attacker would like to change. */
  private static final Map<String, String> TABLES =
      Map.ofEntries(
          Map.entry("protected_table", "resource = 'attacker'"),
          Map.entry("marker_secret", "secret = 'known'"),
          Map.entry("resource", "max_seen = 0"),
          Map.entry("lease", "holder = 'attacker'"),
          Map.entry("issuance", "holder = 'attacker'"),
          Map.entry("rejection", "reason = 'stale_token'"),
          Map.entry("cluster_epoch", "epoch_offset = 0"),
          Map.entry("protection_change", "changes = 0"),
          Map.entry("external_reset", "resets = 0"),
          Map.entry("catalog_checksum", "fingerprint = 'forged'"),
          Map.entry("fencing_schema_history", "success = true"));

  private static AppRole appUser;

  private static long issuedToken;

  @BeforeAll
  static void setUp() throws SQLException {
    assertThat(Fence.migrate(db)).isEqualTo(Fence.MIGRATIONS);
    appUser = AppRole.create(db, "app_user");
    try (Connection c = db.connect()) {
      issuedToken = Fence.acquire(c, RESOURCE, "superuser-setup", TTL);
    }
  }

  @AfterAll
  static void dropRole() throws SQLException {
    if (appUser != null) {
      appUser.close();
    }
  }

  @Test
  void applicationRoleCanCallTheApi() throws SQLException {
    try (Connection app = appUser.connect()) {
      assertThat(FenceSql.string(app, "SELECT current_user")).isEqualTo(appUser.name());
      assertThat(
              FenceSql.string(
                  app, "SELECT rolsuper::text FROM pg_roles WHERE rolname = current_user"))
          .isEqualTo("false");

      String r = "privileges/app-own";
      FenceSql.run(app, "SELECT fencing.create_resource(?)", r);
      long token = Fence.acquire(app, r, "app", TTL);
      assertThat(Fence.check(app, r, token)).isEqualTo(token);
      assertThat(
              FenceSql.longValue(
                  app,
                  "SELECT fencing.check_tokens(ARRAY[?]::text[], ARRAY[?]::bigint[])",
                  r,
                  token))
          .as("resources advanced by check_tokens with the current token")
          .isZero();
      assertThat(FenceSql.longValue(app, "SELECT fencing.check_one(?, ?)", r, token))
          .as("resources advanced by check_one with the current token")
          .isZero();
      Fence.renew(app, r, token, TTL);
      FenceSql.Status status = FenceSql.status(app, r);
      assertThat(status.holder()).isEqualTo("app");
      assertThat(status.maxSeen()).isEqualTo(token);
      assertThat(Fence.release(app, r, token)).isTrue();

      String external = "privileges/external";
      FenceSql.run(app, "SELECT fencing.create_resource(?, true)", external);
      assertThat(Fence.check(app, external, 7L)).isEqualTo(7);
      assertThat(Fence.maxSeen(app, external)).isEqualTo(7);

      String stale = "privileges/stale";
      long old = Fence.acquire(app, stale, "app", TTL);
      Fence.release(app, stale, old);
      Fence.acquire(app, stale, "app", TTL);
      app.setAutoCommit(false);
      SQLException refused = Fence.assertFails(Fence.STALE, () -> Fence.check(app, stale, old));
      app.rollback();
      app.setAutoCommit(true);
      long rejection = Fence.recordRejection(app, refused);
      assertThat(rejection).isPositive();
    }
    try (Connection admin = db.connect()) {
      assertThat(
              FenceSql.string(
                  admin, "SELECT db_user FROM fencing.rejection ORDER BY id DESC LIMIT 1"))
          .isEqualTo(appUser.name());
    }
  }

  /**
   * V30: the application role reads the carried check's view, which shows the resources its fast
   * path may accept (local, not strict, not protected, a token issued) and only under READ
   * COMMITTED; it shows no holder, no lease and nothing of the other tables.
   */
  @Test
  void applicationRoleReadsOnlyWhatTheCarriedChecksViewShows() throws SQLException {
    String local = "privileges/view-local";
    String strict = "privileges/view-strict";
    String external = "privileges/view-external";
    long token;
    try (Connection admin = db.connect()) {
      token = Fence.acquire(admin, local, "view", TTL);
      FenceSql.run(admin, "SELECT fencing.create_resource(?, false, true)", strict);
      Fence.acquire(admin, strict, "view", TTL);
      FenceSql.run(admin, "SELECT fencing.create_resource(?, true)", external);
      Fence.check(admin, external, 7L);
    }
    try (Connection app = appUser.connect()) {
      String sql =
          "SELECT string_agg(name || ' ' || max_seen, ',' ORDER BY name)"
              + " FROM fencing.check_at_token WHERE name LIKE 'privileges/view-%'";
      assertThat(FenceSql.string(app, sql)).isEqualTo(local + " " + token);
      assertThat(
              FenceSql.strings(
                  app,
                  "SELECT attname FROM pg_attribute WHERE attrelid = 'fencing.check_at_token'::regclass"
                      + " AND attnum > 0 ORDER BY attnum"))
          .containsExactly("name", "max_seen", "lock_space");
      app.setAutoCommit(false);
      FenceSql.run(app, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
      assertThat(FenceSql.string(app, sql)).as("no row outside READ COMMITTED").isNull();
      app.rollback();
    }
  }

  @Test
  void applicationRoleSeesItsRefusalsButCannotForgeOrDeleteThem() throws SQLException {
    String r = "privileges/refused";
    String other = "privileges/refused-other";
    long token;
    try (Connection admin = db.connect()) {
      long old = Fence.acquire(admin, r, "old-holder", Duration.ofMillis(1));
      token = Fence.acquireAfterExpiry(admin, r, "new-holder", TTL);
      assertThat(token).isGreaterThan(old);
      Fence.acquire(admin, other, "someone", TTL);
    }
    FenceSql.Snapshot before;
    try (Connection app = appUser.connect()) {
      // two refusals of r and one of another resource, recorded with their receipts
      long first = Fence.recordRejection(app, refusal(app, r, token - 1));
      long second = Fence.recordRejection(app, refusal(app, r, token - 1));
      Fence.recordRejection(app, refusal(app, other, Long.MAX_VALUE));

      // its own resource's refusals, newest first, with what the fence knew (not what was claimed)
      assertThat(
              FenceSql.strings(
                  app,
                  "SELECT id || ' ' || resource || ' ' || token || ' ' || max_seen || ' ' || reason"
                      + " || ' ' || db_user FROM fencing.rejections(?)",
                  r))
          .containsExactly(
              second + " " + r + " " + (token - 1) + " " + token + " stale_token " + appUser.name(),
              first + " " + r + " " + (token - 1) + " " + token + " stale_token " + appUser.name());
      assertThat(FenceSql.longValue(app, "SELECT count(*) FROM fencing.rejections(?, 1)", r))
          .isEqualTo(1);
      assertThat(FenceSql.longValue(app, "SELECT count(*) FROM fencing.rejections(NULL)"))
          .isGreaterThanOrEqualTo(3);
      try (Connection admin = db.connect()) {
        before = FenceSql.snapshot(admin);
      }
      // but not the table: it can neither read, forge nor delete a row there
      for (String sql :
          List.of(
              "SELECT * FROM fencing.rejection",
              "INSERT INTO fencing.rejection (resource, reason, sqlstate)"
                  + " VALUES ('x', 'stale_token', 'ZF001')",
              "UPDATE fencing.rejection SET holder = 'someone else'",
              "DELETE FROM fencing.rejection",
              "TRUNCATE fencing.rejection",
              "ALTER FUNCTION fencing.rejections(text, integer) SECURITY INVOKER",
              "CREATE OR REPLACE FUNCTION fencing.rejections(p_resource text, p_limit integer)"
                  + " RETURNS SETOF fencing.rejection LANGUAGE sql AS 'SELECT NULL::fencing.rejection'")) {
        SQLException e = catchThrowableOfType(SQLException.class, () -> execute(app, sql));
        assertThat((Throwable) e).as("%s must be refused", sql).isNotNull();
        assertThat(e.getSQLState())
            .as("%s: %s", sql, e.getMessage())
            .isEqualTo(INSUFFICIENT_PRIVILEGE);
      }
    }
    try (Connection admin = db.connect()) {
      assertThat(FenceSql.snapshot(admin)).isEqualTo(before);
    }
  }

  @Test
  void applicationRoleCannotReadWriteOrBypassTheFence() throws SQLException {
    List<String> forbidden = new ArrayList<>();
    TABLES.forEach(
        (table, assignment) -> {
          String t = "fencing." + table;
          forbidden.add("SELECT * FROM " + t);
          forbidden.add("SELECT count(*) FROM " + t);
          forbidden.add("INSERT INTO " + t + " DEFAULT VALUES");
          forbidden.add("UPDATE " + t + " SET " + assignment);
          forbidden.add("DELETE FROM " + t);
          forbidden.add("TRUNCATE " + t);
          forbidden.add("ALTER TABLE " + t + " DISABLE TRIGGER ALL");
          forbidden.add("ALTER TABLE " + t + " OWNER TO " + appUser.name());
          forbidden.add("ALTER TABLE " + t + " ENABLE ROW LEVEL SECURITY");
          forbidden.add("DROP TABLE " + t);
          forbidden.add("LOCK TABLE " + t + " IN ACCESS EXCLUSIVE MODE");
        });
    forbidden.addAll(
        List.of(
            "UPDATE fencing.resource SET max_seen = 1 WHERE name = '" + RESOURCE + "'",
            "UPDATE fencing.resource SET max_seen = 1, last_issued = 1",
            "INSERT INTO fencing.resource (name, issuer, max_seen, last_issued)"
                + " VALUES ('privileges/forged', 'local', 9000000000, 9000000000)",
            // the token sequence
            "SELECT nextval('fencing.token_seq')",
            "SELECT setval('fencing.token_seq', 1)",
            "SELECT setval('fencing.token_seq', 1, false)",
            "SELECT last_value FROM fencing.token_seq",
            "ALTER SEQUENCE fencing.token_seq RESTART WITH 1",
            "ALTER SEQUENCE fencing.token_seq CACHE 20",
            "DROP SEQUENCE fencing.token_seq",
            // internal and operator functions
            "SELECT fencing.advance_sequence(1000)",
            // token epochs (V12): operator commands and internals
            "SELECT fencing.advance_epoch()",
            "SELECT * FROM fencing.epoch_status()",
            "SELECT fencing.issue_token(0)",
            "SELECT fencing.current_timeline()",
            "SELECT fencing.issued_epoch()",
            "SELECT * FROM fencing.own_epoch()",
            "SELECT fencing.record_epoch(5000, 'advanced')",
            "SELECT fencing.adoption_epoch()",
            "SELECT fencing.lock_issuance(true)",
            "SELECT fencing.exhausted(0, 1, 0)",
            "SELECT fencing.acl_text(NULL, 'r', 10)",
            "SELECT fencing.reset_external('" + RESOURCE + "', 0)",
            "SELECT fencing.set_advisory_key_space(1)",
            "SELECT fencing.fence_full('" + RESOURCE + "', 1)",
            "SELECT fencing.lock_for_advance(1, 1)",
            "SELECT fencing.receipt_mac('stale_token', 1, '1.2.3', 'x')",
            "SELECT fencing.with_receipt('ZF001', '{\"resource\": \"x\"}'::jsonb)",
            "SELECT fencing.fence('" + RESOURCE + "', 1)",
            "SELECT fencing.refuse(NULL::fencing.resource, 1)",
            "SELECT fencing.raise_error('ZF001', 'forged', '{}'::jsonb)",
            "SELECT * FROM fencing.find_resource('" + RESOURCE + "')",
            "SELECT fencing.record_catalog_fingerprint()",
            "SELECT * FROM fencing.catalog_fingerprint()",
            "SELECT fencing.validate_resource_name('x')",
            "SELECT fencing.validate_token('x', 1)",
            "SELECT fencing.validate_interval('x', interval '1 s', interval '1 s', interval '2 s')",
            "SELECT * FROM fencing.lock_own_lease('" + RESOURCE + "', 1)",
            // protected tables: operator commands and internals
            "SELECT fencing.protect('fencing.resource', 'x')",
            "SELECT fencing.protect_rows('fencing.resource', 'name')",
            "SELECT fencing.unprotect('fencing.resource')",
            "SELECT fencing.mark_checked(1, 1)",
            "SELECT fencing.marker_mac(1, 1)",
            "SELECT fencing.is_checked(1)",
            "SELECT fencing.require_fenced('x', 'fencing.resource')",
            // V30's view: read only, and only as it is
            "UPDATE fencing.check_at_token SET max_seen = 0",
            "INSERT INTO fencing.check_at_token (name, max_seen) VALUES ('privileges/forged', 1)",
            "DELETE FROM fencing.check_at_token",
            "CREATE OR REPLACE VIEW fencing.check_at_token AS"
                + " SELECT name, max_seen, lock_space FROM fencing.resource",
            "ALTER VIEW fencing.check_at_token RENAME TO gone",
            "ALTER VIEW fencing.check_at_token OWNER TO " + appUser.name(),
            "DROP VIEW fencing.check_at_token",
            // DDL in the fence's schema
            "CREATE TABLE fencing.evil (id int)",
            "CREATE VIEW fencing.evil AS SELECT 1 AS one",
            "CREATE SEQUENCE fencing.evil",
            "CREATE FUNCTION fencing.evil() RETURNS int LANGUAGE sql AS 'SELECT 1'",
            "CREATE OR REPLACE FUNCTION fencing.check_token(p_resource text, p_token bigint)"
                + " RETURNS bigint LANGUAGE sql AS 'SELECT p_token'",
            "ALTER FUNCTION fencing.check_token(text, bigint) SECURITY INVOKER",
            "ALTER FUNCTION fencing.check_token(text, bigint) RESET search_path",
            "ALTER FUNCTION fencing.try_acquire(text, text, interval, interval)"
                + " OWNER TO "
                + appUser.name(),
            "DROP FUNCTION fencing.check_token(text, bigint)",
            "DROP FUNCTION fencing.advance_sequence(bigint)",
            "ALTER SCHEMA fencing RENAME TO fencing_gone",
            "DROP SCHEMA fencing CASCADE",
            // becoming someone who could
            "SET ROLE " + db.ownerRole(),
            "SET SESSION AUTHORIZATION " + db.ownerRole(),
            "GRANT " + db.ownerRole() + " TO " + appUser.name(),
            "SET session_replication_role = replica"));

    FenceSql.Snapshot before;
    FenceSql.Status statusBefore;
    try (Connection admin = db.connect()) {
      before = FenceSql.snapshot(admin);
      statusBefore = FenceSql.status(admin, RESOURCE);
    }

    SoftAssertions softly = new SoftAssertions();
    try (Connection app = appUser.connect()) {
      for (String sql : forbidden) {
        SQLException e = catchThrowableOfType(SQLException.class, () -> execute(app, sql));
        softly.assertThat((Throwable) e).as("%s must be refused", sql).isNotNull();
        if (e != null) {
          softly
              .assertThat(e.getSQLState())
              .as("SQLSTATE of %s (%s)", sql, e.getMessage())
              .isEqualTo(INSUFFICIENT_PRIVILEGE);
        }
      }
      // still the application role, and the API still works for it
      softly.assertThat(FenceSql.string(app, "SELECT current_user")).isEqualTo(appUser.name());
      softly.assertThat(Fence.check(app, RESOURCE, issuedToken)).isEqualTo(issuedToken);
    }
    softly.assertAll();

    try (Connection admin = db.connect()) {
      assertThat(FenceSql.snapshot(admin)).isEqualTo(before);
      assertThat(FenceSql.status(admin, RESOURCE)).isEqualTo(statusBefore);
      assertThat(FenceSql.status(admin, RESOURCE).maxSeen()).isEqualTo(issuedToken);
      assertThat(FenceSql.longValue(admin, "SELECT count(*) FROM pg_class WHERE relname = 'evil'"))
          .isZero();
      assertThat(
              FenceSql.string(
                  admin,
                  "SELECT prosecdef::text FROM pg_proc"
                      + " WHERE oid = 'fencing.check_token(text, bigint)'::regprocedure"))
          .isEqualTo("true");
      Fence.migrations(db).validate();
    }
  }

  @Test
  void ownerAndApplicationRolesCannotLogInAndAreNotPrivileged() throws SQLException {
    try (Connection c = db.connect()) {
      for (String role : new String[] {db.ownerRole(), db.appRole()}) {
        assertThat(
                FenceSql.string(
                    c,
                    "SELECT concat_ws(',', rolcanlogin::text, rolsuper::text, rolcreaterole::text,"
                        + " rolcreatedb::text, rolreplication::text, rolbypassrls::text)"
                        + " FROM pg_roles WHERE rolname = ?",
                    role))
            .as("login, superuser, createrole, createdb, replication, bypassrls of %s", role)
            .isEqualTo("false,false,false,false,false,false");
      }
      // the owner role owns the fence's state; the application role owns nothing in the schema
      assertThat(
              FenceSql.strings(
                  c,
                  "SELECT relname || ' ' || relowner::regrole FROM pg_class"
                      + " WHERE relnamespace = 'fencing'::regnamespace"
                      + " AND relname IN ('resource', 'lease', 'issuance', 'rejection', 'token_seq')"
                      + " ORDER BY relname"))
          .containsExactly(
              "issuance " + db.ownerRole(),
              "lease " + db.ownerRole(),
              "rejection " + db.ownerRole(),
              "resource " + db.ownerRole(),
              "token_seq " + db.ownerRole());
      assertThat(
              FenceSql.longValue(
                  c,
                  "SELECT (SELECT count(*) FROM pg_class WHERE relnamespace = 'fencing'::regnamespace"
                      + " AND relowner = '"
                      + db.appRole()
                      + "'::regrole)"
                      + " + (SELECT count(*) FROM pg_proc WHERE pronamespace = 'fencing'::regnamespace"
                      + " AND proowner = '"
                      + db.appRole()
                      + "'::regrole)"))
          .isZero();
      // the application login role is not a member of the owner role
      assertThat(
              FenceSql.string(
                  c,
                  "SELECT pg_has_role(?, '" + db.ownerRole() + "', 'MEMBER')::text",
                  appUser.name()))
          .isEqualTo("false");
    }
  }

  @Test
  void grantedFunctionsAreSecurityDefinerWithAPinnedSearchPathAndNoneIsPublic()
      throws SQLException {
    try (Connection c = db.connect()) {
      // exactly the API is executable by the application role (directly or through PUBLIC)
      assertThat(
              FenceSql.strings(
                  c,
                  "SELECT p.oid::regprocedure::text FROM pg_proc p"
                      + " WHERE p.pronamespace = 'fencing'::regnamespace"
                      + " AND has_function_privilege('"
                      + db.appRole()
                      + "', p.oid, 'EXECUTE')"
                      + " ORDER BY 1"))
          .containsExactlyElementsOf(API);

      try (Statement s = c.createStatement();
          ResultSet rs =
              s.executeQuery(
                  "SELECT p.oid::regprocedure::text, p.prosecdef, p.proowner::regrole::text,"
                      + " coalesce(p.proconfig, '{}'::text[]) @> ARRAY['search_path=pg_catalog, pg_temp']"
                      + " FROM pg_proc p WHERE p.pronamespace = 'fencing'::regnamespace"
                      + " AND has_function_privilege('"
                      + db.appRole()
                      + "', p.oid, 'EXECUTE')")) {
        int rows = 0;
        while (rs.next()) {
          rows++;
          String function = rs.getString(1);
          assertThat(rs.getBoolean(2)).as("%s is SECURITY DEFINER", function).isTrue();
          assertThat(rs.getString(3)).as("owner of %s", function).isEqualTo(db.ownerRole());
          assertThat(rs.getBoolean(4))
              .as("%s has SET search_path = pg_catalog, pg_temp", function)
              .isTrue();
        }
        assertThat(rows).isEqualTo(API.size());
      }

      // every function of the schema pins its search_path, but for the internal helpers on the
      // check's path (V6): they run under the pinned path of the API or trigger function calling
      // them, and nobody but their owner may call them, or is definer-run through them
      assertThat(
              FenceSql.strings(
                  c,
                  "SELECT p.oid::regprocedure::text FROM pg_proc p"
                      + " WHERE p.pronamespace = 'fencing'::regnamespace"
                      + " AND NOT coalesce(p.proconfig, '{}'::text[])"
                      + "     @> ARRAY['search_path=pg_catalog, pg_temp']"
                      + " ORDER BY 1"))
          .containsExactly(
              "fencing.advisory_key(bigint)",
              "fencing.fence(text,bigint)",
              "fencing.fence_full(text,bigint)",
              "fencing.find_resource(text)",
              "fencing.lock_for_advance(bigint,integer)",
              "fencing.mark_checked(bigint,bigint)",
              "fencing.marker_mac(bigint,bigint)",
              "fencing.validate_resource_name(text)",
              "fencing.validate_token(text,bigint)");
      assertThat(
              FenceSql.strings(
                  c,
                  "SELECT p.oid::regprocedure::text FROM pg_proc p"
                      + " WHERE p.pronamespace = 'fencing'::regnamespace"
                      + " AND p.proconfig IS NULL"
                      + " AND (p.prosecdef OR has_function_privilege('public', p.oid, 'EXECUTE')"
                      + "      OR has_function_privilege('"
                      + db.appRole()
                      + "', p.oid, 'EXECUTE'))"))
          .isEmpty();
      // no callable SECURITY DEFINER function runs as a superuser (the event trigger function of
      // V4 must, to add triggers to partitions of tables it does not own; PostgreSQL lets nobody
      // call an event trigger function)
      assertThat(
              FenceSql.strings(
                  c,
                  "SELECT p.oid::regprocedure::text FROM pg_proc p"
                      + " JOIN pg_roles o ON o.oid = p.proowner"
                      + " WHERE p.pronamespace = 'fencing'::regnamespace"
                      + " AND p.prosecdef AND o.rolsuper"
                      + " AND p.prorettype <> 'event_trigger'::regtype"))
          .isEmpty();

      // nothing in the schema is executable (or otherwise usable) by PUBLIC
      assertThat(
              FenceSql.strings(
                  c,
                  "SELECT p.oid::regprocedure::text FROM pg_proc p,"
                      + " aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a"
                      + " WHERE p.pronamespace = 'fencing'::regnamespace AND a.grantee = 0"))
          .isEmpty();
      assertThat(
              FenceSql.strings(
                  c,
                  "SELECT p.oid::regprocedure::text FROM pg_proc p"
                      + " WHERE p.pronamespace = 'fencing'::regnamespace"
                      + " AND has_function_privilege('public', p.oid, 'EXECUTE')"))
          .isEmpty();
      assertThat(
              FenceSql.strings(
                  c,
                  "SELECT cl.oid::regclass::text || ' ' || a.privilege_type FROM pg_class cl,"
                      + " aclexplode(coalesce(cl.relacl, acldefault(CASE WHEN cl.relkind = 'S'"
                      + " THEN 's' ELSE 'r' END::\"char\", cl.relowner))) a"
                      + " WHERE cl.relnamespace = 'fencing'::regnamespace"
                      + " AND (a.grantee = 0 OR a.grantee = '"
                      + db.appRole()
                      + "'::regrole)"))
          // V30: the carried check's read (name, max_seen and lock_space of the resources its
          // fast path may accept; none a secret: a token is not authentication, hazard 13, and a
          // refusal tells max_seen), nothing else, nothing to PUBLIC
          .containsExactly("fencing.check_at_token SELECT");
      // the application role may use the schema, not create in it
      assertThat(
              FenceSql.string(
                  c,
                  "SELECT has_schema_privilege('"
                      + db.appRole()
                      + "', 'fencing', 'USAGE')::text"
                      + " || has_schema_privilege('"
                      + db.appRole()
                      + "', 'fencing', 'CREATE')::text"
                      + " || has_schema_privilege('public', 'fencing', 'CREATE')::text"))
          .isEqualTo("truefalsefalse");
    }
  }

  /** A refused check of {@code token}, rolled back: the refusal to record. */
  private static SQLException refusal(Connection app, String resource, long token)
      throws SQLException {
    app.setAutoCommit(false);
    SQLException refused =
        catchThrowableOfType(SQLException.class, () -> Fence.check(app, resource, token));
    app.rollback();
    app.setAutoCommit(true);
    assertThat((Throwable) refused).as("check of %s %d", resource, token).isNotNull();
    return refused;
  }

  private static void execute(Connection c, String sql) throws SQLException {
    boolean transactionOnly = sql.startsWith("LOCK ");
    if (transactionOnly) {
      c.setAutoCommit(false);
    }
    try (Statement s = c.createStatement()) {
      s.execute(sql);
    } finally {
      if (transactionOnly) {
        c.rollback();
        c.setAutoCommit(true);
      }
    }
  }
}
