package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.INVALID_ARGUMENT;
import static dev.fencing.migrations.Fence.INVALID_RESOURCE;
import static dev.fencing.migrations.Fence.MISSING;
import static dev.fencing.migrations.Fence.NEVER_ISSUED;
import static dev.fencing.migrations.Fence.NOT_HELD;
import static dev.fencing.migrations.Fence.STALE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.stream.Stream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Malformed, forged and out-of-date input to the fence's SQL functions: each gets its own SQLSTATE
 * and a message naming the problem, and none of them writes anything (no resource, lease, issuance
 * or rejection row, no sequence value).
 */
class BadInputTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final Duration TTL = Duration.ofSeconds(30);
  private static final String KNOWN = "bad-input/known";

  private Connection c;

  @BeforeAll
  static void migrate() throws SQLException {
    assertThat(Fence.migrate(db)).isEqualTo(Fence.MIGRATIONS);
    try (Connection setup = db.connect()) {
      Fence.acquire(setup, KNOWN, "setup", TTL);
    }
  }

  @BeforeEach
  void connect() throws SQLException {
    c = db.connect();
  }

  @AfterEach
  void close() throws SQLException {
    c.close();
  }

  // ---------------------------------------------------------------------------------------------
  // Tokens
  // ---------------------------------------------------------------------------------------------

  @Test
  void nullTokenIsMissing() throws SQLException {
    SQLException e = refusedWithoutWrites(MISSING, () -> Fence.check(c, KNOWN, null));
    assertThat(e.getMessage()).contains("missing fencing token").contains(KNOWN);
  }

  @ParameterizedTest
  @ValueSource(longs = {0, -1, Long.MIN_VALUE})
  void nonPositiveTokenIsInvalid(long token) throws SQLException {
    SQLException e = refusedWithoutWrites(INVALID_ARGUMENT, () -> Fence.check(c, KNOWN, token));
    assertThat(e.getMessage()).contains("fencing token must be positive, was " + token);
  }

  // ---------------------------------------------------------------------------------------------
  // Resource names
  // ---------------------------------------------------------------------------------------------

  static Stream<Arguments> badResourceNames() {
    return Stream.of(
        arguments("null", null, "resource name is null"),
        arguments("empty", "", "resource name is empty"),
        arguments(
            "201 characters",
            "r".repeat(201),
            "resource name is 201 characters long; the limit is 200"),
        arguments("tab", "ab\tc", "contains a control character (code 9) at position 3"),
        arguments("newline", "ab\nc", "contains a control character (code 10) at position 3"),
        arguments("quote", "it's", "contains the character \"'\" at position 3"),
        arguments("double quote", "say\"hi", "contains the character \"\"\" at position 4"),
        arguments("backslash", "back\\slash", "contains the character \"\\\" at position 5"),
        arguments("space", "with space", "contains the character \" \" at position 5"),
        arguments(
            "SQL injection",
            "x'; DROP TABLE fencing.resource; --",
            "contains the character \"'\" at position 2"),
        arguments("unicode", "caf\u00e9", "contains the character \"\u00e9\" at position 4"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badResourceNames")
  void malformedResourceNameIsRefusedByEveryFunction(
      String label, @Nullable String name, String message) throws SQLException {
    for (ThrowingCallable call :
        new ThrowingCallable[] {
          () -> Fence.check(c, name, 1L),
          () -> tryAcquire(name, "holder", "10 seconds", "5 seconds"),
          () -> FenceSql.run(c, "SELECT fencing.create_resource(?)", name),
          () -> FenceSql.run(c, "SELECT * FROM fencing.status(?)", name),
          () -> FenceSql.run(c, "SELECT fencing.renew(?, 1, interval '10 seconds')", name),
          () -> FenceSql.run(c, "SELECT fencing.release(?, 1)", name),
        }) {
      SQLException e = refusedWithoutWrites(INVALID_RESOURCE, call);
      assertThat(e.getMessage()).as(label).contains(message);
    }
    // the injection attempt did not drop anything
    assertThat(FenceSql.longValue(c, "SELECT count(*) FROM fencing.resource WHERE name = ?", KNOWN))
        .isEqualTo(1);
  }

  @Test
  void longestAndRichestAllowedNamesAreAccepted() throws SQLException {
    String longest = "n".repeat(200);
    String rich = "Svc_1.a:b/c@d+e=f#g-h";
    for (String name : new String[] {longest, rich}) {
      long token = Fence.acquire(c, name, "holder", TTL);
      assertThat(Fence.check(c, name, token)).isEqualTo(token);
      assertThat(FenceSql.status(c, name).resource()).isEqualTo(name);
    }
  }

  @Test
  void unknownResourceIsInvalid() throws SQLException {
    String unknown = "bad-input/never-created";
    for (ThrowingCallable call :
        new ThrowingCallable[] {
          () -> Fence.check(c, unknown, 1L),
          () -> FenceSql.run(c, "SELECT * FROM fencing.status(?)", unknown),
          () -> Fence.renew(c, unknown, 1, TTL),
          () -> Fence.release(c, unknown, 1),
        }) {
      SQLException e = refusedWithoutWrites(INVALID_RESOURCE, call);
      assertThat(e.getMessage()).contains("unknown fencing resource \"" + unknown + "\"");
    }
  }

  // ---------------------------------------------------------------------------------------------
  // try_acquire arguments
  // ---------------------------------------------------------------------------------------------

  static Stream<Arguments> badHolders() {
    return Stream.of(
        arguments("null", null),
        arguments("empty", ""),
        arguments("201 characters", "h".repeat(201)),
        arguments("control character", "worker\u00011"),
        arguments("newline", "worker\n1"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badHolders")
  void badHolderIsInvalid(String label, @Nullable String holder) throws SQLException {
    SQLException e =
        refusedWithoutWrites(
            INVALID_ARGUMENT,
            () -> tryAcquire("bad-input/holder", holder, "10 seconds", "5 seconds"));
    assertThat(e.getMessage())
        .as(label)
        .contains("holder must be 1 to 200 characters without control characters");
  }

  @ParameterizedTest
  @ValueSource(strings = {"NULL", "0", "-1 second", "8 days", "1 month"})
  void badTtlIsInvalid(String ttl) throws SQLException {
    @Nullable String value = ttl.equals("NULL") ? null : ttl;
    SQLException e =
        refusedWithoutWrites(
            INVALID_ARGUMENT, () -> tryAcquire("bad-input/ttl", "holder", value, "5 seconds"));
    assertThat(e.getMessage()).contains("ttl must be between");
  }

  @ParameterizedTest
  @ValueSource(strings = {"0", "-5 seconds", "2 hours"})
  void badHandoverTimeoutIsInvalid(String timeout) throws SQLException {
    SQLException e =
        refusedWithoutWrites(
            INVALID_ARGUMENT,
            () -> tryAcquire("bad-input/handover", "holder", "10 seconds", timeout));
    assertThat(e.getMessage()).contains("handover_timeout must be between");
  }

  @Test
  void badTtlOnRenewIsInvalid() throws SQLException {
    String r = "bad-input/renew-ttl";
    long token = Fence.acquire(c, r, "holder", TTL);
    FenceSql.Status before = FenceSql.status(c, r);
    SQLException e =
        refusedWithoutWrites(
            INVALID_ARGUMENT,
            () -> FenceSql.run(c, "SELECT fencing.renew(?, ?, interval '8 days')", r, token));
    assertThat(e.getMessage()).contains("ttl must be between");
    assertThat(FenceSql.status(c, r)).isEqualTo(before);
  }

  // ---------------------------------------------------------------------------------------------
  // Forged and out-of-date tokens (hazard 13)
  // ---------------------------------------------------------------------------------------------

  @Test
  void forgedHugeTokenIsNeverIssuedAndDoesNotMoveMaxSeen() throws SQLException {
    String r = "bad-input/forged";
    long token = Fence.acquire(c, r, "honest", TTL);
    for (long forged : new long[] {Long.MAX_VALUE, token + 1}) {
      SQLException e = refusedWithoutWrites(NEVER_ISSUED, () -> Fence.check(c, r, forged));
      assertThat(e.getMessage())
          .contains("fencing token " + forged)
          .contains("was never issued")
          .contains("last issued: " + token);
      assertThat(Fence.maxSeen(c, r)).isEqualTo(token);
    }
    // the honest holder is not fenced out
    assertThat(Fence.check(c, r, token)).isEqualTo(token);
  }

  @Test
  void renewAndReleaseJudgeTheTokenAgainstTheLease() throws SQLException {
    String r = "bad-input/lease";
    long first = Fence.acquire(c, r, "first", TTL);
    assertThat(Fence.release(c, r, first)).isTrue();
    long second = Fence.acquire(c, r, "second", TTL);
    FenceSql.Status before = FenceSql.status(c, r);

    SQLException stale = refusedWithoutWrites(STALE, () -> Fence.renew(c, r, first, TTL));
    assertThat(stale.getMessage())
        .contains("stale fencing token " + first)
        .contains("a newer token " + second + " exists");
    refusedWithoutWrites(STALE, () -> Fence.release(c, r, first));

    long neverIssued = second + 1000;
    SQLException forged =
        refusedWithoutWrites(NEVER_ISSUED, () -> Fence.renew(c, r, neverIssued, TTL));
    assertThat(forged.getMessage())
        .contains("fencing token " + neverIssued)
        .contains("never issued");
    refusedWithoutWrites(NEVER_ISSUED, () -> Fence.release(c, r, neverIssued));
    refusedWithoutWrites(NEVER_ISSUED, () -> Fence.release(c, r, Long.MAX_VALUE));

    assertThat(FenceSql.status(c, r)).isEqualTo(before);
    assertThat(before.holder()).isEqualTo("second");
    assertThat(before.leaseToken()).isEqualTo(second);
  }

  @Test
  void renewAfterReleaseIsNotHeld() throws SQLException {
    String r = "bad-input/released";
    long token = Fence.acquire(c, r, "holder", TTL);
    assertThat(Fence.release(c, r, token)).isTrue();
    SQLException e = refusedWithoutWrites(NOT_HELD, () -> Fence.renew(c, r, token, TTL));
    assertThat(e.getMessage()).contains("with token " + token).contains("was released");
    assertThat(FenceSql.status(c, r).leaseValid()).isFalse();
  }

  @Test
  void renewAfterExpiryIsNotHeld() throws SQLException {
    String r = "bad-input/expired";
    long token = Fence.acquire(c, r, "holder", Duration.ofMillis(200));
    await()
        .atMost(Interleaving.PATIENCE) // a hang guard: the lease expires after 200 ms
        .pollInterval(Duration.ofMillis(50))
        .until(() -> !FenceSql.status(c, r).leaseValid());
    SQLException e = refusedWithoutWrites(NOT_HELD, () -> Fence.renew(c, r, token, TTL));
    assertThat(e.getMessage()).contains("with token " + token).contains("expired at");
    assertThat(FenceSql.status(c, r).leaseValid()).isFalse();
  }

  // ---------------------------------------------------------------------------------------------
  // Rejection log
  // ---------------------------------------------------------------------------------------------

  @ParameterizedTest
  @ValueSource(strings = {"NULL", "", "ZF001", "not json", "[1]", "{}", "{\"resource\": \"x\"}"})
  void recordRejectionTakesOnlyARefusalsDetail(String refusal) throws SQLException {
    @Nullable String value = refusal.equals("NULL") ? null : refusal;
    SQLException e =
        refusedWithoutWrites(
            INVALID_ARGUMENT, () -> FenceSql.run(c, "SELECT fencing.record_rejection(?)", value));
    assertThat(e.getMessage()).contains("record_rejection takes the DETAIL of a refusal");
  }

  @Test
  void refusedCheckIsRecordedAfterTheRollbackWithFactsReadByTheServer() throws SQLException {
    String r = "bad-input/rejection";
    long aliceToken = Fence.acquire(c, r, "alice", TTL);
    assertThat(Fence.release(c, r, aliceToken)).isTrue();
    long bobToken = Fence.acquire(c, r, "bob", TTL);
    long rejectionsBefore = FenceSql.longValue(c, "SELECT count(*) FROM fencing.rejection");

    // alice's late write: refused, and its transaction rolls back (taking any log row with it)
    c.setAutoCommit(false);
    SQLException stale = Fence.assertFails(STALE, () -> Fence.check(c, r, aliceToken));
    c.rollback();
    assertThat(FenceSql.longValue(c, "SELECT count(*) FROM fencing.rejection"))
        .isEqualTo(rejectionsBefore);

    // the client records the refusal in a transaction of its own
    c.setAutoCommit(true);
    long id = Fence.recordRejection(c, stale);

    try (PreparedStatement ps =
            FenceSql.prepare(
                c,
                "SELECT resource, token, max_seen, holder, reason, sqlstate, db_user"
                    + " FROM fencing.rejection WHERE id = ?",
                id);
        ResultSet rs = ps.executeQuery()) {
      assertThat(rs.next()).isTrue();
      assertThat(rs.getString("resource")).isEqualTo(r);
      assertThat(rs.getLong("token")).isEqualTo(aliceToken);
      assertThat(rs.getLong("max_seen")).isEqualTo(bobToken).isEqualTo(Fence.maxSeen(c, r));
      assertThat(rs.getString("holder")).isEqualTo("alice");
      assertThat(rs.getString("reason")).isEqualTo("stale_token");
      assertThat(rs.getString("sqlstate")).isEqualTo(STALE);
      assertThat(rs.getString("db_user")).isEqualTo(db.user());
    }
    assertThat(FenceSql.longValue(c, "SELECT count(*) FROM fencing.rejection"))
        .isEqualTo(rejectionsBefore + 1);

    // a forged token is logged as never issued, with no holder (nobody was given it)
    c.setAutoCommit(false);
    SQLException forged = Fence.assertFails(NEVER_ISSUED, () -> Fence.check(c, r, Long.MAX_VALUE));
    c.rollback();
    c.setAutoCommit(true);
    long forgedId = Fence.recordRejection(c, forged);
    assertThat(FenceSql.strings(c, "SELECT reason FROM fencing.rejection WHERE id = ?", forgedId))
        .containsExactly("never_issued");
    assertThat(
            FenceSql.longValue(
                c,
                "SELECT count(*) FROM fencing.rejection WHERE id = ? AND holder IS NULL",
                forgedId))
        .isEqualTo(1);
  }

  @Test
  void aClientsOwnRefusalOfALostLeaseIsRecordedAsLeaseLost() throws SQLException {
    // V7: a client that knows its lease is lost refuses the write itself (ZF005) and records it;
    // V8: once the database agrees (here: released)
    String r = "bad-input/lease-lost";
    long token = Fence.acquire(c, r, "carol", TTL);
    Fence.release(c, r, token);
    long id =
        Fence.recordRejection(
            c,
            "{\"resource\": \"" + r + "\", \"token\": " + token + ", \"reason\": \"lease_lost\"}");
    assertThat(
            FenceSql.strings(
                c,
                "SELECT reason || ' ' || sqlstate || ' ' || holder || ' ' || (token = max_seen)"
                    + " FROM fencing.rejection WHERE id = ?",
                id))
        .containsExactly("lease_lost ZF005 carol true");
  }

  // ---------------------------------------------------------------------------------------------

  private void tryAcquire(
      @Nullable String resource,
      @Nullable String holder,
      @Nullable String ttl,
      @Nullable String handoverTimeout)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT acquired, token FROM fencing.try_acquire(?, ?, ?::interval, ?::interval)")) {
      ps.setString(1, resource);
      ps.setString(2, holder);
      if (ttl == null) {
        ps.setNull(3, Types.VARCHAR);
      } else {
        ps.setString(3, ttl);
      }
      ps.setString(4, handoverTimeout);
      ps.executeQuery().close();
    }
  }

  /** Asserts {@code call} fails with {@code sqlState} and leaves the fence's state as it was. */
  private SQLException refusedWithoutWrites(String sqlState, ThrowingCallable call)
      throws SQLException {
    FenceSql.Snapshot before = FenceSql.snapshot(c);
    SQLException e = Fence.assertFails(sqlState, call);
    if (!c.getAutoCommit()) {
      c.rollback();
    }
    assertThat(FenceSql.snapshot(c)).as("fence state after %s", e.getMessage()).isEqualTo(before);
    return e;
  }
}
