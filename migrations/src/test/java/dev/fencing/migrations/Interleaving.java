package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/**
 * Forcing interleavings of fenced transactions: sessions with a known backend pid, a second thread
 * for the side that is expected to block, and lock-wait detection through {@code pg_stat_activity}
 * / {@code pg_blocking_pids} (never sleeps). Test code only.
 */
final class Interleaving {
  /**
   * How long anything may take that is expected to happen (a lock wait, an unblocked call): only a
   * hang guard, so long enough for a machine at load 40 on 2 cores (CI); a passing test never waits
   * it out.
   */
  static final Duration PATIENCE = Duration.ofMinutes(2);

  static final String SERIALIZATION_FAILURE = "40001";

  /** The isolation level of the writer transactions. */
  enum Isolation {
    READ_COMMITTED(Connection.TRANSACTION_READ_COMMITTED, "read committed"),
    REPEATABLE_READ(Connection.TRANSACTION_REPEATABLE_READ, "repeatable read"),
    SERIALIZABLE(Connection.TRANSACTION_SERIALIZABLE, "serializable");

    final int jdbcLevel;
    final String setting;

    Isolation(int jdbcLevel, String setting) {
      this.jdbcLevel = jdbcLevel;
      this.setting = setting;
    }

    /**
     * Whether the transaction reads from one snapshot, so that PostgreSQL raises 40001 where READ
     * COMMITTED would re-read a row updated by a concurrent, committed transaction.
     */
    boolean snapshotPerTransaction() {
      return this != READ_COMMITTED;
    }

    /** For resource names: {@code read-committed}, ... */
    String tag() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
  }

  /** A connection and its backend's pid. */
  record Session(Connection c, int pid) implements AutoCloseable {
    @Override
    public void close() throws SQLException {
      c.close();
    }
  }

  /** A JDBC call that may throw {@link SQLException}. */
  @FunctionalInterface
  interface SqlCall<T> {
    T call() throws SQLException;
  }

  /** What {@code fencing.status()} reports about a resource. */
  record Status(long maxSeen, long lastIssued, @Nullable String holder, long leaseToken) {}

  private Interleaving() {}

  /** An autocommit session (acquirers, observers). */
  static Session session(TestDatabaseExtension db) throws SQLException {
    return withPid(db.connect());
  }

  /** A writer session: autocommit off, the given isolation for each of its transactions. */
  static Session writer(TestDatabaseExtension db, Isolation isolation) throws SQLException {
    return writer(db.connect(), isolation);
  }

  /** A writer session whose connection gets extra pgjdbc properties, e.g. autosave. */
  static Session writer(TestDatabaseExtension db, Isolation isolation, Map<String, String> extra)
      throws SQLException {
    Properties properties = new Properties();
    properties.setProperty("user", db.user());
    if (!db.password().isEmpty()) {
      properties.setProperty("password", db.password());
    }
    properties.putAll(extra);
    return writer(DriverManager.getConnection(db.jdbcUrl(), properties), isolation);
  }

  private static Session writer(Connection c, Isolation isolation) throws SQLException {
    try {
      Session s = withPid(c); // in autocommit: takes no transaction snapshot of the writer
      c.setAutoCommit(false);
      c.setTransactionIsolation(isolation.jdbcLevel);
      return s;
    } catch (SQLException | RuntimeException e) {
      c.close();
      throw e;
    }
  }

