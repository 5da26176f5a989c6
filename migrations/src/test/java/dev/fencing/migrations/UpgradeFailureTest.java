package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.MISSING;
import static dev.fencing.migrations.Fence.STALE;
import static dev.fencing.migrations.Fence.assertFails;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.fencing.migrations.Interleaving.Isolation;
import dev.fencing.testing.TestDatabaseExtension;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * An upgrade that fails midway, and the callbacks run again: Flyway runs each migration with its
 * callbacks in one transaction on PostgreSQL, so a migration whose DO block raises after it
 * replaced the check, dropped the protected tables' triggers and forgot every token leaves the
 * fence exactly as the migration before it left it, and the next upgrade goes on from there; the
 * callbacks are idempotent.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class UpgradeFailureTest {
  /** An instance field: every test starts from an empty database. */
  @RegisterExtension final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final Duration LEASE = Duration.ofMinutes(5);

  /** What a migration could change: functions, triggers, rows, evidence, history. */
  private static List<String> state(Connection c) throws SQLException {
    List<String> state = new ArrayList<>();
    state.addAll(
        FenceSql.strings(
            c,
            "SELECT p.oid::regprocedure::text || ' ' || md5(pg_get_functiondef(p.oid))"
                + " FROM pg_proc p WHERE p.pronamespace = 'fencing'::regnamespace ORDER BY 1"));
    state.addAll(
        FenceSql.strings(
            c,
            "SELECT tgrelid::regclass::text || ' ' || tgname || ' ' || tgfoid::regprocedure::text"
                + " || ' ' || tgenabled::text FROM pg_trigger"
                + " WHERE tgrelid IN ('public.ledger'::regclass, 'fencing.resource'::regclass)"
                + " ORDER BY 1"));
    state.addAll(FenceSql.strings(c, "SELECT r::text FROM fencing.resource r ORDER BY r.id"));
    state.addAll(FenceSql.strings(c, "SELECT l::text FROM fencing.lease l ORDER BY l.resource_id"));
    state.addAll(
        FenceSql.strings(
            c, "SELECT object || ' ' || fingerprint FROM fencing.catalog_checksum ORDER BY 1"));
    state.addAll(
        FenceSql.strings(
            c,
            "SELECT coalesce(version, '-') || ' ' || success::text"
                + " FROM fencing.fencing_schema_history ORDER BY installed_rank"));
    state.add("sequence " + FenceSql.longValue(c, "SELECT last_value FROM fencing.token_seq"));
    return state;
  }

  @Test
  void aMigrationThatRaisesMidwayLeavesTheVersionBeforeItIntact() throws SQLException {
    UpgradePathTest.migrateTo(db, "39");
    long stale;
    long held;
    List<String> before;
    try (Connection c = db.connect()) {
      FenceSql.run(c, "CREATE TABLE public.ledger (id int PRIMARY KEY, note text)");
      FenceSql.run(c, "SELECT fencing.create_resource('upg/ledger')");
      FenceSql.run(c, "SELECT fencing.protect('public.ledger', 'upg/ledger')");
      stale = Fence.acquire(c, "upg/ledger", "old-holder", LEASE);
      assertThat(Fence.release(c, "upg/ledger", stale)).isTrue();
      held = Fence.acquire(c, "upg/ledger", "holder", LEASE);
      before = state(c);
    }

    FlywayException failed =
        catchThrowableOfType(
            FlywayException.class,
            () ->
                Flyway.configure(UpgradeFailureTest.class.getClassLoader())
                    .dataSource(db.migrationDataSource())
                    .schemas("fencing")
                    .defaultSchema("fencing")
                    .table(FencingMigrations.HISTORY_TABLE)
                    .locations(FencingMigrations.LOCATION, "classpath:db/upgrade-failing")
                    .placeholders(Map.of("app_role", db.appRole(), "owner_role", db.ownerRole()))
                    .load()
                    .migrate());
    assertThat((Object) failed).as("the migration fails").isNotNull();
    assertThat(failed).hasMessageContaining("V39.5 fails midway, on purpose");

    try (Connection c = db.connect()) {
      assertThat(state(c)).containsExactlyElementsOf(before);
      // still fenced: the stale token refused, the protected table protected
      c.setAutoCommit(false);
      assertFails(STALE, () -> Fence.check(c, "upg/ledger", stale));
      c.rollback();
      assertFails(MISSING, () -> FenceSql.run(c, "INSERT INTO public.ledger VALUES (1, 'none')"));
      c.rollback();
      c.setAutoCommit(true);
    }

    // the next upgrade goes on from V39
    assertThat(Fence.migrate(db)).isEqualTo(Fence.MIGRATIONS - Fence.VERSIONS.indexOf(39) - 1);
    Fence.migrations(db).validate();
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      Fence.check(c, "upg/ledger", held);
      FenceSql.run(c, "INSERT INTO public.ledger VALUES (1, 'held across')");
      c.commit();
      assertFails(STALE, () -> Fence.check(c, "upg/ledger", stale));
      c.rollback();
      c.setAutoCommit(true);
      assertThat(Fence.release(c, "upg/ledger", held)).isTrue();
      assertThat(Fence.acquire(c, "upg/ledger", "next", LEASE)).isGreaterThan(held);
    }
  }

  private static String callback(TestDatabaseExtension db, String name) throws IOException {
    try (InputStream in =
        UpgradeFailureTest.class.getClassLoader().getResourceAsStream("db/fencing/" + name)) {
      return new String(Objects.requireNonNull(in, name).readAllBytes(), StandardCharsets.UTF_8)
          .replace("${flyway:defaultSchema}", "fencing")
          .replace("${flyway:table}", FencingMigrations.HISTORY_TABLE)
          .replace("${owner_role}", db.ownerRole())
          .replace("${app_role}", db.appRole());
    }
  }

  @Test
  void theCallbacksRunAgainChangeNothingAndAnUpToDateMigrateAppliesNothing() throws Exception {
    assertThat(Fence.migrate(db)).isEqualTo(Fence.MIGRATIONS);
    List<String> before;
    long held;
    try (Connection c = db.connect()) {
      FenceSql.run(c, "CREATE TABLE public.ledger (id int PRIMARY KEY, note text)");
      FenceSql.run(c, "SELECT fencing.create_resource('upg/ledger')");
      FenceSql.run(c, "SELECT fencing.protect('public.ledger', 'upg/ledger')");
      held = Fence.acquire(c, "upg/ledger", "holder", LEASE);
      FenceSql.run(c, "SELECT fencing.set_advisory_key_space(-5)");
      before = state(c);
    }
    Fence.migrations(db).validate();
    // re-run as Flyway would around a later migration, twice, as the migrating user
    try (Connection m = db.migrationDataSource().getConnection();
        Statement s = m.createStatement()) {
      for (int i = 0; i < 2; i++) {
        m.setAutoCommit(false);
        s.execute(callback(db, "beforeEachMigrate.sql"));
        s.execute(callback(db, "afterEachMigrate.sql"));
        m.commit();
        m.setAutoCommit(true);
      }
    }
    assertThat(Fence.migrate(db)).isZero();
    assertThat(Fence.migrate(db)).isZero();
    try (Connection c = db.connect()) {
      List<String> after = state(c);
      // the evidence is recorded again (its recorded_at is not compared), nothing else moved
      assertThat(after).containsExactlyElementsOf(before);
      c.setAutoCommit(false);
      Fence.check(c, "upg/ledger", held);
      FenceSql.run(c, "INSERT INTO public.ledger VALUES (1, 'after the re-runs')");
      c.commit();
      c.setAutoCommit(true);
    }
    Fence.migrations(db).validate();
  }

  /**
   * V28 waits for every open fenced transaction (ACCESS EXCLUSIVE on the resource table), and every
   * check and acquisition after it queues behind it: an upgrade run with a lock_timeout gives up
   * instead, rolled back whole, and the retry after the transaction ended goes through.
   */
  @Test
  void anUpgradeThatWaitsPastItsLockTimeoutIsRolledBackAndGoesThroughOnRetry() throws Exception {
    UpgradePathTest.migrateTo(db, "27");
    PGSimpleDataSource impatient = (PGSimpleDataSource) db.migrationDataSource();
    impatient.setOptions("-c lock_timeout=200");
    FencingMigrations migrations =
        FencingMigrations.builder(impatient)
            .ownerRole(db.ownerRole())
            .applicationRole(db.appRole())
            .build();
    try (Connection observer = db.connect();
        Interleaving.Session writer = Interleaving.writer(db, Isolation.READ_COMMITTED)) {
      FenceSql.run(observer, "CREATE TABLE public.ledger (id int PRIMARY KEY, note text)");
      FenceSql.run(observer, "SELECT fencing.create_resource('upg/ledger')");
      FenceSql.run(observer, "SELECT fencing.protect('public.ledger', 'upg/ledger')");
      long held = Fence.acquire(observer, "upg/ledger", "holder", LEASE);
      Interleaving.begin(writer, Isolation.READ_COMMITTED);
      assertThat(Fence.check(writer.c(), "upg/ledger", held)).isEqualTo(held);
      List<String> before = state(observer);

      FencingMigrationException timedOut =
          catchThrowableOfType(FencingMigrationException.class, migrations::migrate);
      assertThat((Object) timedOut).as("the upgrade gives up").isNotNull();
      assertThat(timedOut).hasMessageContaining("lock timeout");
      assertThat(state(observer)).containsExactlyElementsOf(before);

      FenceSql.run(writer.c(), "INSERT INTO public.ledger VALUES (1, 'checked before')");
      writer.c().commit();
      assertThat(migrations.migrate()).isEqualTo(Fence.MIGRATIONS - Fence.VERSIONS.indexOf(27) - 1);
      Fence.migrations(db).validate();
      assertThat(Fence.release(observer, "upg/ledger", held)).isTrue();
      assertThat(Fence.acquire(observer, "upg/ledger", "next", LEASE)).isGreaterThan(held);
    }
  }

  /**
   * The preflight's refusal says what was left as it was: on an upgrade the fence's objects exist,
   * and nothing was CHANGED (it said "nothing was created", a first migration's words, also here).
   */
  @Test
  void anUpgradesRefusalSaysNothingWasChanged() throws SQLException {
    UpgradePathTest.migrateTo(db, "43");
    try (Connection c = db.connect()) {
      FenceSql.run(
          c,
          "CREATE OR REPLACE FUNCTION fencing.is_checked(p_resource_id bigint) RETURNS boolean"
              + " LANGUAGE sql AS 'SELECT true'");
    }
    FencingMigrationException refused =
        catchThrowableOfType(FencingMigrationException.class, () -> Fence.migrate(db));
    assertThat((Object) refused).as("the upgrade refuses").isNotNull();
    assertThat(refused)
        .hasMessageStartingWith("fencing migrations refused, nothing was changed: ")
        .hasMessageContaining("function fencing.is_checked(bigint) (changed)");
  }

  /**
   * An upgrade must not record an object changed by hand as migrated: afterEachMigrate records the
   * fingerprints of every object, so before, an upgrade that applied anything blessed a function
   * replaced by hand (here is_checked answering true: every write to a protected table passed
   * without a check) and validate() said nothing from then on.
   */
  @Test
  void anUpgradeRefusesToRecordAnObjectChangedByHandAsMigrated() throws SQLException {
    UpgradePathTest.migrateTo(db, "40");
    try (Connection c = db.connect()) {
      FenceSql.run(
          c,
          "CREATE OR REPLACE FUNCTION fencing.is_checked(p_resource_id bigint) RETURNS boolean"
              + " LANGUAGE sql AS 'SELECT true'");
    }
    FencingMigrationException refused =
        catchThrowableOfType(FencingMigrationException.class, () -> Fence.migrate(db));
    assertThat((Object) refused).as("the upgrade refuses").isNotNull();
    assertThat(refused)
        .hasMessageContaining("function fencing.is_checked(bigint) (changed)")
        .hasMessageContaining("record_catalog_fingerprint");
    try (Connection c = db.connect()) {
      assertThat(FenceSql.strings(c, "SELECT object FROM fencing.catalog_checksum"))
          .contains("function fencing.is_checked(bigint)");
      assertThat(
              FenceSql.longValue(
                  c, "SELECT count(*) FROM fencing.fencing_schema_history WHERE version = '41'"))
          .isZero();
      // the evidence still names it
      assertThat(
              FenceSql.strings(
                  c,
                  "SELECT n.object FROM fencing.catalog_fingerprint() n"
                      + " JOIN fencing.catalog_checksum t USING (object)"
                      + " WHERE n.fingerprint <> t.fingerprint"))
          .containsExactly("function fencing.is_checked(bigint)");
    }
    // plain Flyway runs the same callback inside the migration: refused, nothing applied
    FlywayException plain =
        catchThrowableOfType(
            FlywayException.class,
            () ->
                Flyway.configure(UpgradeFailureTest.class.getClassLoader())
                    .dataSource(db.migrationDataSource())
                    .schemas("fencing")
                    .defaultSchema("fencing")
                    .table(FencingMigrations.HISTORY_TABLE)
                    .locations(FencingMigrations.LOCATION)
                    .placeholders(Map.of("app_role", db.appRole(), "owner_role", db.ownerRole()))
                    .load()
                    .migrate());
    assertThat((Object) plain).isNotNull();
    assertThat(plain).hasMessageContaining("function fencing.is_checked(bigint) (changed)");

    // a change the migrating user records deliberately is migrated over (to V41: a later
    // migration that derives a function's new body from the one in place, as V42 does from
    // is_checked's, refuses a body changed by hand on its own)
    try (Connection m = db.migrationDataSource().getConnection()) {
      FenceSql.run(m, "SELECT fencing.record_catalog_fingerprint()");
    }
    UpgradePathTest.migrateTo(db, "41");
    try (Connection c = db.connect()) {
      assertThat(
              FenceSql.longValue(
                  c, "SELECT count(*) FROM fencing.fencing_schema_history WHERE version = '41'"))
          .isOne();
    }
  }
}
