package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.PATIENCE;
import static dev.fencing.jdbc.FencingTestSupport.awaitWaitingOnLock;
import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.FencingTestSupport.insert;
import static dev.fencing.jdbc.FencingTestSupport.maxSeen;
import static dev.fencing.jdbc.FencingTestSupport.nextBlock;
import static dev.fencing.jdbc.FencingTestSupport.present;
import static dev.fencing.jdbc.FencingTestSupport.query;
import static dev.fencing.jdbc.FencingTestSupport.waitingOnLock;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The handover between two holders of an external resource (tokens from ZooKeeper, etcd): the new
 * token advances {@code max_seen} only at its holder's first fenced write, not at acquisition.
 * Forced interleavings at each isolation level, through {@link FencedDataSource}; the README's
 * "ZooKeeper and etcd" section states what they prove.
 */
class ExternalTokenHandoverTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final AtomicInteger NAMES = new AtomicInteger();
  private static DataSource plain;
  private static FencedDataSource fenced;
  private static ExecutorService threads;

  @BeforeAll
  static void setUp() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = FencingTestSupport.plain(db, ds -> ds);
    FencingTestSupport.createTestSchema(plain);
    fenced = FencedDataSource.wrap(plain);
    threads = Executors.newCachedThreadPool();
  }

  @AfterAll
  static void tearDown() {
    threads.shutdownNow();
  }

  private static String resource(String hint, Isolation iso) {
    return "handover-"
        + hint
        + "-"
        + iso.name().toLowerCase(java.util.Locale.ROOT)
        + "-"
        + NAMES.incrementAndGet();
  }

  /** A fenced connection in a transaction at {@code iso}. */
  private static Connection writer(Isolation iso) throws SQLException {
    Connection c = fenced.getConnection();
    c.setTransactionIsolation(iso.level);
    c.setAutoCommit(false);
    return c;
  }

  /** On another thread: one transaction writing row {@code id} with {@code token}, committed. */
  private static Future<Void> writeAsync(Isolation iso, FencingToken token, int id) {
    return threads.submit(
        () -> {
          try (FencingScope scope = Fencing.bind(token);
              Connection c = writer(iso)) {
            insert(c, id);
            c.commit();
          }
          return null;
        });
  }

  private static SQLException failure(Future<Void> write) throws Exception {
    try {
      write.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      return null;
    } catch (ExecutionException e) {
      if (e.getCause() instanceof SQLException sql) {
        return sql;
      }
      throw e;
    }
  }

  /**
   * The old holder's transaction passed its check (token = max_seen, share lock) before the new
   * holder's first write: it commits; the new holder's first write waits for it, then advances — at
   * every isolation level without a serialization failure (the old holder only locked the row).
   * From then on the old token is refused.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void inFlightTransactionOfTheOldTokenCommitsAndTheFirstWriteOfTheNewOneWaitsForIt(Isolation iso)
      throws Exception {
    String res = externalResource(plain, resource("share", iso), 10);
    int block = nextBlock();
    FencingToken old = FencingToken.of(res, 10);
    FencingToken next = FencingToken.of(res, 20);

    try (FencingScope scope = Fencing.bind(old);
        Connection zombie = writer(iso)) {
      insert(zombie, block); // checked: token 10 = max_seen

      Future<Void> newHolder = writeAsync(iso, next, block + 1);
      awaitWaitingOnLock(plain, "check_one", 1);
      assertThat(newHolder).isNotDone();
      assertThat(maxSeen(plain, res)).isEqualTo(10);

      insert(zombie, block + 2); // still its own transaction: no further check, no wait
      zombie.commit();
      assertThat(present(plain, block)).as("the old holder's in-flight write").isTrue();
      assertThat(present(plain, block + 2)).isTrue();

      assertThat((Throwable) failure(newHolder)).as("the new holder's first write").isNull();
      assertThat(present(plain, block + 1)).isTrue();
      assertThat(maxSeen(plain, res)).isEqualTo(20);

      assertThatThrownBy(() -> insert(zombie, block + 3))
          .isInstanceOfSatisfying(
              StaleFencingTokenException.class,
              e -> {
                assertThat(e.presentedToken()).isEqualTo(10);
                assertThat(e.maxSeen()).isEqualTo(20);
              });
    }
    assertThat(present(plain, block + 3)).as("the old token after the advance").isFalse();
  }

  /**
   * The old holder's first write (it advanced max_seen itself: a row update) is in flight when the
   * new holder writes: the new holder waits; after the old one commits, READ COMMITTED re-reads and
   * advances, REPEATABLE READ and SERIALIZABLE raise 40001 and the retry advances.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void inFlightAdvanceOfTheOldTokenMakesTheNewOneWaitThenRetryUnderSnapshots(Isolation iso)
      throws Exception {
    String res = externalResource(plain, resource("advance", iso), 5);
    int block = nextBlock();
    FencingToken old = FencingToken.of(res, 10);
    FencingToken next = FencingToken.of(res, 20);

    Future<Void> newHolder;
    try (FencingScope scope = Fencing.bind(old);
        Connection zombie = writer(iso)) {
      insert(zombie, block); // advances 5 -> 10, uncommitted
      newHolder = writeAsync(iso, next, block + 1);
      awaitWaitingOnLock(plain, "check_one", 1);
      assertThat(newHolder).isNotDone();
      zombie.commit();
    }
    assertThat(present(plain, block)).isTrue();

    SQLException first = failure(newHolder);
    if (iso.snapshotPerTransaction()) {
      assertThat((Throwable) first).as("a concurrent update under a snapshot").isNotNull();
      assertThat(first.getSQLState()).as(first.getMessage()).isEqualTo("40001");
      assertThat(FencingExceptions.find(first)).as("not a refusal: retry").isEmpty();
      assertThat(present(plain, block + 1)).isFalse();
      assertThat((Throwable) failure(writeAsync(iso, next, block + 1))).as("the retry").isNull();
    } else {
      assertThat((Throwable) first).isNull();
    }
    assertThat(present(plain, block + 1)).isTrue();
    assertThat(maxSeen(plain, res)).isEqualTo(20);
  }

  /**
   * The hazard of fencing at the first write: while the new holder waits, a new transaction of the
   * old token still passes its check (a share lock is granted next to the old holder's share lock,
   * ahead of the waiting update), so a zombie with overlapping transactions keeps the new holder
   * waiting until it stops. Bound the wait with {@code lock_timeout}.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void overlappingTransactionsOfTheOldTokenKeepTheNewHolderWaiting(Isolation iso) throws Exception {
    String res = externalResource(plain, resource("overlap", iso), 10);
    int block = nextBlock();
    FencingToken old = FencingToken.of(res, 10);
    FencingToken next = FencingToken.of(res, 20);

    try (FencingScope scope = Fencing.bind(old);
        Connection first = writer(iso);
        Connection second = writer(iso)) {
      insert(first, block);
      Future<Void> newHolder = writeAsync(iso, next, block + 1);
      awaitWaitingOnLock(plain, "check_one", 1);

      insert(second, block + 2); // passes its check although the new holder is waiting
      first.commit();
      assertThat(newHolder).isNotDone();
      assertThat(waitingOnLock(plain, "check_one")).as("still waiting").isOne();
      second.commit();
      assertThat(present(plain, block + 2)).isTrue();

      assertThat((Throwable) failure(newHolder)).isNull();
      assertThat(maxSeen(plain, res)).isEqualTo(20);
    }
  }

  /**
   * {@link FencedDataSource#fence}: the new holder moves the handover to right after its
   * acquisition. It waits for the old holder's checked transaction like a first write would; from
   * its commit on, the old token is refused although the new holder has written nothing.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void fenceMakesTheHandoverBeforeTheNewHoldersFirstWrite(Isolation iso) throws Exception {
    String res = externalResource(plain, resource("fence", iso), 10);
    int block = nextBlock();
    FencingToken old = FencingToken.of(res, 10);
    FencingToken next = FencingToken.of(res, 20);

    try (FencingScope scope = Fencing.bind(old);
        Connection zombie = writer(iso)) {
      insert(zombie, block);
      Future<Void> fencing =
          threads.submit(
              () -> {
                fenced.fence(next);
                return null;
              });
      awaitWaitingOnLock(plain, "check_one", 1);
      assertThat(fencing).isNotDone();
      zombie.commit();
      assertThat((Throwable) failure(fencing)).isNull();
      assertThat(maxSeen(plain, res)).isEqualTo(20);
      assertThat(present(plain, block)).isTrue();

      assertThatThrownBy(() -> insert(zombie, block + 1))
          .isInstanceOf(StaleFencingTokenException.class);
    }
    assertThat(present(plain, block + 1)).isFalse();
    assertThatThrownBy(() -> fenced.fence(old))
        .isInstanceOfSatisfying(
            StaleFencingTokenException.class, e -> assertThat(e.maxSeen()).isEqualTo(20));
    assertThat(FencingTestSupport.rejections(plain, res, "stale_token")).isEqualTo(2);
    fenced.fence(next); // the same token again: accepted, nothing changes
    assertThat(maxSeen(plain, res)).isEqualTo(20);
  }

  /** lock_timeout bounds the new holder's wait; the failure is not a refusal and can be retried. */
  @Test
  void lockTimeoutBoundsTheNewHoldersWait() throws Exception {
    String res = externalResource(plain, resource("timeout", Isolation.READ_COMMITTED), 10);
    int block = nextBlock();
    try (FencingScope scope = Fencing.bind(FencingToken.of(res, 10));
        Connection zombie = writer(Isolation.READ_COMMITTED)) {
      insert(zombie, block);
      Future<Void> newHolder =
          threads.submit(
              () -> {
                try (FencingScope next = Fencing.bind(FencingToken.of(res, 20));
                    Connection c = writer(Isolation.READ_COMMITTED)) {
                  exec(c, "SET LOCAL lock_timeout = '100ms'");
                  insert(c, block + 1);
                  c.commit();
                }
                return null;
              });
      SQLException e = failure(newHolder);
      assertThat((Throwable) e).isNotNull();
      assertThat(e.getSQLState()).as(e.getMessage()).isEqualTo("55P03");
      assertThat(FencingExceptions.find(e)).isEmpty();
      zombie.commit();
    }
    assertThat(maxSeen(plain, res)).isEqualTo(10);
    assertThat(query(plain, "SELECT count(*) FROM t WHERE id = ?", block + 1)).isEqualTo(0L);
  }

  /** Declaring an external resource: idempotent; a local one of the same name is refused. */
  @Test
  void createExternalResourceIsIdempotentAndRefusesALocalResource() throws Exception {
    fenced.createExternalResource("declared-external");
    fenced.createExternalResource("declared-external");
    assertThat(query(plain, "SELECT issuer FROM fencing.status('declared-external')"))
        .isEqualTo("external");

    try (LeaseClient leases = LeaseClient.builder(plain).holder("h").build();
        Lease lease =
            leases.tryAcquire("declared-local", FencingTestSupport.LONG_TTL).orElseThrow()) {
      assertThat(lease.token().value()).isPositive();
    }
    assertThatThrownBy(() -> fenced.createExternalResource("declared-local"))
        .isInstanceOf(SQLException.class)
        .hasMessageContaining("already exists as local")
        .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("ZF004"));
    assertThat(query(plain, "SELECT issuer FROM fencing.status('declared-local')"))
        .isEqualTo("local");
    // a strict external resource (create_resource(name, true, true)) is another mode: refused too
    try (Connection c = plain.getConnection();
        Statement s = c.createStatement()) {
      s.execute("SELECT fencing.create_resource('declared-strict', true, true)");
    }
    assertThatThrownBy(() -> fenced.createExternalResource("declared-strict"))
        .isInstanceOf(SQLException.class)
        .hasMessageContaining("already exists as external, strict")
        .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("ZF004"));
    assertThat(
            query(plain, "SELECT strict_mode FROM fencing.resource WHERE name = 'declared-strict'"))
        .isEqualTo(true);
    assertThatThrownBy(() -> fenced.createExternalResource("bad name"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("position 4");
    assertThat(query(plain, "SELECT count(*) FROM fencing.resource WHERE name = 'bad name'"))
        .isEqualTo(0L);
  }
}