  private static Session withPid(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT pg_backend_pid()");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return new Session(c, rs.getInt(1));
    } catch (SQLException | RuntimeException e) {
      c.close();
      throw e;
    }
  }

  /**
   * Starts the writer's next transaction and asserts its isolation level. {@code SHOW} is a utility
   * statement: the transaction has begun, but under REPEATABLE READ / SERIALIZABLE its snapshot is
   * taken by the next statement that needs one, not here.
   */
  static void begin(Session writer, Isolation isolation) throws SQLException {
    assertThat(writer.c().getAutoCommit()).as("writer session").isFalse();
    try (PreparedStatement ps = writer.c().prepareStatement("SHOW transaction_isolation");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      assertThat(rs.getString(1)).isEqualTo(isolation.setting);
    }
  }

  /**
   * Tries to commit a transaction that had an error (a careless client); then makes sure it ended.
   */
  static void tryCommit(Session writer) {
    try {
      writer.c().commit(); // PostgreSQL answers ROLLBACK to COMMIT in an aborted transaction
    } catch (SQLException e) {
      // pgjdbc may report the silent rollback
    }
    try {
      writer.c().rollback();
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  static ExecutorService newPool() {
    return Executors.newCachedThreadPool(
        r -> {
          Thread t = new Thread(r, "blocked-side");
          t.setDaemon(true);
          return t;
        });
  }

  static void shutdown(@Nullable ExecutorService pool) throws InterruptedException {
    if (pool != null) {
      pool.shutdownNow();
      assertThat(pool.awaitTermination(PATIENCE.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    }
  }

  /** Runs {@code call} on another thread: the side of the interleaving that is expected to wait. */
  static <T> CompletableFuture<T> async(ExecutorService pool, SqlCall<T> call) {
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            return call.call();
          } catch (SQLException e) {
            throw new CompletionException(e);
          }
        },
        pool);
  }

  /** The result of {@code future}, rethrowing its SQLException; fails if it takes too long. */
  static <T> T join(CompletableFuture<T> future) throws SQLException {
    try {
      return future.get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof SQLException sql) {
        throw sql;
      }
      if (cause instanceof RuntimeException runtime) {
        throw runtime;
      }
      if (cause instanceof Error error) {
        throw error;
      }
      throw new IllegalStateException(cause);
    } catch (TimeoutException e) {
      throw new AssertionError("still blocked after " + PATIENCE, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Runs {@code call} on another thread and fails if it does not return promptly (no blocking). */
  static <T> T withoutBlocking(ExecutorService pool, SqlCall<T> call) throws SQLException {
    return join(async(pool, call));
  }

  /** Waits until backend {@code waiter} waits for a heavyweight lock that {@code blocker} holds. */
  static void awaitBlockedBy(Connection observer, int waiter, int blocker) {
    await("backend " + waiter + " waiting for a lock held by backend " + blocker)
        .atMost(PATIENCE)
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(5))
        .pollInSameThread()
        .untilAsserted(() -> assertBlockedBy(observer, waiter, blocker));
  }

  /** Asserts, right now, that backend {@code waiter} waits for a lock {@code blocker} holds. */
  static void assertBlockedBy(Connection observer, int waiter, int blocker) throws SQLException {
    try (PreparedStatement ps =
        observer.prepareStatement(
            "SELECT wait_event_type, wait_event, pg_blocking_pids(pid)"
                + " FROM pg_stat_activity WHERE pid = ?")) {
      ps.setInt(1, waiter);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).as("backend %s exists", waiter).isTrue();
        Integer[] blockers = (Integer[]) rs.getArray(3).getArray();
        String state = rs.getString(1) + "/" + rs.getString(2) + " " + Arrays.toString(blockers);
        assertThat(rs.getString(1)).as("wait of backend %s: %s", waiter, state).isEqualTo("Lock");
        assertThat(blockers).as("blockers of backend %s: %s", waiter, state).contains(blocker);
      }
    }
  }

  /** Asserts that a backend is between statements of an open transaction, waiting for nothing. */
  static void assertIdleInTransaction(Connection observer, int pid) throws SQLException {
    try (PreparedStatement ps =
        observer.prepareStatement(
            "SELECT state, coalesce(wait_event_type, '-'), cardinality(pg_blocking_pids(pid))"
                + " FROM pg_stat_activity WHERE pid = ?")) {
      ps.setInt(1, pid);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).as("backend %s exists", pid).isTrue();
        assertThat(rs.getString(1)).as("state of backend %s", pid).isEqualTo("idle in transaction");
        assertThat(rs.getString(2)).as("wait of backend %s", pid).isNotEqualTo("Lock");
        assertThat(rs.getInt(3)).as("blockers of backend %s", pid).isZero();
      }
    }
  }

  static String sqlState(SQLException e) {
    return String.valueOf(e.getSQLState());
  }

  /** The {@code reason} of a fence error's DETAIL JSON (parsed by PostgreSQL). */
  static @Nullable String reason(Connection observer, SQLException e) throws SQLException {
    assertThat(e instanceof PSQLException).as("a server error: %s", e).isTrue();
    ServerErrorMessage message = ((PSQLException) e).getServerErrorMessage();
    assertThat(message).as("server error message of %s", e.getMessage()).isNotNull();
    try (PreparedStatement ps = observer.prepareStatement("SELECT (?::jsonb) ->> 'reason'")) {
      ps.setString(1, message.getDetail());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    }
  }

  // --- the application's fenced table -----------------------------------------------------------

  static void createWriteTable(Connection c) throws SQLException {
    Fence.execute(
        c,
        "CREATE TABLE public.fenced_write (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
            + " resource text NOT NULL, token bigint NOT NULL, note text NOT NULL)");
  }

  /** The write a fenced transaction protects. */
  static void write(Session writer, String resource, long token, String note) throws SQLException {
    try (PreparedStatement ps =
        writer
            .c()
            .prepareStatement(
                "INSERT INTO public.fenced_write (resource, token, note) VALUES (?, ?, ?)")) {
      ps.setString(1, resource);
      ps.setLong(2, token);
      ps.setString(3, note);
      assertThat(ps.executeUpdate()).isEqualTo(1);
    }
  }

  /** How many committed writes with this note exist for the resource. */
  static long writes(Connection observer, String resource, String note) throws SQLException {
    try (PreparedStatement ps =
        observer.prepareStatement(
            "SELECT count(*) FROM public.fenced_write WHERE resource = ? AND note = ?")) {
      ps.setString(1, resource);
      ps.setString(2, note);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  // --- the fence ------------------------------------------------------------------------------

  static void createResource(Connection c, String resource, boolean external, boolean strict)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT fencing.create_resource(?, ?, ?)")) {
      ps.setString(1, resource);
      ps.setBoolean(2, external);
      ps.setBoolean(3, strict);
      ps.executeQuery().close();
    }
  }

  static Status status(Connection c, String resource) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT max_seen, last_issued, holder, lease_token FROM fencing.status(?)")) {
      ps.setString(1, resource);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return new Status(rs.getLong(1), rs.getLong(2), rs.getString(3), rs.getLong(4));
      }
    }
  }

  /** Whether the resource's lease is held and unexpired (database clock). */
  static boolean leaseValid(Connection c, String resource) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT lease_valid FROM fencing.status(?)")) {
      ps.setString(1, resource);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return rs.getBoolean(1);
      }
    }
  }
}
