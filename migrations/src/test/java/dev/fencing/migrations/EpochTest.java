package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.assertFails;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.util.PSQLException;

/**
 * Issue 16, migration V12: a token is {@code epoch * 2^43 + counter}; the epoch is the server's
 * timeline plus an offset recorded per cluster, database and fence. An exhausted counter is a clear
 * error (2200H) that changes nothing; {@code advance_epoch()} moves on; a fence restored where it
 * has not been adopts an epoch 1024 above everything recorded; moving the sequence to a new epoch
 * is serialised with every other issuance. Failover, split brain and restores on real servers:
 * {@code FailoverTest}.
 */
class EpochTest {
  @RegisterExtension final TestDatabaseExtension db = new TestDatabaseExtension();

  static final long COUNTER = 1L << 43;

  /** How far {@code advance_epoch()} moves the epoch (V39: as far as an adoption). */
  static final long ADVANCE = 1024;

  private static final String EXHAUSTED = "2200H";
  private static final Duration TTL = Duration.ofMinutes(5);
  private static final Duration WAIT = Duration.ofSeconds(30);

  private AppRole app;

  @BeforeEach
  void setUp() throws SQLException {
    assertThat(Fence.migrate(db)).isEqualTo(Fence.MIGRATIONS);
    app = AppRole.create(db, "epoch_app");
  }

  @AfterEach
  void dropRole() throws SQLException {
    app.close();
  }

  @Test
  void aTokenIsTheEpochInItsHighBitsAndACounterInItsLow43() throws SQLException {
    long timeline;
    long epoch;
    try (Connection operator = db.connect()) {
      timeline = FenceSql.longValue(operator, "SELECT timeline_id FROM pg_control_checkpoint()");
      assertThat(FenceSql.longValue(operator, "SELECT timeline FROM fencing.epoch_status()"))
          .isEqualTo(timeline);
      epoch = FenceSql.longValue(operator, "SELECT epoch FROM fencing.epoch_status()");
      assertThat(epoch).as("installed on timeline %s", timeline).isEqualTo(timeline - 1);
    }
    long first;
    long second;
    try (Connection c = app.connect()) {
      first = Fence.acquire(c, "epoch/a", "app", TTL);
      second = Fence.acquire(c, "epoch/b", "app", TTL);
    }
    assertThat(first >> 43).isEqualTo(epoch);
    assertThat(second).isEqualTo(first + 1);
    assertThat(first & (COUNTER - 1)).as("the counter").isEqualTo(1);

    try (Connection operator = db.connect()) {
      assertThat(FenceSql.longValue(operator, "SELECT fencing.advance_epoch()"))
          .isEqualTo(epoch + ADVANCE);
      assertThat(FenceSql.string(operator, "SELECT reason FROM fencing.own_epoch()"))
          .isEqualTo("advanced");
    }
    try (Connection c = app.connect()) {
      assertThat(Fence.acquire(c, "epoch/c", "app", TTL)).isEqualTo(((epoch + ADVANCE) << 43) + 1);
      assertThat(Fence.acquire(c, "epoch/d", "app", TTL)).isEqualTo(((epoch + ADVANCE) << 43) + 2);
      // the old tokens are still the current ones of their resources, and stay accepted
      assertThat(Fence.check(c, "epoch/a", first)).isEqualTo(first);
    }
  }

