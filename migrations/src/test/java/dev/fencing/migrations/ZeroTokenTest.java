package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.INVALID_ARGUMENT;
import static dev.fencing.migrations.Fence.MISSING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.fencing.testing.FenceSnapshot;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 12, item 1: a token of 0 or less is refused by every path that can accept a token, on every
 * kind of resource — also on one that was created but never acquired, whose {@code max_seen} is 0
 * (V6's fast path accepted token 0 there). Run as the application role; each case runs in a
 * transaction that then tries to commit, and nothing of the fence, the rejection log or the
 * protected tables changes.
 */
class ZeroTokenTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final Duration TTL = Duration.ofMinutes(10);
  private static final List<Long> NOT_POSITIVE = List.of(0L, -1L, Long.MIN_VALUE);

  /** The kinds of resource, each protecting its own table {@code zero_<kind>}. */
  enum Kind {
    /** created by the application, never acquired: max_seen = 0, last_issued = 0 */
    FRESH("SELECT fencing.create_resource(?)"),
    /** acquired: max_seen = last_issued = its token */
    ACQUIRED("SELECT fencing.create_resource(?)"),
    /** tokens from elsewhere, none seen yet: max_seen = 0 */
    EXTERNAL("SELECT fencing.create_resource(?, true)"),
    /** one write transaction per token, never acquired */
    STRICT("SELECT fencing.create_resource(?, false, true)"),
    /** external and strict, none seen yet */
    EXTERNAL_STRICT("SELECT fencing.create_resource(?, true, true)");

    final String create;

    Kind(String create) {
      this.create = create;
    }

    String resource() {
      return "zero/" + name().toLowerCase(java.util.Locale.ROOT);
    }

    String table() {
      return "zero_" + name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /** How a client presents a token: every path that can accept one. */
  enum EntryPoint {
    CHECK_TOKEN("SELECT fencing.check_token(?, ?)"),
    /** one entry: what FencedDataSource sends for one bound token */
    CHECK_TOKENS_ONE("SELECT fencing.check_tokens(ARRAY[?], ARRAY[?]::bigint[])"),
    /** several entries, sorted by name; the other one is valid */
    CHECK_TOKENS_SEVERAL(
        "SELECT fencing.check_tokens(ARRAY[?, 'zero/acquired'], ARRAY[?, %d]::bigint[])"),
    /** carry, then a write to the resource's protected table */
    CARRY_THEN_WRITE("SELECT fencing.carry(?, ?)", "INSERT INTO %s VALUES (1)"),
    /**
     * The protected table's own check of a carried token, reached without carry() (which refuses
     * such a token itself): the application sets the carried list, stamped for this transaction,
     * with set_config. The entry's leading comma keeps it findable for V3's parser too.
     */
    FORGED_CARRY_THEN_WRITE(
        "SELECT set_config('fencing.carry_stamp', stamp, true),"
            + " set_config('fencing.tokens', stamp || '|,' || ? || ' ' || ? || ',', true)"
            + " FROM (SELECT (extract(epoch FROM now()) * 1000000)::bigint || '/forged' AS stamp) s",
        "INSERT INTO %s VALUES (1)");

    final String present;
    final String write;

    EntryPoint(String present) {
      this(present, null);
    }

    EntryPoint(String present, String write) {
      this.present = present;
      this.write = write;
    }
  }

  private static AppRole app;
  private static long acquiredToken;

  @BeforeAll
  static void setUp() throws SQLException {
    assertThat(Fence.migrate(db)).isEqualTo(Fence.MIGRATIONS);
    app = AppRole.create(db, "zero_app");
    try (Connection admin = db.connect()) {
      for (Kind kind : Kind.values()) {
        FenceSql.run(admin, "CREATE TABLE " + kind.table() + " (id int)");
        FenceSql.run(admin, "SELECT fencing.protect(?, ?)", kind.table(), kind.resource());
        app.grant("SELECT, INSERT", kind.table());
      }
    }
    try (Connection c = app.connect()) {
      for (Kind kind : Kind.values()) {
        FenceSql.run(c, kind.create, kind.resource());
      }
      acquiredToken = Fence.acquire(c, Kind.ACQUIRED.resource(), "zero-holder", TTL);
      assertThat(FenceSql.status(c, Kind.FRESH.resource()).maxSeen()).isZero();
      assertThat(FenceSql.status(c, Kind.EXTERNAL.resource()).maxSeen()).isZero();
    }
  }

  @AfterAll
  static void dropRole() throws SQLException {
    app.close();
  }

  static Stream<Arguments> cases() {
    List<Arguments> cases = new ArrayList<>();
    for (EntryPoint entry : EntryPoint.values()) {
      for (Kind kind : Kind.values()) {
        for (long token : NOT_POSITIVE) {
          cases.add(arguments(entry, kind, token));
        }
      }
    }
    return cases.stream();
  }

  @ParameterizedTest(name = "{0} on {1} with token {2}")
  @MethodSource("cases")
  void aTokenOfZeroOrLessIsRefusedAndNothingIsWritten(EntryPoint entry, Kind kind, long token)
      throws SQLException {
    FenceSnapshot before;
    try (Connection admin = db.connect()) {
      before = FenceSnapshot.take(admin, tables());
    }
    SQLException refused;
    try (Connection c = app.connect()) {
      c.setAutoCommit(false);
      refused =
          catchThrowableOfType(
              SQLException.class,
              () -> {
                FenceSql.run(
                    c, String.format(entry.present, acquiredToken), kind.resource(), token);
                if (entry.write != null) {
                  FenceSql.run(c, String.format(entry.write, kind.table()));
                }
              });
      try {
        c.commit(); // the caller tries to keep whatever was accepted
      } catch (SQLException rolledBack) {
        // pgjdbc may report that the server rolled the aborted transaction back
      }
    }
    assertThat((Object) refused).as("token %d must be refused", token).isNotNull();
    if (entry == EntryPoint.FORGED_CARRY_THEN_WRITE && token < 0) {
      // "-1" in the carried list is no token at all to the table's parser
      assertThat(refused.getSQLState()).as(refused.getMessage()).isEqualTo(MISSING);
    } else {
      assertThat(refused.getSQLState()).as(refused.getMessage()).isEqualTo(INVALID_ARGUMENT);
      assertThat(refused.getMessage()).contains("fencing token must be positive, was " + token);
    }
    try (Connection admin = db.connect()) {
      assertThat(FenceSnapshot.take(admin, tables())).isEqualTo(before);
    }
  }

  /** The forged carry above reaches the table's own check: a valid token passes it. */
  @Test
  void theForgedCarryReachesTheTablesCheck() throws SQLException {
    try (Connection c = app.connect()) {
      c.setAutoCommit(false);
      FenceSql.run(
          c, EntryPoint.FORGED_CARRY_THEN_WRITE.present, Kind.ACQUIRED.resource(), acquiredToken);
      FenceSql.run(
          c, String.format(EntryPoint.FORGED_CARRY_THEN_WRITE.write, Kind.ACQUIRED.table()));
      assertThat(FenceSql.longValue(c, "SELECT count(*) FROM " + Kind.ACQUIRED.table()))
          .isEqualTo(1);
      c.rollback();
    }
  }

  private static String[] tables() {
    return Stream.of(Kind.values()).map(Kind::table).toArray(String[]::new);
  }
}
