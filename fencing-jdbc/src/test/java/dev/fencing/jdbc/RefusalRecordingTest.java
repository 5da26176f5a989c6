package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.LONG_TTL;
import static dev.fencing.jdbc.FencingTestSupport.PATIENCE;
import static dev.fencing.jdbc.FencingTestSupport.awaitWaitingOnLock;
import static dev.fencing.jdbc.FencingTestSupport.backendPid;
import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.insert;
import static dev.fencing.jdbc.FencingTestSupport.nextBlock;
import static dev.fencing.jdbc.FencingTestSupport.present;
import static dev.fencing.jdbc.FencingTestSupport.rejections;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A refusal whose recording is cut off — the connection dies between the rollback and the record,
 * as when the server crashes right then — is not lost: it is recorded after the next successful
 * commit on the same {@link FencedDataSource}. (Found by the torture test.) The cut is forced: a
 * lock on the rejection log holds the record back while its connection is terminated.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class RefusalRecordingTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;

  private final ExecutorService executor = Executors.newCachedThreadPool();

  @BeforeAll
  static void migrate() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    FencingTestSupport.createTestSchema(plain);
  }

  @AfterEach
  void stop() {
    executor.shutdownNow();
  }

  @Test
  void aCutOffRecordingIsRecordedAfterTheNextCommitOfATransaction() throws Exception {
    String resource = "recording-cut-commit";
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    Lease current = refuseWithRecordingCutOff(fenced, resource);

    try (Connection c = fenced.getConnection()) {
      c.setAutoCommit(false);
      try (FencingScope scope = Fencing.bind(current)) {
        insert(c, nextBlock());
      }
      c.commit();
    }
    assertThat(rejections(plain, resource, "stale_token")).isEqualTo(1);

    try (Connection c = fenced.getConnection()) {
      c.setAutoCommit(false);
      c.commit();
    }
    assertThat(rejections(plain, resource, "stale_token")).as("recorded once").isEqualTo(1);
  }

  @Test
  void aCutOffRecordingIsRecordedAfterTheNextAutocommitWrite() throws Exception {
    String resource = "recording-cut-autocommit";
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    Lease current = refuseWithRecordingCutOff(fenced, resource);

    int id = nextBlock();
    try (FencingScope scope = Fencing.bind(current);
        Connection c = fenced.getConnection()) {
      insert(c, id);
    }
    assertThat(present(plain, id)).isTrue();
    assertThat(rejections(plain, resource, "stale_token")).isEqualTo(1);
  }

  @Test
  void anotherDataSourceDoesNotRecordIt() throws Exception {
    String resource = "recording-cut-other";
    Lease current = refuseWithRecordingCutOff(FencedDataSource.wrap(plain), resource);

    try (FencingScope scope = Fencing.bind(current);
        Connection c = FencedDataSource.wrap(plain).getConnection()) {
      insert(c, nextBlock());
    }
    assertThat(rejections(plain, resource, "stale_token")).isZero();
  }

  @Test
  void aLeaseLostRefusalIsRecordedOnlyOnceTheDatabaseAgreesTheLeaseIsLost() throws Exception {
    String resource = "recording-lease-lost";
    AtomicLong clock = new AtomicLong(System.nanoTime());
    LeaseClient leases =
        LeaseClient.builder(plain).holder("fast-clock").nanoTime(clock::get).build();
    Lease lease = leases.tryAcquire(resource, LONG_TTL).orElseThrow();
    clock.addAndGet(LONG_TTL.plusSeconds(1).toNanos()); // the client's clock says: expired
    assertThat(lease.isLost()).isTrue();
    assertThat(FencingTestSupport.leaseValid(plain, resource)).as("the database's").isTrue();

    FencedDataSource fenced = FencedDataSource.wrap(plain);
    int id = nextBlock();
    Throwable refused;
    try (FencingScope scope = Fencing.bind(lease);
        Connection c = fenced.getConnection()) {
      refused = catchThrowable(() -> insert(c, id));
    }
    assertThat(refused).isInstanceOf(LeaseLostException.class);
    assertThat(refused.getSuppressed()).as("record_rejection did not agree yet").isNotEmpty();
    assertThat(rejections(plain, resource, "lease_lost")).isZero();

    lease.close(); // released: now the database agrees
    try (Connection c = fenced.getConnection()) {
      c.setAutoCommit(false);
      c.commit();
    }
    assertThat(rejections(plain, resource, "lease_lost")).isEqualTo(1);
    assertThat(present(plain, id)).isFalse();
    leases.close();
  }

  /**
   * A write with a stale token on {@code fenced} is refused, and its recording is cut off.
   *
   * @return the current lease of {@code resource}
   */
  private Lease refuseWithRecordingCutOff(FencedDataSource fenced, String resource)
      throws Exception {
    LeaseClient leases = LeaseClient.builder(plain).holder("recorder").build();
    Lease old = leases.tryAcquire(resource, LONG_TTL).orElseThrow();
    old.close(); // released; the next acquisition makes its token stale
    Lease current = leases.tryAcquire(resource, LONG_TTL).orElseThrow();
    int id = nextBlock();

    Future<Throwable> refusal;
    try (Connection lock = db.connect();
        Connection zombie = fenced.getConnection()) {
      lock.setAutoCommit(false);
      exec(lock, "LOCK TABLE fencing.rejection IN SHARE MODE");
      int pid = backendPid(zombie);
      refusal =
          executor.submit(
              () -> {
                try (FencingScope scope = Fencing.bind(old.token())) {
                  insert(zombie, id);
                  return null;
                } catch (Throwable t) {
                  return t;
                }
              });
      awaitWaitingOnLock(plain, "record_rejection", 1);
      exec(plain, "SELECT pg_terminate_backend(?)", pid);
      lock.rollback();
    }
    Throwable refused = refusal.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    assertThat(refused).isInstanceOf(StaleFencingTokenException.class);
    assertThat(refused.getSuppressed()).as("the recording failed").isNotEmpty();
    assertThat(present(plain, id)).isFalse();
    assertThat(rejections(plain, resource, "stale_token")).isZero();
    return current;
  }
}
