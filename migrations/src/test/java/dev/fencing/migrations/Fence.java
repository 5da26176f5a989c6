package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.jspecify.annotations.Nullable;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/** Calls the fence's SQL functions over plain JDBC, as any client would. Test code only. */
final class Fence {
  /**
   * The versions of db/fencing's migrations, in order. 22, 24, 25 and 31 are not used: each was
   * measured on a branch and left out (ARCHITECTURE: "One-row statements: the keyed tag", the
   * check's shapes in "The carried check's server CPU", "Protected tables: where a transaction's
   * instructions go", the lease's "Where V29's 1,028k go"); a later number would now apply out of
   * order, so they stay free.
   */
  static final List<Integer> VERSIONS =
      List.of(
          1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 23, 26, 27, 28,
          29, 30, 32, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45);

  /** How many versioned migrations db/fencing holds: what a first migrate applies. */
  static final int MIGRATIONS = VERSIONS.size();

  /** SQLSTATEs of the fence (see V2__fencing_functions.sql). */
  static final String STALE = "ZF001";

  static final String MISSING = "ZF002";
  static final String NEVER_ISSUED = "ZF003";
  static final String INVALID_RESOURCE = "ZF004";
  static final String NOT_HELD = "ZF005";
  static final String INVALID_ARGUMENT = "ZF006";
  static final String HANDOVER_TIMEOUT = "ZF007";

  /** The outcome of try_acquire. */
  record Acquired(boolean acquired, @Nullable Long token, @Nullable String holder) {}

  private Fence() {}

  /** The migrations of the test database: its own roles, migrated as its migration user. */
  static FencingMigrations migrations(TestDatabaseExtension db) {
    return FencingMigrations.builder(db.migrationDataSource())
        .ownerRole(db.ownerRole())
        .applicationRole(db.appRole())
        .build();
  }

  /** Migrates the test database (see {@link #migrations}); returns how many migrations ran. */
  static int migrate(TestDatabaseExtension db) {
    return migrations(db).migrate();
  }

  static Acquired tryAcquire(Connection c, String resource, String holder, Duration ttl)
      throws SQLException {
    return tryAcquire(c, resource, holder, ttl, Duration.ofSeconds(5));
  }

  static Acquired tryAcquire(
      Connection c, String resource, String holder, Duration ttl, Duration handoverTimeout)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT acquired, token, holder FROM fencing.try_acquire(?, ?,"
                + " make_interval(secs => ?), make_interval(secs => ?))")) {
      ps.setString(1, resource);
      ps.setString(2, holder);
      ps.setDouble(3, ttl.toNanos() / 1e9);
      ps.setDouble(4, handoverTimeout.toNanos() / 1e9);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new Acquired(rs.getBoolean(1), rs.getObject(2, Long.class), rs.getString(3));
      }
    }
  }

  /** Acquires and returns the token, failing the test if the lease was not granted. */
  static long acquire(Connection c, String resource, String holder, Duration ttl)
      throws SQLException {
    Acquired a = tryAcquire(c, resource, holder, ttl);
    assertThat(a.acquired()).as("lease on %s granted to %s", resource, holder).isTrue();
    return a.token();
  }

  /**
   * Acquires {@code resource} once the lease before it (taken with a TTL of a millisecond or so)
   * has expired by the database's clock: the acquisition is retried until it is granted, never
   * assumed to come after the expiry.
   */
  static long acquireAfterExpiry(Connection c, String resource, String holder, Duration ttl) {
    long[] token = new long[1];
    org.awaitility.Awaitility.await()
        .atMost(Interleaving.PATIENCE) // a hang guard: the expiry is a millisecond or so away
        .pollInterval(Duration.ofMillis(1))
        .until(
            () -> {
              Acquired a = tryAcquire(c, resource, holder, ttl);
              if (a.acquired() && a.token() != null) {
                token[0] = a.token();
                return true;
              }
              return false;
            });
    return token[0];
  }

  static long check(Connection c, String resource, @Nullable Long token) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT fencing.check_token(?, ?)")) {
      ps.setString(1, resource);
      ps.setObject(2, token, java.sql.Types.BIGINT);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  static boolean release(Connection c, String resource, long token) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT fencing.release(?, ?)")) {
      ps.setString(1, resource);
      ps.setLong(2, token);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }

  static void renew(Connection c, String resource, long token, Duration ttl) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT fencing.renew(?, ?, make_interval(secs => ?))")) {
      ps.setString(1, resource);
      ps.setLong(2, token);
      ps.setDouble(3, ttl.toNanos() / 1e9);
      ps.executeQuery().close();
    }
  }

  static long maxSeen(Connection c, String resource) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT max_seen FROM fencing.status(?)")) {
      ps.setString(1, resource);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  static void execute(Connection c, String sql) throws SQLException {
    try (var s = c.createStatement()) {
      s.execute(sql);
    }
  }

  static long count(Connection c, String sql) throws SQLException {
    try (var s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** The DETAIL of a server error: for a refusal, the JSON object with its receipt. */
  static String detail(SQLException e) {
    assertThat((Throwable) e).as("a server error: %s", e).isInstanceOf(PSQLException.class);
    ServerErrorMessage message = ((PSQLException) e).getServerErrorMessage();
    assertThat(message).as("server error message of %s", e.getMessage()).isNotNull();
    assertThat(message.getDetail()).as("DETAIL of %s", e.getMessage()).isNotNull();
    return message.getDetail();
  }

  /** Records {@code refusal} with {@code record_rejection(its DETAIL)}; returns the row's id. */
  static long recordRejection(Connection c, SQLException refusal) throws SQLException {
    return recordRejection(c, detail(refusal));
  }

  /** {@code record_rejection(refusal)}: a refusal's DETAIL, or a client's lease-lost JSON. */
  static long recordRejection(Connection c, String refusal) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT fencing.record_rejection(?)")) {
      ps.setString(1, refusal);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /** Runs {@code call}, asserts it fails with {@code sqlState}, and returns the exception. */
  static SQLException assertFails(String sqlState, ThrowingCallable call) {
    SQLException e = catchThrowableOfType(SQLException.class, call);
    assertThat((Object) e).as("expected SQLSTATE %s", sqlState).isNotNull();
    assertThat(e.getSQLState()).as(e.getMessage()).isEqualTo(sqlState);
    return e;
  }
}