  @Test
  void anExhaustedCounterIsAClearErrorThatChangesNothingUntilTheOperatorAdvancesTheEpoch()
      throws SQLException {
    long epoch;
    FenceSql.Snapshot before;
    try (Connection c = app.connect()) {
      Fence.acquire(c, "epoch/used", "app", TTL);
    }
    try (Connection operator = db.connect()) {
      epoch = FenceSql.longValue(operator, "SELECT epoch FROM fencing.epoch_status()");
      assertThat(epochNotes()).isEmpty();
      long last = (epoch << 43) + COUNTER - 1;
      FenceSql.run(operator, "SELECT setval('fencing.token_seq', ?)", last);
      assertThat(epochNotes())
          .singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
          .contains(
              "advance_epoch() is due", "epoch " + epoch, "run SELECT fencing.advance_epoch()");
      before = FenceSql.snapshot(operator);
    }
    try (Connection c = app.connect()) {
      SQLException e = assertFails(EXHAUSTED, () -> Fence.acquire(c, "epoch/next", "app", TTL));
      assertThat(e.getMessage())
          .contains("token counter of epoch " + epoch + " is exhausted")
          .contains("fencing.advance_epoch()");
    }
    try (Connection operator = db.connect()) {
      assertThat(FenceSql.snapshot(operator)).as("nothing changed").isEqualTo(before);
      assertThat(FenceSql.longValue(operator, "SELECT fencing.advance_epoch()"))
          .isEqualTo(epoch + ADVANCE);
      assertThat(epochNotes()).isEmpty();
    }
    try (Connection c = app.connect()) {
      assertThat(Fence.acquire(c, "epoch/next", "app", TTL))
          .isEqualTo(((epoch + ADVANCE) << 43) + 1);
    }
  }

  /**
   * V41: an epoch past the last one (1048575), as many promotions after the last advances would
   * reach: refused, saying so (it named a negative "last token" and sent the operator to {@code
   * advance_epoch()}, which can only refuse), nothing changed; epoch_status says it too.
   */
  @Test
  void anEpochPastTheLastOneIsRefusedSayingSo() throws SQLException {
    FenceSql.Snapshot before;
    try (Connection c = app.connect()) {
      Fence.acquire(c, "epoch/last", "app", TTL);
    }
    try (Connection operator = db.connect()) {
      // the offset the last epoch's fence has after one more timeline
      FenceSql.run(
          operator,
          "UPDATE fencing.cluster_epoch SET epoch_offset = 1048576 - (SELECT timeline - 1"
              + " FROM fencing.epoch_status()), epoch_floor = 1048575");
      assertThat(FenceSql.string(operator, "SELECT advance_due FROM fencing.epoch_status()"))
          .isEqualTo(
              "epoch 1048576 is past the last epoch (1048575): no more tokens can be issued");
      assertThat(FenceSql.longValue(operator, "SELECT counter_left FROM fencing.epoch_status()"))
          .isZero();
      before = FenceSql.snapshot(operator);
    }
    try (Connection c = app.connect()) {
      SQLException e = assertFails(EXHAUSTED, () -> Fence.acquire(c, "epoch/next", "app", TTL));
      assertThat(e.getMessage())
          .contains("epoch 1048576 is past the last epoch (1048575): no more tokens can be issued")
          .doesNotContain("-92");
    }
    try (Connection operator = db.connect()) {
      assertThat(FenceSql.snapshot(operator)).as("nothing changed").isEqualTo(before);
    }
  }

  /**
   * V42: the last token of the last epoch (the largest bigint) was issued; the next acquisition is
   * refused with the exhaustion error, saying that no later epoch is left (it was 22003 "bigint out
   * of range": the next token was computed past the largest bigint), nothing changed.
   */
  @Test
  void theLastTokenOfTheLastEpochIsFollowedByTheExhaustionError() throws SQLException {
    FenceSql.Snapshot before;
    try (Connection operator = db.connect()) {
      FenceSql.run(
          operator,
          "UPDATE fencing.cluster_epoch SET epoch_offset = 1048575 - (SELECT timeline - 1"
              + " FROM fencing.epoch_status()), epoch_floor = 1048575");
      FenceSql.run(operator, "SELECT setval('fencing.token_seq', ?)", Long.MAX_VALUE - 1);
    }
    try (Connection c = app.connect()) {
      assertThat(Fence.acquire(c, "epoch/largest", "app", TTL)).isEqualTo(Long.MAX_VALUE);
    }
    try (Connection operator = db.connect()) {
      before = FenceSql.snapshot(operator);
    }
    try (Connection c = app.connect()) {
      SQLException e = assertFails(EXHAUSTED, () -> Fence.acquire(c, "epoch/after", "app", TTL));
      assertThat(e.getMessage())
          .contains(
              "the token counter of epoch 1048575 is exhausted (the next token would be past the"
                  + " largest bigint 9223372036854775807",
              "no later epoch is left: no more tokens can be issued");
      assertThat(hint(e)).contains("cannot help").doesNotContain("runs SELECT");
    }
    try (Connection operator = db.connect()) {
      assertThat(FenceSql.snapshot(operator)).as("nothing changed").isEqualTo(before);
    }
  }

