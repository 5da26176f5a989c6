package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A negative advisory key space set before V28 (V10's set_advisory_key_space, as an operator would)
 * survives the upgrade to the head: the fast path's constants, resource.lock_space's default and
 * rows, and check_at_token all say that space, and a check is accepted in it. PostgreSQL prints a
 * negative integer default as {@code '-5'::integer}, which V28's own read of the default does not
 * match (V34 fixed the same read in set_advisory_key_space).
 */
class NegativeKeySpaceMigrationTest {
  /** An instance field: every test starts from an empty database. */
  @RegisterExtension final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final Duration LEASE = Duration.ofMinutes(5);
  private static final int DEFAULT_SPACE = 1178946115;

  private void migrateTo(String version) {
    migrateTo(version, false);
  }

  private void migrateTo(String version, boolean group) {
    Flyway.configure(NegativeKeySpaceMigrationTest.class.getClassLoader())
        .dataSource(db.migrationDataSource())
        .schemas("fencing")
        .defaultSchema("fencing")
        .table(FencingMigrations.HISTORY_TABLE)
        .locations(FencingMigrations.LOCATION)
        .placeholders(Map.of("app_role", db.appRole(), "owner_role", db.ownerRole()))
        .target(version)
        .group(group)
        .load()
        .migrate();
  }

  @Test
  void aNegativeKeySpaceSetBeforeV28SurvivesTheUpgrade() throws SQLException {
    upgradeWith(-5, true, true);
  }

  @Test
  void theSmallestKeySpaceSetBeforeV28SurvivesTheUpgrade() throws SQLException {
    upgradeWith(Integer.MIN_VALUE, true, true);
  }

  /** Plain Flyway (no preflight), and no resource yet: the space is only the column default. */
  @Test
  void aNegativeKeySpaceWithoutResourcesSurvivesAPlainFlywayUpgrade() throws SQLException {
    upgradeWith(-7, false, false);
  }

  /** Set before V27, upgraded in one Flyway group: V27 and V28 share a transaction. */
  @Test
  void aNegativeKeySpaceSetBeforeV27SurvivesAGroupedUpgrade() throws SQLException {
    upgradeWith(-9, "26", true);
  }

  /** Set before V27, upgraded one migration per transaction. */
  @Test
  void aNegativeKeySpaceSetBeforeV27SurvivesAnUpgrade() throws SQLException {
    upgradeWith(-11, "26", false);
  }

  /**
   * The callbacks act only on the space beforeEachMigrate kept in the same transaction: a value of
   * the setting that the migration session already had (PGOPTIONS, ALTER ROLE ... SET) neither
   * breaks a first migration nor sets a key space.
   */
  @Test
  void aPresetSessionSettingIsIgnored() throws SQLException {
    PGSimpleDataSource preset = new PGSimpleDataSource();
    preset.setURL(db.jdbcUrl());
    preset.setUser(db.user());
    if (!db.password().isEmpty()) {
      preset.setPassword(db.password());
    }
    preset.setOptions("-c fencing.migration_key_space=7");
    assertThat(
            FencingMigrations.builder(preset)
                .ownerRole(db.ownerRole())
                .applicationRole(db.appRole())
                .build()
                .migrate())
        .isEqualTo(Fence.MIGRATIONS);
    try (Connection c = db.connect()) {
      assertThat(keySpaceConstants(c)).containsOnly(DEFAULT_SPACE).hasSize(10);
    }
  }

  @Test
  void aPositiveKeySpaceSetBeforeV28SurvivesTheUpgrade() throws SQLException {
    upgradeWith(4242, true, true);
  }

  private void upgradeWith(int space, boolean fencingMigrations, boolean resourceFirst)
      throws SQLException {
    upgradeWith(space, fencingMigrations, resourceFirst, "27", false);
  }

  private void upgradeWith(int space, String from, boolean group) throws SQLException {
    upgradeWith(space, false, true, from, group);
  }

  private void upgradeWith(
      int space, boolean fencingMigrations, boolean resourceFirst, String from, boolean group)
      throws SQLException {
    migrateTo(from);
    try (Connection c = db.connect()) {
      if (resourceFirst) {
        Fence.acquire(c, "negative-space", "holder-a", LEASE);
      }
      assertThat(FenceSql.string(c, "SELECT fencing.set_advisory_key_space(?)::text", space))
          .isEqualTo(String.valueOf(DEFAULT_SPACE));

      if (fencingMigrations) {
        assertThat(Fence.migrate(db)).isEqualTo(Fence.MIGRATIONS - Fence.VERSIONS.indexOf(27) - 1);
      } else {
        migrateTo("latest", group);
      }
      long token =
          resourceFirst
              ? Fence.maxSeen(c, "negative-space")
              : Fence.acquire(c, "negative-space", "holder-a", LEASE);
      Fence.migrations(db).validate(); // no drift: the fingerprints recorded after the space

      assertThat(keySpaceConstants(c)).as("the fast path's constants").containsOnly(space);
      assertThat(keySpaceConstants(c)).hasSize(10);
      assertThat(
              FenceSql.string(
                  c, "SELECT string_agg(DISTINCT lock_space::text, ',') FROM fencing.resource"))
          .isEqualTo(String.valueOf(space));
      assertThat(
              FenceSql.string(
                  c,
                  "SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d"
                      + " JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum"
                      + " WHERE d.adrelid = 'fencing.resource'::regclass"
                      + " AND a.attname = 'lock_space'"))
          .as("resource.lock_space's default")
          .matches("'?" + space + "'?(::integer)?");
      assertThat(
              FenceSql.string(
                  c,
                  "SELECT lock_space::text FROM fencing.check_at_token WHERE name = ?",
                  "negative-space"))
          .isEqualTo(String.valueOf(space));

      // accepted on the fast path, its share lock in that space (classid is the space as oid)
      c.setAutoCommit(false);
      assertThat(FenceSql.longValue(c, "SELECT fencing.check_one(?, ?)", "negative-space", token))
          .isZero();
      assertThat(
              FenceSql.longValue(
                  c,
                  "SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid()"
                      + " AND locktype = 'advisory' AND mode = 'ShareLock'"
                      + " AND classid = (?::bigint & 4294967295)::oid AND objsubid = 2",
                  (long) space))
          .as("the check's share lock, in the space set before the upgrade")
          .isOne();
      c.rollback();
      c.setAutoCommit(true);

      assertThat(
              FenceSql.string(c, "SELECT fencing.set_advisory_key_space(?)::text", DEFAULT_SPACE))
          .isEqualTo(String.valueOf(space));
      assertThat(keySpaceConstants(c)).containsOnly(DEFAULT_SPACE).hasSize(10);
    }
  }

  /** The key space constants of the five functions that carry the fast path (two each). */
  private static java.util.List<Integer> keySpaceConstants(Connection c) throws SQLException {
    return FenceSql.strings(
            c,
            "SELECT m[1] FROM unnest(ARRAY['fencing.check_one(text,bigint)',"
                + " 'fencing.check_token(text,bigint)', 'fencing.check_tokens(text[],bigint[])',"
                + " 'fencing.check_tokens_if_written(text[],bigint[])',"
                + " 'fencing.fence(text,bigint)']::regprocedure[]) f,"
                + " regexp_matches(pg_get_functiondef(f), '(-?[0-9]+) /\\* key space \\*/', 'g') m")
        .stream()
        .map(Integer::valueOf)
        .toList();
  }
}
