package dev.fencing.migrations;

import static dev.fencing.migrations.Interleaving.PATIENCE;
import static dev.fencing.migrations.Interleaving.async;
import static dev.fencing.migrations.Interleaving.awaitBlockedBy;
import static dev.fencing.migrations.Interleaving.begin;
import static dev.fencing.migrations.Interleaving.join;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import dev.fencing.migrations.Interleaving.Isolation;
import dev.fencing.migrations.Interleaving.Session;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The upgrade to the head run while fenced transactions are open, under each isolation level: a
 * check accepted on the old definitions before the migration either holds the migration off or
 * still holds the next holder off after it (its write commits before the next token is handed out),
 * and a token carried on the old definitions and superseded after the migration never writes. The
 * interleavings are forced through {@code pg_blocking_pids}, never sleeps.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class UpgradeUnderTrafficTest {
  /** An instance field: every test starts from an empty database. */
  @RegisterExtension final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final Duration LEASE = Duration.ofMinutes(5);

  private static long blockedBy(Connection observer, int pid) throws SQLException {
    return FenceSql.longValue(
        observer,
        "SELECT count(*) FROM pg_stat_activity WHERE ? = ANY (pg_blocking_pids(pid))",
        pid);
  }

  private static void setUp(Connection c) throws SQLException {
    Interleaving.createWriteTable(c);
    FenceSql.run(c, "CREATE TABLE public.ledger (id int PRIMARY KEY, note text)");
    FenceSql.run(c, "SELECT fencing.create_resource('upg/ledger')");
    FenceSql.run(c, "SELECT fencing.protect('public.ledger', 'upg/ledger')");
  }

  @ParameterizedTest(name = "from V{0}, {1}")
  @CsvSource({
    "10, READ_COMMITTED",
    "10, REPEATABLE_READ",
    "12, READ_COMMITTED",
    "20, READ_COMMITTED",
    "20, REPEATABLE_READ",
    "30, READ_COMMITTED",
    "30, SERIALIZABLE",
    "38, READ_COMMITTED",
    "38, REPEATABLE_READ"
  })
  void aCheckAcceptedBeforeTheUpgradeHoldsTheNextHolderOffAfterIt(int from, Isolation isolation)
      throws Exception {
    UpgradePathTest.migrateTo(db, Integer.toString(from));
    ExecutorService pool = Interleaving.newPool();
    try (Connection observer = db.connect();
        Session writer = Interleaving.writer(db, isolation);
        Session acquirer = Interleaving.session(db);
        Session plainAcquirer = Interleaving.session(db)) {
      setUp(observer);
      long held = Fence.acquire(observer, "upg/ledger", "holder", LEASE);
      long plain = Fence.acquire(observer, "upg/plain", "holder", LEASE);

      begin(writer, isolation);
      assertThat(Fence.check(writer.c(), "upg/ledger", held)).isEqualTo(held);
      assertThat(Fence.check(writer.c(), "upg/plain", plain)).isEqualTo(plain);
      // the holder lets go (a crash would let the lease expire): the next holder may take it
      assertThat(Fence.release(observer, "upg/ledger", held)).isTrue();
      assertThat(Fence.release(observer, "upg/plain", plain)).isTrue();

      CompletableFuture<Integer> migrate = async(pool, () -> Fence.migrate(db));
      await("the migration done, or waiting for the open check")
          .atMost(PATIENCE)
          .pollInterval(Duration.ofMillis(5))
          .until(() -> migrate.isDone() || blockedBy(observer, writer.pid()) > 0);
      boolean waited = !migrate.isDone();
      CompletableFuture<Fence.Acquired> next = null;
      CompletableFuture<Fence.Acquired> nextPlain = null;
      if (!waited) {
        assertThat(join(migrate)).isPositive();
        // the new definitions: the next holder waits for the check the old ones accepted
        next =
            async(pool, () -> Fence.tryAcquire(acquirer.c(), "upg/ledger", "b", LEASE, PATIENCE));
        awaitBlockedBy(observer, acquirer.pid(), writer.pid());
        nextPlain =
            async(
                pool, () -> Fence.tryAcquire(plainAcquirer.c(), "upg/plain", "b", LEASE, PATIENCE));
        awaitBlockedBy(observer, plainAcquirer.pid(), writer.pid());
      }
      FenceSql.run(writer.c(), "INSERT INTO public.ledger VALUES (1, 'checked before')");
      Interleaving.write(writer, "upg/plain", plain, "checked before");
      writer.c().commit();
      if (waited) {
        assertThat(join(migrate)).isPositive();
        next = async(pool, () -> Fence.tryAcquire(acquirer.c(), "upg/ledger", "b", LEASE));
        nextPlain = async(pool, () -> Fence.tryAcquire(plainAcquirer.c(), "upg/plain", "b", LEASE));
      }
      Fence.Acquired a = join(next);
      Fence.Acquired p = join(nextPlain);
      assertThat(a.acquired()).isTrue();
      assertThat(p.acquired()).isTrue();
      assertThat(a.token()).isNotNull().isGreaterThan(held);
      assertThat(p.token()).isNotNull().isGreaterThan(plain);
      Fence.migrations(db).validate();

      // the old token writes no more, on either resource
      begin(writer, isolation);
      Fence.assertFails(Fence.STALE, () -> Fence.check(writer.c(), "upg/ledger", held));
      writer.c().rollback();
      begin(writer, isolation);
      Fence.assertFails(Fence.STALE, () -> Fence.check(writer.c(), "upg/plain", plain));
      writer.c().rollback();
      assertThat(FenceSql.longValue(observer, "SELECT count(*) FROM public.ledger")).isOne();
      assertThat(Interleaving.writes(observer, "upg/plain", "checked before")).isOne();
    } finally {
      Interleaving.shutdown(pool);
    }
  }

  @ParameterizedTest(name = "from V{0}, {1}")
  @CsvSource({
    "10, READ_COMMITTED",
    "10, REPEATABLE_READ",
    "12, READ_COMMITTED",
    "20, READ_COMMITTED",
    "20, REPEATABLE_READ",
    "30, READ_COMMITTED",
    "30, SERIALIZABLE",
    "38, READ_COMMITTED",
    "38, REPEATABLE_READ"
  })
  void aTokenCarriedBeforeTheUpgradeAndSupersededAfterItNeverWrites(int from, Isolation isolation)
      throws Exception {
    UpgradePathTest.migrateTo(db, Integer.toString(from));
    ExecutorService pool = Interleaving.newPool();
    try (Connection observer = db.connect();
        Session writer = Interleaving.writer(db, isolation)) {
      setUp(observer);
      long held = Fence.acquire(observer, "upg/ledger", "holder", LEASE);

      begin(writer, isolation);
      FenceSql.run(writer.c(), "SELECT fencing.carry('upg/ledger', ?)", held);
      assertThat(FenceSql.longValue(writer.c(), "SELECT count(*) FROM public.ledger")).isZero();

      CompletableFuture<Integer> migrate = async(pool, () -> Fence.migrate(db));
      await("the migration done, or waiting for the open transaction")
          .atMost(PATIENCE)
          .pollInterval(Duration.ofMillis(5))
          .until(() -> migrate.isDone() || blockedBy(observer, writer.pid()) > 0);
      if (!migrate.isDone()) {
        // the migration waits for the transaction: it can only write on the old definitions
        writer.c().rollback();
        assertThat(join(migrate)).isPositive();
        begin(writer, isolation);
        FenceSql.run(writer.c(), "SELECT fencing.carry('upg/ledger', ?)", held);
      } else {
        assertThat(join(migrate)).isPositive();
      }
      assertThat(Fence.release(observer, "upg/ledger", held)).isTrue();
      long next = Fence.acquire(observer, "upg/ledger", "b", LEASE);
      assertThat(next).isGreaterThan(held);

      SQLException refused =
          catchThrowableOfType(
              SQLException.class,
              () -> FenceSql.run(writer.c(), "INSERT INTO public.ledger VALUES (1, 'stale')"));
      assertThat((Object) refused).as("the stale write is refused").isNotNull();
      assertThat(refused.getSQLState())
          .as(refused.getMessage())
          .isIn(Fence.STALE, Interleaving.SERIALIZATION_FAILURE);
      Interleaving.tryCommit(writer);
      assertThat(FenceSql.longValue(observer, "SELECT count(*) FROM public.ledger")).isZero();
      Fence.migrations(db).validate();
    } finally {
      Interleaving.shutdown(pool);
    }
  }

  @ParameterizedTest(name = "from V{0}")
  @CsvSource({"10", "20", "26", "30", "38"})
  void anAcquisitionWaitingForAHandoverAcrossTheUpgradeIssuesAboveEveryTokenBefore(int from)
      throws Exception {
    UpgradePathTest.migrateTo(db, Integer.toString(from));
    ExecutorService pool = Interleaving.newPool();
    try (Connection observer = db.connect();
        Session writer = Interleaving.writer(db, Isolation.READ_COMMITTED);
        Session acquirer = Interleaving.session(db)) {
      setUp(observer);
      long held = Fence.acquire(observer, "upg/ledger", "holder", LEASE);
      begin(writer, Isolation.READ_COMMITTED);
      assertThat(Fence.check(writer.c(), "upg/ledger", held)).isEqualTo(held);
      assertThat(Fence.release(observer, "upg/ledger", held)).isTrue();

      // an acquisition on the old definitions waits for the check's transaction
      CompletableFuture<Fence.Acquired> next =
          async(pool, () -> Fence.tryAcquire(acquirer.c(), "upg/ledger", "b", LEASE, PATIENCE));
      awaitBlockedBy(observer, acquirer.pid(), writer.pid());
      CompletableFuture<Integer> migrate = async(pool, () -> Fence.migrate(db));
      await("the migration done, or waiting")
          .atMost(PATIENCE)
          .pollInterval(Duration.ofMillis(5))
          .until(
              () ->
                  migrate.isDone()
                      || blockedBy(observer, writer.pid()) > 1
                      || blockedBy(observer, acquirer.pid()) > 0);
      assertThat(next).isNotDone();
      FenceSql.run(writer.c(), "INSERT INTO public.ledger VALUES (1, 'checked before')");
      writer.c().commit();
      Fence.Acquired a = join(next);
      assertThat(join(migrate)).isPositive();
      assertThat(a.acquired()).isTrue();
      long token = a.token();
      assertThat(token).isGreaterThan(held);
      Fence.migrations(db).validate();

      begin(writer, Isolation.READ_COMMITTED);
      Fence.assertFails(Fence.STALE, () -> Fence.check(writer.c(), "upg/ledger", held));
      writer.c().rollback();
      assertThat(Fence.check(writer.c(), "upg/ledger", token)).isEqualTo(token);
      FenceSql.run(writer.c(), "INSERT INTO public.ledger VALUES (2, 'the next holder')");
      writer.c().commit();
      assertThat(Fence.release(observer, "upg/ledger", token)).isTrue();
      assertThat(Fence.acquire(observer, "upg/ledger", "c", LEASE)).isGreaterThan(token);
      assertThat(Fence.acquire(observer, "upg/other", "c", LEASE)).isGreaterThan(token);
      assertThat(FenceSql.longValue(observer, "SELECT count(*) FROM public.ledger")).isEqualTo(2);
    } finally {
      Interleaving.shutdown(pool);
    }
  }
}
