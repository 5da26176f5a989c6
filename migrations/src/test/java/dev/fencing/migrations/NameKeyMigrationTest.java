package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.STALE;
import static dev.fencing.migrations.Interleaving.PATIENCE;
import static dev.fencing.migrations.Interleaving.async;
import static dev.fencing.migrations.Interleaving.awaitBlockedBy;
import static dev.fencing.migrations.Interleaving.begin;
import static dev.fencing.migrations.Interleaving.join;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.migrations.Interleaving.Isolation;
import dev.fencing.migrations.Interleaving.Session;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Migration V28 applied while the fence is in use: it waits for a check accepted under the old (id)
 * key, and a transaction that began before it and calls the fence only afterwards, running bodies
 * its session compiled before the migration, still meets the acquisitions and checks after it on
 * the name's key (V28 redefines advisory_key(id) as that key).
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class NameKeyMigrationTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final Duration LEASE = Duration.ofMinutes(5);

  private static void migrateTo27() {
    Flyway.configure(NameKeyMigrationTest.class.getClassLoader())
        .dataSource(db.migrationDataSource())
        .schemas("fencing")
        .defaultSchema("fencing")
        .table(FencingMigrations.HISTORY_TABLE)
        .locations(FencingMigrations.LOCATION)
        .placeholders(Map.of("app_role", db.appRole(), "owner_role", db.ownerRole()))
        .target("27")
        .load()
        .migrate();
  }

  private static long released(Connection c, String res) throws SQLException {
    long token = Fence.acquire(c, res, "holder-a", LEASE);
    assertThat(Fence.release(c, res, token)).isTrue();
    return token;
  }

  @Test
  void theMigrationWaitsForOldKeyChecksAndOldBodiesMeetTheNameKey() throws Exception {
    migrateTo27();
    ExecutorService pool = Interleaving.newPool();
    try (Connection observer = db.connect();
        Session open = Interleaving.writer(db, Isolation.READ_COMMITTED);
        Session staleChecker = Interleaving.writer(db, Isolation.READ_COMMITTED);
        Session staleAcquirer = Interleaving.writer(db, Isolation.READ_COMMITTED);
        Session checker = Interleaving.writer(db, Isolation.READ_COMMITTED);
        Session acquirer = Interleaving.session(db)) {
      Interleaving.createWriteTable(observer);
      long t1 = released(observer, "mig/open");
      long s1 = released(observer, "mig/stale-check");
      long a1 = released(observer, "mig/stale-acquire");

      // two sessions compile V27's bodies, then begin a transaction that touches no relation
      FenceSql.run(staleChecker.c(), "SELECT fencing.check_one(?, ?)", "mig/stale-check", s1);
      staleChecker.c().commit();
      begin(staleChecker, Isolation.READ_COMMITTED);
      Fence.acquire(staleAcquirer.c(), "mig/warm", "holder-w", LEASE);
      staleAcquirer.c().commit();
      begin(staleAcquirer, Isolation.READ_COMMITTED);

      // a check accepted under the old key, open: the migration waits for it
      begin(open, Isolation.READ_COMMITTED);
      assertThat(Fence.check(open.c(), "mig/open", t1)).isEqualTo(t1);
      CompletableFuture<Integer> migrate = async(pool, () -> Fence.migrate(db));
      await("the migration waiting for the open check")
          .atMost(PATIENCE)
          .pollInterval(Duration.ofMillis(5))
          .until(
              () ->
                  FenceSql.longValue(
                          observer,
                          "SELECT count(*) FROM pg_stat_activity"
                              + " WHERE ? = ANY (pg_blocking_pids(pid))",
                          open.pid())
                      > 0);
      Interleaving.write(open, "mig/open", t1, "under-the-old-key");
      open.c().commit();
      assertThat(join(migrate)) // V28 and every migration after it
          .isEqualTo(Fence.MIGRATIONS - Fence.VERSIONS.indexOf(27) - 1);
      assertThat(Interleaving.writes(observer, "mig/open", "under-the-old-key")).isOne();

      // the transaction begun before the migration checks now: an acquisition waits for it
      assertThat(
              FenceSql.longValue(
                  staleChecker.c(), "SELECT fencing.check_one(?, ?)", "mig/stale-check", s1))
          .isZero();
      CompletableFuture<Fence.Acquired> acquire =
          async(
              pool,
              () -> Fence.tryAcquire(acquirer.c(), "mig/stale-check", "holder-b", LEASE, PATIENCE));
      awaitBlockedBy(observer, acquirer.pid(), staleChecker.pid());
      staleChecker.c().commit();
      Fence.Acquired acquired = join(acquire);
      assertThat(acquired.acquired()).isTrue();
      Fence.assertFails(
          STALE,
          () ->
              FenceSql.run(
                  staleChecker.c(), "SELECT fencing.check_one(?, ?)", "mig/stale-check", s1));
      staleChecker.c().rollback();

      // the acquisition begun before the migration waits for a check made after it
      begin(checker, Isolation.READ_COMMITTED);
      assertThat(
              FenceSql.longValue(
                  checker.c(), "SELECT fencing.check_one(?, ?)", "mig/stale-acquire", a1))
          .isZero();
      CompletableFuture<Fence.Acquired> handover =
          async(
              pool,
              () ->
                  Fence.tryAcquire(
                      staleAcquirer.c(), "mig/stale-acquire", "holder-c", LEASE, PATIENCE));
      awaitBlockedBy(observer, staleAcquirer.pid(), checker.pid());
      checker.c().commit();
      Fence.Acquired handedOver = join(handover);
      staleAcquirer.c().commit();
      assertThat(handedOver.acquired()).isTrue();
      assertThat(handedOver.token()).isNotNull().isGreaterThan(a1);
    } finally {
      Interleaving.shutdown(pool);
    }
  }
}
