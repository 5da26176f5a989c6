package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.NEVER_ISSUED;
import static dev.fencing.migrations.Fence.STALE;
import static dev.fencing.migrations.Fence.assertFails;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.PostgresServer;
import dev.fencing.testing.StreamingPair;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * V39: an epoch the fence recorded itself ({@code advance_epoch()}, an adoption) whose WAL the next
 * server never sees: an asynchronous standby cut off before it, promoted after the old primary
 * issued in that epoch. The promoted server must not hand out those tokens again, and a zombie
 * holding one is refused there (before V39 it was the new holder's token too).
 */
class LostEpochAdvanceTest {
  private static final String DATABASE = "app";
  private static final String APP_USER = "app_user";
  private static final Duration TTL = Duration.ofMinutes(5);

  @Test
  void aPromotionThatLostAnEpochAdvanceHandsOutNoneOfTheTokensIssuedAfterIt() throws Exception {
    try (StreamingPair pair = StreamingPair.start()) {
      install(pair.primary());
      long known;
      try (Connection old = app(pair.primary())) {
        known = issue(old, "jobs", "before");
      }
      pair.awaitReplayed();
      pair.cutOff();
      long advanced;
      try (Connection operator = pair.primary().connect(DATABASE)) {
        advanced = FenceSql.longValue(operator, "SELECT fencing.advance_epoch()");
      }
      assertLostTokensAreNeverHandedOutAgain(pair, known, NEVER_ISSUED);
      assertThat(advanced).as("advanced by as much as an adoption").isEqualTo(EpochTest.ADVANCE);
    }
  }

  @Test
  void aPromotionThatLostAnAdoptionAdoptsAboveIt() throws Exception {
    try (StreamingPair pair = StreamingPair.start()) {
      install(pair.primary());
      long known;
      try (Connection old = app(pair.primary())) {
        known = issue(old, "jobs", "before");
      }
      // as after a restore into a cluster the fence has not seen: no row for this key (both sides)
      try (Connection operator = pair.primary().connect(DATABASE)) {
        FenceSql.run(
            operator, "UPDATE fencing.cluster_epoch SET system_identifier = system_identifier + 1");
      }
      pair.awaitReplayed();
      pair.cutOff();
      assertLostTokensAreNeverHandedOutAgain(pair, known, STALE);
    }
  }

  /**
   * The old primary hands out tokens the standby never receives, crashes; the promoted standby's
   * tokens are none of them, and the zombie's lost token is refused there with {@code refusal}:
   * never issued (below an advance it lost, the promoted server issues below the lost tokens) or
   * stale (a re-adoption is above the lost one).
   */
  private static void assertLostTokensAreNeverHandedOutAgain(
      StreamingPair pair, long known, String refusal) throws Exception {
    List<Long> lost = new ArrayList<>();
    try (Connection old = app(pair.primary())) {
      lost.add(Fence.acquire(old, "jobs", "zombie", TTL)); // held when the primary crashes
      for (int i = 0; i < 5; i++) {
        lost.add(issue(old, "reports", "lost-" + i));
      }
    }
    pair.primary().crash();

    PostgresServer promoted = pair.promote();
    try (Connection c = app(promoted)) {
      long next = Fence.acquire(c, "jobs", "holder-new", TTL);
      assertThat(next).as("above what the promoted server knew").isGreaterThan(known);
      List<Long> issued = new ArrayList<>(List.of(next));
      for (int i = 0; i < 5; i++) {
        issued.add(issue(c, "reports", "new-" + i));
      }
      assertThat(issued)
          .as("tokens the old primary handed out after the cut: %s", lost)
          .doesNotContainAnyElementsOf(lost);
      // the zombie's token is not the new holder's: refused, never accepted
      assertFails(refusal, () -> Fence.check(c, "jobs", lost.get(0)));
      assertThat(Fence.check(c, "jobs", next)).isEqualTo(next);
    }
  }

  private static long issue(Connection c, String resource, String holder) throws SQLException {
    long token = Fence.acquire(c, resource, holder, TTL);
    assertThat(Fence.release(c, resource, token)).isTrue();
    return token;
  }

  private static void install(PostgresServer server) {
    server.execute("CREATE DATABASE " + DATABASE);
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setUrl(server.jdbcUrl(DATABASE));
    assertThat(FencingMigrations.builder(ds).build().migrate()).isEqualTo(Fence.MIGRATIONS);
    server.execute(
        "CREATE ROLE " + APP_USER + " LOGIN IN ROLE " + FencingMigrations.DEFAULT_APPLICATION_ROLE);
  }

  private static Connection app(PostgresServer server) throws SQLException {
    return server.connect(DATABASE, APP_USER);
  }
}