  /**
   * V42: a sequence at the largest bigint in an early epoch, as advance_sequence of V8 to V39 could
   * leave it (B131): the exhaustion error, saying that advance_epoch() cannot help (it was 22003),
   * nothing changed; advance_epoch() itself refuses, as the hint says.
   */
  @Test
  void aSequenceAtTheLargestBigintIsTheExhaustionError() throws SQLException {
    long epoch;
    FenceSql.Snapshot before;
    try (Connection c = app.connect()) {
      Fence.acquire(c, "epoch/before-max", "app", TTL);
    }
    try (Connection operator = db.connect()) {
      epoch = FenceSql.longValue(operator, "SELECT epoch FROM fencing.epoch_status()");
      FenceSql.run(operator, "SELECT setval('fencing.token_seq', ?)", Long.MAX_VALUE);
      before = FenceSql.snapshot(operator);
    }
    try (Connection c = app.connect()) {
      SQLException e = assertFails(EXHAUSTED, () -> Fence.acquire(c, "epoch/at-max", "app", TTL));
      assertThat(e.getMessage())
          .contains(
              "the token counter of epoch "
                  + epoch
                  + " is exhausted (the next token would be past"
                  + " the largest bigint",
              "no more tokens can be issued");
      assertThat(hint(e)).contains("advance_epoch() would move to epoch 1049599", "cannot help");
    }
    try (Connection operator = db.connect()) {
      assertThat(FenceSql.snapshot(operator)).as("nothing changed").isEqualTo(before);
      SQLException e =
          assertFails(EXHAUSTED, () -> FenceSql.run(operator, "SELECT fencing.advance_epoch()"));
      assertThat(e.getMessage()).contains("past the last epoch");
    }
  }

  @Test
  void aFloorPastTheEpochIsRefusedNotIssuedBelow() throws SQLException {
    long token;
    try (Connection c = app.connect()) {
      token = Fence.acquire(c, "epoch/floor", "app", TTL);
      Fence.release(c, "epoch/floor", token);
    }
    long epoch;
    try (Connection operator = db.connect()) {
      epoch = FenceSql.longValue(operator, "SELECT epoch FROM fencing.epoch_status()");
      // what an older fence may hold: tokens past this epoch's range (advance_sequence of V8 to
      // V39; since V40 it refuses to leave the epoch)
      FenceSql.run(operator, "SELECT setval('fencing.token_seq', ?)", token + COUNTER);
    }
    try (Connection c = app.connect()) {
      assertFails(EXHAUSTED, () -> Fence.acquire(c, "epoch/floor", "app", TTL));
    }
    try (Connection operator = db.connect()) {
      assertThat(FenceSql.longValue(operator, "SELECT fencing.advance_epoch()"))
          .as("above the epoch of the largest token issued")
          .isEqualTo(((token + COUNTER) >> 43) + ADVANCE);
    }
    try (Connection c = app.connect()) {
      long next = Fence.acquire(c, "epoch/floor", "app", TTL);
      assertThat(next).isGreaterThan(token + COUNTER).isGreaterThan((epoch + ADVANCE) << 43);
    }
  }

