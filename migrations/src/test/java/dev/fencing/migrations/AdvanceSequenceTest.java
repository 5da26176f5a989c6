package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.INVALID_ARGUMENT;
import static dev.fencing.migrations.Fence.INVALID_RESOURCE;
import static dev.fencing.migrations.Fence.STALE;
import static dev.fencing.migrations.Fence.assertFails;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 12, item 2: the operator's step after a failover or restore, {@code advance_sequence(gap)},
 * cannot be blocked by the application role. Its base is what this database issued, never a number
 * a client or an outside issuer pushed into an external resource. An external resource pushed to
 * the largest bigint is fenced for good until the operator resets it ({@code reset_external}).
 */
class AdvanceSequenceTest {
  @RegisterExtension final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final String INSUFFICIENT_PRIVILEGE = "42501";
  private static final Duration TTL = Duration.ofMinutes(5);
  private static final String LOCAL = "advance/local";
  private static final String PUSHED = "advance/pushed";

  private AppRole app;

  @BeforeEach
  void setUp() throws SQLException {
    assertThat(Fence.migrate(db)).isEqualTo(Fence.MIGRATIONS);
    app = AppRole.create(db, "advance_app");
  }

  @AfterEach
  void dropRole() throws SQLException {
    app.close();
  }

  @Test
  void anExternalResourceAtTheLargestBigintDoesNotBlockTheOperatorsStep() throws SQLException {
    long issued;
    try (Connection c = app.connect()) {
      issued = Fence.acquire(c, LOCAL, "app", TTL);
      // what a hostile or buggy client of the application role can do
      FenceSql.run(c, "SELECT fencing.create_resource(?, true)", PUSHED);
      assertThat(Fence.check(c, PUSHED, Long.MAX_VALUE)).isEqualTo(Long.MAX_VALUE);
      assertThat(Fence.maxSeen(c, PUSHED)).isEqualTo(Long.MAX_VALUE);
    }
    try (Connection operator = db.connect()) {
      long advanced = FenceSql.longValue(operator, "SELECT fencing.advance_sequence(1000000)");
      assertThat(advanced).isEqualTo(issued + 1_000_000);
      assertThat(FenceSql.longValue(operator, "SELECT last_value FROM fencing.token_seq"))
          .isEqualTo(issued + 1_000_000);
    }
    try (Connection c = app.connect()) {
      Fence.release(c, LOCAL, issued);
      assertThat(Fence.acquire(c, LOCAL, "app", TTL)).isEqualTo(issued + 1_000_001);
    }
  }

  @Test
  void theBaseIsTheLargestTokenThisDatabaseIssued() throws SQLException {
    long first;
    long second;
    try (Connection c = app.connect()) {
      first = Fence.acquire(c, LOCAL, "app", TTL);
      second = Fence.acquire(c, "advance/other", "app", TTL);
    }
    try (Connection operator = db.connect()) {
      // the sequence set back, as after a restore: last_issued still knows the largest token
      FenceSql.run(operator, "SELECT setval('fencing.token_seq', 1)");
      assertThat(FenceSql.longValue(operator, "SELECT fencing.advance_sequence(10)"))
          .isEqualTo(Math.max(first, second) + 10);
    }
  }

  @Test
  void anExternalResourcePushedToTheLargestBigintAcceptsNothingNewerUntilTheOperatorResetsIt()
      throws SQLException {
    try (Connection c = app.connect()) {
      FenceSql.run(c, "SELECT fencing.create_resource(?, true)", PUSHED);
      Fence.check(c, PUSHED, 41L); // the issuer's real token
      Fence.check(c, PUSHED, Long.MAX_VALUE);
      // the real holder's next token is stale now, and no token can ever pass the pushed one
      assertFails(STALE, () -> Fence.check(c, PUSHED, 42L));
      // only the operator may reset it
      assertFails(
          INSUFFICIENT_PRIVILEGE,
          () -> FenceSql.run(c, "SELECT fencing.reset_external(?, 41)", PUSHED));
    }
    try (Connection operator = db.connect()) {
      assertThat(FenceSql.longValue(operator, "SELECT fencing.reset_external(?, 41)", PUSHED))
          .isEqualTo(Long.MAX_VALUE);
      assertFails(
          INVALID_RESOURCE,
          () -> FenceSql.run(operator, "SELECT fencing.reset_external('advance/no-such', 1)"));
      assertFails(
          INVALID_ARGUMENT,
          () -> FenceSql.run(operator, "SELECT fencing.reset_external(?, -1)", PUSHED));
    }
    try (Connection c = app.connect()) {
      assertThat(Fence.maxSeen(c, PUSHED)).isEqualTo(41);
      assertThat(Fence.check(c, PUSHED, 42L)).isEqualTo(42);
      assertFails(STALE, () -> Fence.check(c, PUSHED, 41L));
    }
  }

  @Test
  void aLocalResourceIsNeverReset() throws SQLException {
    long token;
    try (Connection c = app.connect()) {
      token = Fence.acquire(c, LOCAL, "app", TTL);
    }
    try (Connection operator = db.connect()) {
      SQLException e =
          assertFails(
              INVALID_RESOURCE,
              () -> FenceSql.run(operator, "SELECT fencing.reset_external(?, 0)", LOCAL));
      assertThat(e.getMessage()).contains("is issued by this database");
      assertThat(Fence.maxSeen(operator, LOCAL)).isEqualTo(token);
    }
  }
}
