package dev.fencing.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingRefusedException;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockingTaskExecutor.TaskResult;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class FencedLockProviderTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final Duration LONG = Duration.ofSeconds(30);

  private LeaseClient leasesA;
  private LeaseClient leasesB;
  private FencedLockProvider a;
  private FencedLockProvider b;
  private DataSource fenced;

  @BeforeAll
  static void migrate() throws SQLException {
    // the test database's own roles (roles are cluster-wide: the defaults may serve another one)
    FencingMigrations.builder(db.migrationDataSource())
        .ownerRole(db.ownerRole())
        .applicationRole(db.appRole())
        .build()
        .migrate();
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      s.execute("CREATE TABLE job_write (job text, resource text, written_by text)");
    }
  }

  @BeforeEach
  void providers() {
    leasesA = LeaseClient.builder(db.dataSource()).holder("instance-a").build();
    leasesB = LeaseClient.builder(db.dataSource()).holder("instance-b").build();
    a = FencedLockProvider.builder(leasesA).build();
    b = FencedLockProvider.builder(leasesB).build();
    fenced = FencedDataSource.wrap(db.dataSource());
  }

  @AfterEach
  void close() {
    a.close();
    b.close();
    leasesA.close();
    leasesB.close();
  }

  @Test
  void lockBindsTheLeaseTokenOnTheJobThreadAndUnlockUnbindsAndReleases() {
    SimpleLock lock = a.lock(config("bind-job", LONG, Duration.ZERO)).orElseThrow();
    Optional<FencingToken> bound = Fencing.current().token("bind-job");
    assertThat(bound).isPresent();
    assertThat(a.heldLeases())
        .singleElement()
        .satisfies(l -> assertThat(l.token()).isEqualTo(bound.get()));
    assertThat(b.lock(config("bind-job", LONG, Duration.ZERO))).as("held by a").isEmpty();

    lock.unlock();

    assertThat(Fencing.current().isEmpty()).isTrue();
    assertThat(a.heldLeases()).isEmpty();
    SimpleLock taken = b.lock(config("bind-job", LONG, Duration.ZERO)).orElseThrow();
    assertThat(Fencing.current().token("bind-job").orElseThrow().value())
        .isGreaterThan(bound.get().value());
    taken.unlock();
    assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class);
  }

  /**
   * A kept-alive lease never ends while the job hangs: lockAtMostFor (ShedLock's "the lock ends
   * after that time even if the job still runs") would silently not hold. Refused when built.
   */
  @Test
  void aLeaseClientThatKeepsLeasesAliveIsRefused() {
    try (LeaseClient keptAlive =
        LeaseClient.builder(db.dataSource()).holder("kept-alive").keepAlive(true).build()) {
      assertThat(keptAlive.keepsAlive()).isTrue();
      assertThat(leasesA.keepsAlive()).isFalse();
      FencedLockProvider.Builder builder = FencedLockProvider.builder(keptAlive);
      assertThatThrownBy(builder::build)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("keep-alive")
          .hasMessageContaining("lockAtMostFor");
    }
  }

  @Test
  void aJobPausedPastLockAtMostForIsRefusedOnceAnotherInstanceTookItOver() throws Exception {
    // long enough for a's first write even at load 40 on 2 cores (CI); 1 s was not
    Duration atMost = Duration.ofSeconds(5);
    CountDownLatch paused = new CountDownLatch(1);
    CountDownLatch resume = new CountDownLatch(1);
    CompletableFuture<Void> jobA =
        CompletableFuture.runAsync(
            () -> {
              try {
                new DefaultLockingTaskExecutor(a)
                    .executeWithLock(
                        (Runnable)
                            () -> {
                              write("pause-job", "a-before-pause");
                              paused.countDown();
                              awaitLatch(resume);
                              write("pause-job", "a-after-pause");
                            },
                        config("pause-job", atMost, Duration.ZERO));
              } catch (RuntimeException e) {
                throw e;
              }
            });
    assertThat(paused.await(30, TimeUnit.SECONDS)).isTrue();

    // instance a is paused; its lease runs out on the database clock and b takes the lock over
    await().atMost(Duration.ofSeconds(30)).until(() -> runAsB("pause-job").wasExecuted());
    resume.countDown();

    assertThat(jobA)
        .failsWithin(Duration.ofSeconds(30))
        .withThrowableThat()
        .havingRootCause()
        .isInstanceOf(FencingRefusedException.class); // the client knows first: LeaseLostException
    assertThat(written("pause-job")).containsExactly("a-before-pause", "b");
    assertThat(rejections("pause-job")).isEqualTo(1);
  }

  @Test
  void lockAtLeastForKeepsTheLeaseAfterAnEarlyUnlockButNotTheBinding() {
    // b's first attempt must come within it even at load 40 on 2 cores (CI); 1.5 s was not enough
    Duration atLeast = Duration.ofSeconds(5);
    LockConfiguration configuration = config("least-job", LONG, atLeast);
    Instant atLeastUntil = configuration.getLockAtLeastUntil();
    a.lock(configuration).orElseThrow().unlock();

    assertThat(Fencing.current().isEmpty()).as("unbound at unlock").isTrue();
    assertThat(b.lock(config("least-job", LONG, Duration.ZERO))).as("still held").isEmpty();
    SimpleLock taken =
        await()
            .pollInSameThread()
            .atMost(Duration.ofSeconds(30))
            .until(() -> b.lock(config("least-job", LONG, Duration.ZERO)), Optional::isPresent)
            .orElseThrow();
    assertThat(Instant.now()).isAfterOrEqualTo(atLeastUntil);
    assertThat(a.heldLeases()).isEmpty();
    taken.unlock();
  }

  @Test
  void extendRenewsTheLeaseAndKeepsTheTokenBound() throws SQLException {
    Duration atMost = Duration.ofSeconds(20);
    SimpleLock first = a.lock(config("extend-job", atMost, Duration.ZERO)).orElseThrow();
    FencingToken token = Fencing.current().token("extend-job").orElseThrow();
    Instant before = a.heldLeases().get(0).expiresAt();

    SimpleLock second = first.extend(atMost, Duration.ZERO).orElseThrow();

    assertThat(a.heldLeases().get(0).expiresAt()).isAfter(before);
    assertThat(Fencing.current().token("extend-job")).contains(token);
    write("extend-job", "after-extend");
    assertThatThrownBy(first::unlock).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> second.extend(Duration.ofSeconds(5), Duration.ZERO))
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("PT20S");
    second.unlock();
    assertThat(Fencing.current().isEmpty()).isTrue();
    assertThat(written("extend-job")).containsExactly("after-extend");
  }

  @Test
  void extendOfALeaseTakenOverGivesEmptyAndUnlockStillUnbinds() {
    SimpleLock lock =
        a.lock(config("lost-job", Duration.ofSeconds(1), Duration.ZERO)).orElseThrow();
    // b takes the lock over on its own thread once a's lease ran out
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                CompletableFuture.supplyAsync(
                        () -> {
                          Optional<SimpleLock> taken =
                              b.lock(config("lost-job", LONG, Duration.ZERO));
                          taken.ifPresent(SimpleLock::unlock);
                          return taken.isPresent();
                        })
                    .get());

    assertThat(lock.extend(Duration.ofSeconds(1), Duration.ZERO)).isEmpty();
    assertThatThrownBy(() -> write("lost-job", "late"))
        .hasRootCauseInstanceOf(FencingRefusedException.class);
    lock.unlock();
    assertThat(Fencing.current().isEmpty()).isTrue();
    assertThat(written("lost-job")).isEmpty();
  }

  @Test
  void badLockNamesAndLengthsAreRefusedBeforeAnythingIsAcquired() throws SQLException {
    assertThatThrownBy(() -> a.lock(config("night job", LONG, Duration.ZERO)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("\" \" at position 6");
    assertThatThrownBy(() -> a.lock(config("long-job", Duration.ofDays(8), Duration.ZERO)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ttl must be between 1 ms and 7 days");
    assertThatThrownBy(() -> FencedLockProvider.builder(leasesA).resourcePrefix("job "))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(Fencing.current().isEmpty()).isTrue();
    assertThat(a.heldLeases()).isEmpty();
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement("SELECT count(*) FROM fencing.status('long-job')")) {
      assertThatThrownBy(ps::executeQuery).hasMessageContaining("long-job");
    }
  }

  @Test
  void resourcePrefixNamesTheFencedResource() {
    FencedLockProvider prefixed =
        FencedLockProvider.builder(leasesA).resourcePrefix("job:").build();
    try {
      SimpleLock lock = prefixed.lock(config("nightly", LONG, Duration.ZERO)).orElseThrow();
      assertThat(Fencing.current().tokens())
          .extracting(FencingToken::resource)
          .containsExactly("job:nightly");
      lock.unlock();
    } finally {
      prefixed.close();
    }
  }

  private TaskResult<Boolean> runAsB(String job) throws Exception {
    try {
      return new DefaultLockingTaskExecutor(b)
          .executeWithLock(
              () -> {
                write(job, "b");
                return true;
              },
              config(job, LONG, Duration.ZERO));
    } catch (Exception | Error e) {
      throw e;
    } catch (Throwable t) {
      throw new IllegalStateException(t);
    }
  }

  private static LockConfiguration config(String name, Duration atMost, Duration atLeast) {
    return new LockConfiguration(Instant.now(), name, atMost, atLeast);
  }

  private void write(String resource, String by) {
    try (Connection c = fenced.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO job_write (job, resource, written_by) VALUES (?, ?, ?)")) {
      ps.setString(1, resource);
      ps.setString(2, resource);
      ps.setString(3, by);
      ps.executeUpdate();
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static List<String> written(String job) {
    List<String> by = new ArrayList<>();
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement("SELECT written_by FROM job_write WHERE job = ? ORDER BY ctid")) {
      ps.setString(1, job);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          by.add(rs.getString(1));
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    return by;
  }

  private static long rejections(String resource) throws SQLException {
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement("SELECT count(*) FROM fencing.rejection WHERE resource = ?")) {
      ps.setString(1, resource);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private static void awaitLatch(CountDownLatch latch) {
    try {
      if (!latch.await(60, TimeUnit.SECONDS)) {
        throw new IllegalStateException("never resumed");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