  @Test
  void aFenceUnderAKeyItHasNotSeenAdoptsAnEpoch1024AboveEverythingRecorded() throws SQLException {
    long token;
    try (Connection c = app.connect()) {
      token = Fence.acquire(c, "epoch/restored", "app", TTL);
    }
    long epoch;
    try (Connection operator = db.connect()) {
      epoch = FenceSql.longValue(operator, "SELECT epoch FROM fencing.epoch_status()");
      // as a dump restored elsewhere holds it: the row of another cluster
      FenceSql.run(
          operator, "UPDATE fencing.cluster_epoch SET system_identifier = system_identifier + 1");
      assertThat(
              FenceSql.string(
                  operator, "SELECT adoption_pending::text FROM fencing.epoch_status()"))
          .isEqualTo("true");
      assertThat(epochNotes())
          .singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
          .contains("adopts epoch " + (epoch + 1024));
    }
    try (Connection c = app.connect()) {
      long next = Fence.acquire(c, "epoch/other", "app", TTL);
      assertThat(next).isEqualTo(((epoch + 1024) << 43) + 1).isGreaterThan(token);
    }
    try (Connection operator = db.connect()) {
      assertThat(
              FenceSql.strings(
                  operator,
                  "SELECT reason || ' ' || epoch_floor FROM fencing.cluster_epoch ORDER BY epoch_floor"))
          .containsExactly("installed " + epoch, "adopted " + (epoch + 1024));
      assertThat(epochNotes()).isEmpty();
    }
  }

