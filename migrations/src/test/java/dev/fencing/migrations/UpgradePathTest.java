package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.MISSING;
import static dev.fencing.migrations.Fence.STALE;
import static dev.fencing.migrations.Fence.assertFails;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A live fence upgraded from an older release to the head, as a user runs it: leases held, tokens
 * issued (an epoch advanced where the version has epochs), a protected table, an external resource;
 * then {@link FencingMigrations#migrate()}. Every token keeps its order (the next one is above
 * everything issued before), a held lease stays held and its token keeps writing, a stale token
 * stays stale, and the protected table stays protected.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class UpgradePathTest {
  /** An instance field: every test starts from an empty database. */
  @RegisterExtension final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final Duration LEASE = Duration.ofMinutes(5);

  static void migrateTo(TestDatabaseExtension db, String version) {
    Flyway.configure(UpgradePathTest.class.getClassLoader())
        .dataSource(db.migrationDataSource())
        .schemas("fencing")
        .defaultSchema("fencing")
        .table(FencingMigrations.HISTORY_TABLE)
        .locations(FencingMigrations.LOCATION)
        .placeholders(Map.of("app_role", db.appRole(), "owner_role", db.ownerRole()))
        .target(version)
        .load()
        .migrate();
  }

  /** The largest token the fence issued or its resources saw (external ones aside). */
  private static long largestToken(Connection c) throws SQLException {
    return FenceSql.longValue(
        c,
        "SELECT greatest((SELECT coalesce(max(max_seen), 0) FROM fencing.resource"
            + " WHERE issuer = 'local'),"
            + " (SELECT last_value FROM fencing.token_seq))");
  }

  @ParameterizedTest(name = "from V{0}")
  @ValueSource(ints = {10, 20, 30, 38})
  void aLiveFenceUpgradedKeepsItsTokensLeasesAndProtection(int from) throws SQLException {
    migrateTo(db, Integer.toString(from));
    long held;
    long stale;
    long other;
    List<Long> issued = new ArrayList<>();
    try (Connection c = db.connect()) {
      FenceSql.run(c, "CREATE TABLE public.ledger (id int PRIMARY KEY, note text)");
      FenceSql.run(c, "SELECT fencing.create_resource('upg/ledger')");
      FenceSql.run(c, "SELECT fencing.protect('public.ledger', 'upg/ledger')");
      stale = Fence.acquire(c, "upg/ledger", "old-holder", LEASE);
      issued.add(stale);
      assertThat(Fence.release(c, "upg/ledger", stale)).isTrue();
      if (from >= 12) { // epochs: the tokens after an advance are in the next epoch
        FenceSql.run(c, "SELECT fencing.advance_epoch()");
      }
      held = Fence.acquire(c, "upg/ledger", "holder", LEASE);
      issued.add(held);
      assertThat(held).isGreaterThan(stale);
      other = Fence.acquire(c, "upg/other", "holder", LEASE);
      issued.add(other);
      assertThat(Fence.release(c, "upg/other", other)).isTrue();
      FenceSql.run(c, "SELECT fencing.create_resource('upg/ext', true)");
      c.setAutoCommit(false);
      Fence.check(c, "upg/ext", 1_000_000L);
      c.commit();
      Fence.check(c, "upg/ledger", held);
      FenceSql.run(c, "INSERT INTO public.ledger VALUES (1, 'before the upgrade')");
      c.commit();
      c.setAutoCommit(true);
    }
    long before;
    try (Connection c = db.connect()) {
      before = largestToken(c);
    }

    assertThat(Fence.migrate(db)).isEqualTo(Fence.MIGRATIONS - Fence.VERSIONS.indexOf(from) - 1);
    Fence.migrations(db).validate();

    try (Connection c = db.connect()) {
      // the lease held across the upgrade: still held, its token still writes
      assertThat(Interleaving.status(c, "upg/ledger").holder()).isEqualTo("holder");
      assertThat(Interleaving.status(c, "upg/ledger").leaseToken()).isEqualTo(held);
      Fence.renew(c, "upg/ledger", held, LEASE);
      assertThat(Fence.tryAcquire(c, "upg/ledger", "intruder", LEASE).acquired()).isFalse();
      c.setAutoCommit(false);
      Fence.check(c, "upg/ledger", held);
      FenceSql.run(c, "INSERT INTO public.ledger VALUES (2, 'after the upgrade')");
      c.commit();
      // the token released before stays stale, at the check and at the protected table
      assertFails(STALE, () -> Fence.check(c, "upg/ledger", stale));
      c.rollback();
      FenceSql.run(c, "SELECT fencing.carry('upg/ledger', ?)", stale);
      assertFails(STALE, () -> FenceSql.run(c, "INSERT INTO public.ledger VALUES (3, 'stale')"));
      c.rollback();
      assertFails(MISSING, () -> FenceSql.run(c, "INSERT INTO public.ledger VALUES (4, 'none')"));
      c.rollback();
      assertFails(MISSING, () -> FenceSql.run(c, "DELETE FROM public.ledger"));
      c.rollback();
      assertFails(MISSING, () -> FenceSql.run(c, "TRUNCATE public.ledger"));
      c.rollback();
      // the external resource keeps what it saw
      assertFails(STALE, () -> Fence.check(c, "upg/ext", 999_999L));
      c.rollback();
      assertThat(Fence.check(c, "upg/ext", 1_000_001L)).isEqualTo(1_000_001L);
      c.commit();
      c.setAutoCommit(true);
      assertThat(Fence.release(c, "upg/ledger", held)).isTrue();

      // every token issued after the upgrade is above every token issued or seen before it
      long next = Fence.acquire(c, "upg/ledger", "next-holder", LEASE);
      long again = Fence.acquire(c, "upg/other", "next-holder", LEASE);
      long fresh = Fence.acquire(c, "upg/fresh", "next-holder", LEASE);
      for (long t : List.of(next, again, fresh)) {
        assertThat(t).isGreaterThan(before).isGreaterThan(held);
      }
      assertFails(
          STALE, () -> FenceSql.run(c, "SELECT fencing.check_token('upg/ledger', ?)", held));
      assertThat(FenceSql.strings(c, "SELECT note FROM public.ledger ORDER BY id"))
          .containsExactly("before the upgrade", "after the upgrade");
    }
  }
}