  /**
   * The first issuance of a new epoch moves the sequence up (setval). Another issuance meanwhile
   * waits for it to commit, and gets the next token: never the same one.
   */
  @ParameterizedTest
  @ValueSource(strings = {"READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"})
  void anIssuanceWaitsForTheOneMovingTheSequenceToANewEpoch(String isolation) throws Exception {
    long epoch;
    try (Connection operator = db.connect()) {
      epoch = FenceSql.longValue(operator, "SELECT fencing.advance_epoch()");
    }
    try (Connection first = app.connect();
        Connection second = app.connect()) {
      begin(first, isolation);
      long a = Fence.acquire(first, "epoch/first", "first", TTL);
      assertThat(a).isEqualTo((epoch << 43) + 1);
      int secondPid = pid(second);
      begin(second, isolation);
      CompletableFuture<Long> b =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return Fence.acquire(second, "epoch/second", "second", TTL);
                } catch (SQLException e) {
                  throw new IllegalStateException(e);
                }
              });
      awaitIssuanceLockWait(secondPid);
      assertThat(b).isNotDone();
      first.commit();
      long token = b.get(WAIT.toSeconds(), TimeUnit.SECONDS);
      second.commit();
      assertThat(token).isEqualTo(a + 1);
    }
  }

  /**
   * Two first issuances under a key the fence has not seen: one adopts, the other waits for it and
   * then issues in the same epoch (READ COMMITTED), or is told to retry (40001: its snapshot
   * predates the adoption). Never two adoptions, never the same token.
   */
  @ParameterizedTest
  @ValueSource(strings = {"READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"})
  void twoFirstIssuancesInANewClusterAdoptOnce(String isolation) throws Exception {
    long epoch;
    try (Connection operator = db.connect()) {
      epoch = FenceSql.longValue(operator, "SELECT epoch FROM fencing.epoch_status()");
      FenceSql.run(
          operator, "UPDATE fencing.cluster_epoch SET system_identifier = system_identifier + 1");
    }
    long adopted = epoch + 1024;
    try (Connection first = app.connect();
        Connection second = app.connect()) {
      begin(first, isolation);
      begin(second, isolation);
      // both snapshots exist before the adoption
      FenceSql.longValue(first, "SELECT count(*) FROM fencing.rejections(NULL, 1)");
      FenceSql.longValue(second, "SELECT count(*) FROM fencing.rejections(NULL, 1)");
      long a = Fence.acquire(first, "epoch/first", "first", TTL);
      assertThat(a).isEqualTo((adopted << 43) + 1);
      int secondPid = pid(second);
      CompletableFuture<Long> b =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return Fence.acquire(second, "epoch/second", "second", TTL);
                } catch (SQLException e) {
                  throw new IllegalStateException(e);
                }
              });
      awaitIssuanceLockWait(secondPid);
      first.commit();
      if (isolation.equals("READ COMMITTED")) {
        assertThat(b.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(a + 1);
        second.commit();
      } else {
        Throwable failure =
            org.assertj.core.api.Assertions.catchThrowable(
                () -> b.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertThat(failure).hasRootCauseInstanceOf(SQLException.class);
        SQLException e = (SQLException) org.assertj.core.util.Throwables.getRootCause(failure);
        assertThat(e.getSQLState()).as(e.getMessage()).isEqualTo("40001");
        second.rollback();
        second.setAutoCommit(true);
        assertThat(Fence.acquire(second, "epoch/second", "second", TTL)).isEqualTo(a + 1);
      }
    }
    try (Connection operator = db.connect()) {
      assertThat(
              FenceSql.strings(
                  operator, "SELECT reason FROM fencing.cluster_epoch ORDER BY epoch_floor"))
          .containsExactly("installed", "adopted");
    }
  }

  /**
   * An advance of the epoch commits while an issuance waits for it (it read the old epoch): the
   * issuance is told to retry (40001) rather than issue in the old epoch, and the retry issues in
   * the new one.
   */
  @ParameterizedTest
  @ValueSource(strings = {"READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"})
  void anIssuanceThatWaitedWhileTheEpochAdvancedRetries(String isolation) throws Exception {
    long before;
    try (Connection c = app.connect()) {
      before = Fence.acquire(c, "epoch/warm", "app", TTL);
    }
    try (Connection operator = db.connect();
        Connection issuer = app.connect()) {
      operator.setAutoCommit(false);
      long advanced = FenceSql.longValue(operator, "SELECT fencing.advance_epoch()");
      begin(issuer, isolation);
      int issuerPid = pid(issuer);
      CompletableFuture<Long> b =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return Fence.acquire(issuer, "epoch/waiting", "issuer", TTL);
                } catch (SQLException e) {
                  throw new IllegalStateException(e);
                }
              });
      awaitIssuanceLockWait(issuerPid);
      operator.commit();
      Throwable failure =
          org.assertj.core.api.Assertions.catchThrowable(
              () -> b.get(WAIT.toSeconds(), TimeUnit.SECONDS));
      assertThat(failure).as("an issuance in the old epoch").isNotNull();
      SQLException e = (SQLException) org.assertj.core.util.Throwables.getRootCause(failure);
      assertThat(e.getSQLState()).as(e.getMessage()).isEqualTo("40001");
      issuer.rollback();
      issuer.setAutoCommit(true);
      long retried = Fence.acquire(issuer, "epoch/waiting", "issuer", TTL);
      assertThat(retried >> 43).isEqualTo(advanced);
      assertThat(retried).isGreaterThan(before);
    }
  }

  /** What validate() says about epochs (without notes of other kinds, e.g. a deployer's). */
  private List<String> epochNotes() {
    return Fence.migrations(db).validate().stream()
        .filter(note -> note.startsWith("token epoch:"))
        .toList();
  }

  private static @Nullable String hint(SQLException e) {
    return ((PSQLException) e).getServerErrorMessage() == null
        ? null
        : ((PSQLException) e).getServerErrorMessage().getHint();
  }

  private static void begin(Connection c, String isolation) throws SQLException {
    c.setAutoCommit(false);
    FenceSql.run(c, "SET TRANSACTION ISOLATION LEVEL " + isolation);
  }

  private static int pid(Connection c) throws SQLException {
    return (int) FenceSql.longValue(c, "SELECT pg_backend_pid()");
  }

  /**
   * Waits until {@code pid} waits for the issuance lock (V38: fencing.issuance_gate; bounded,
   * polling pg_locks).
   */
  private void awaitIssuanceLockWait(int pid) throws SQLException, InterruptedException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    try (Connection observer = db.connect()) {
      while (true) {
        List<String> waiting =
            FenceSql.strings(
                observer,
                "SELECT relation::regclass::text FROM pg_locks WHERE pid = ? AND NOT granted"
                    + " AND locktype = 'relation'",
                pid);
        if (waiting.contains("fencing.issuance_gate")) {
          return;
        }
        if (System.nanoTime() > deadline) {
          throw new AssertionError("backend " + pid + " never waited for the issuance lock");
        }
        Thread.onSpinWait();
      }
    }
  }
}
