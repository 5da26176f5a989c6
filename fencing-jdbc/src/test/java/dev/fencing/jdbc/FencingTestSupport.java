package dev.fencing.jdbc;

import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.params.provider.Arguments;
import org.postgresql.ds.PGSimpleDataSource;
import org.postgresql.jdbc.AutoSave;
import org.postgresql.jdbc.PreferQueryMode;

/**
 * Shared helpers of the fencing-jdbc integration tests: the test table {@code t}, fenced resources
 * in a known state, HikariCP pools in both wirings, and lock-wait detection. Test code only.
 */
final class FencingTestSupport {
  /**
   * How long anything may take that is expected to happen (a lock wait, an unblocked call): only a
   * hang guard, so long enough for a machine at load 40 on 2 cores (CI); a passing test never waits
   * it out.
   */
  static final Duration PATIENCE = Duration.ofMinutes(2);

  /** A ttl that does not run out during a test. */
  static final Duration LONG_TTL = Duration.ofSeconds(60);

  private static final AtomicInteger BLOCKS = new AtomicInteger();

  private FencingTestSupport() {}

  /** Migrates the test database with its own roles, as its migration user. */
  static void migrate(TestDatabaseExtension db) {
    FencingMigrations.builder(db.migrationDataSource())
        .ownerRole(db.ownerRole())
        .applicationRole(db.appRole())
        .build()
        .migrate();
  }

  /** How a FencedDataSource and a HikariCP pool are stacked. */
  enum Wiring {
    /** {@code FencedDataSource.wrap(hikari)}: the fence above the pool. */
    FENCED_OVER_HIKARI,
    /** A HikariCP pool whose DataSource is {@code FencedDataSource.wrap(pgSimpleDataSource)}. */
    HIKARI_OVER_FENCED;

    Pool open(DataSource plain, int size) {
      return open(plain, size, FencedDataSource::builder);
    }

    /** A pool of {@code size} connections, the fence configured by {@code fence}. */
    Pool open(DataSource plain, int size, Function<DataSource, FencedDataSource.Builder> fence) {
      if (this == FENCED_OVER_HIKARI) {
        HikariDataSource hikari = hikari(plain, size);
        return new Pool(fence.apply(hikari).build(), hikari);
      }
      HikariDataSource hikari = hikari(fence.apply(plain).build(), size);
      return new Pool(hikari, hikari);
    }
  }

  /** A DataSource to write through (fenced one way or the other) and the pool to close. */
  record Pool(DataSource dataSource, HikariDataSource hikari) implements AutoCloseable {
    @Override
    public void close() {
      hikari.close();
    }
  }

  static HikariDataSource hikari(DataSource target, int size) {
    HikariConfig config = new HikariConfig();
    config.setDataSource(target);
    config.setMaximumPoolSize(size);
    config.setMinimumIdle(1);
    config.setConnectionTimeout(PATIENCE.toMillis());
    config.setPoolName("fencing-test-" + BLOCKS.incrementAndGet());
    return new HikariDataSource(config);
  }

  /** A plain, unpooled PGSimpleDataSource of the test database, adjusted by {@code settings}. */
  static PGSimpleDataSource plain(
      TestDatabaseExtension db, UnaryOperator<PGSimpleDataSource> settings) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(db.jdbcUrl());
    ds.setUser(db.user());
    if (!db.password().isEmpty()) {
      ds.setPassword(db.password());
    }
    return settings.apply(ds);
  }

  /** A FencedDataSource over a plain one of the test database under pgjdbc's {@code mode}. */
  static FencedDataSource fenced(TestDatabaseExtension db, PreferQueryMode mode) {
    return FencedDataSource.wrap(
        plain(
            db,
            ds -> {
              ds.setPreferQueryMode(mode);
              return ds;
            }));
  }

  /** Each of {@code cases} under each of pgjdbc's three query modes: arguments (case, mode). */
  static Stream<Arguments> underEachQueryMode(Object[] cases) {
    return Arrays.stream(cases)
        .flatMap(
            c ->
                Stream.of(
                        PreferQueryMode.EXTENDED,
                        PreferQueryMode.EXTENDED_FOR_PREPARED,
                        PreferQueryMode.SIMPLE)
                    .map(mode -> Arguments.of(c, mode)));
  }

  /** Same as {@link #plain(TestDatabaseExtension, UnaryOperator)} with pgjdbc autosave=always. */
  static PGSimpleDataSource autosaveAlways(TestDatabaseExtension db) {
    return plain(
        db,
        ds -> {
          ds.setAutosave(AutoSave.ALWAYS);
          return ds;
        });
  }

  /**
   * The test table {@code t (id, v)}: fenced writes set {@code v = 1}; a function {@code
   * insert_row(id)} and a procedure {@code my_proc(id)} that insert such a row.
   */
  static void createTestSchema(DataSource plain) throws SQLException {
    exec(plain, "CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL DEFAULT 0)");
    exec(
        plain,
        "CREATE FUNCTION insert_row(p int) RETURNS void LANGUAGE sql"
            + " AS 'INSERT INTO t (id, v) VALUES (p, 1)'");
    exec(
        plain,
        "CREATE PROCEDURE my_proc(p int) LANGUAGE sql AS 'INSERT INTO t (id, v) VALUES (p, 1)'");
  }

  /**
   * A write a read hides: table {@code <prefix>_rows (id serial, v int)}, a function {@code
   * <prefix>_add(p int)} that inserts {@code p} and returns {@code p * 2}, and a view {@code
   * <prefix>_hidden} whose every read calls it with 3 (one row, {@code r = 6}).
   */
  static void createHiddenWrite(DataSource plain, String prefix) throws SQLException {
    exec(plain, "CREATE TABLE " + prefix + "_rows (id serial PRIMARY KEY, v int NOT NULL)");
    exec(
        plain,
        "CREATE FUNCTION "
            + prefix
            + "_add(p int) RETURNS int LANGUAGE sql AS 'INSERT INTO "
            + prefix
            + "_rows (v) VALUES (p) RETURNING p * 2'");
    exec(plain, "CREATE VIEW " + prefix + "_hidden AS SELECT " + prefix + "_add(3) AS r");
  }

  /** The first of 100 ids of {@code t} that no other test uses. */
  static int nextBlock() {
    return BLOCKS.incrementAndGet() * 100;
  }

  /** Runs {@code sql} with {@code args} on a new connection of {@code ds}, in autocommit. */
  static void exec(DataSource ds, String sql, Object... args) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      bind(ps, args);
      ps.execute();
    }
  }

  /** Runs {@code sql} with {@code args} on {@code c}. */
  static void exec(Connection c, String sql, Object... args) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      bind(ps, args);
      ps.execute();
    }
  }

  /** The first column of the first row of {@code sql}, or null if there is none. */
  static @Nullable Object query(DataSource ds, String sql, Object... args) throws SQLException {
    try (Connection c = ds.getConnection()) {
      return query(c, sql, args);
    }
  }

  static @Nullable Object query(Connection c, String sql, Object... args) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      bind(ps, args);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getObject(1) : null;
      }
    }
  }

  static long queryLong(DataSource ds, String sql, Object... args) throws SQLException {
    Object value = query(ds, sql, args);
    if (!(value instanceof Number n)) {
      throw new AssertionError(sql + " returned " + value + ", not a number");
    }
    return n.longValue();
  }

  private static void bind(PreparedStatement ps, Object... args) throws SQLException {
    for (int i = 0; i < args.length; i++) {
      ps.setObject(i + 1, args[i]);
    }
  }

  /** Inserts row {@code id} of {@code t} through {@code c} (a fenced write). */
  static void insert(Connection c, int id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO t (id, v) VALUES (?, 1)")) {
      ps.setInt(1, id);
      ps.executeUpdate();
    }
  }

  /** How many rows of {@code t} with ids {@code from} to {@code from + 99} were written (v = 1). */
  static long written(DataSource plain, int from) throws SQLException {
    return queryLong(
        plain, "SELECT count(*) FROM t WHERE id >= ? AND id < ? AND v = 1", from, from + 100);
  }

  /** Whether row {@code id} of {@code t} was written (and committed: read on another session). */
  static boolean present(DataSource plain, int id) throws SQLException {
    return queryLong(plain, "SELECT count(*) FROM t WHERE id = ? AND v = 1", id) == 1;
  }

  /**
   * Creates the external resource {@code name} and, if {@code maxSeen > 0}, moves its max_seen to
   * it (committed).
   */
  static String externalResource(DataSource plain, String name, long maxSeen) throws SQLException {
    exec(plain, "SELECT fencing.create_resource(?, true)", name);
    if (maxSeen > 0) {
      exec(plain, "SELECT fencing.check_token(?, ?)", name, maxSeen);
    }
    return name;
  }

  static long maxSeen(DataSource plain, String resource) throws SQLException {
    return queryLong(plain, "SELECT max_seen FROM fencing.status(?)", resource);
  }

  static boolean leaseValid(DataSource plain, String resource) throws SQLException {
    return Boolean.TRUE.equals(query(plain, "SELECT lease_valid FROM fencing.status(?)", resource));
  }

  /** Waits until the lease on {@code resource} has expired by the database clock. */
  static void awaitLeaseExpired(DataSource plain, String resource) {
    await().atMost(PATIENCE).until(() -> !leaseValid(plain, resource));
  }

  /** How many rejections with {@code reason} the fence recorded for {@code resource}. */
  static long rejections(DataSource plain, String resource, String reason) throws SQLException {
    return queryLong(
        plain,
        "SELECT count(*) FROM fencing.rejection WHERE resource = ? AND reason = ?",
        resource,
        reason);
  }

  static int backendPid(Connection c) throws SQLException {
    Object pid = query(c, "SELECT pg_backend_pid()");
    return ((Number) Objects.requireNonNull(pid)).intValue();
  }

  /**
   * How many backends of this database wait for a lock while running a statement that contains
   * {@code fragment}.
   */
  static long waitingOnLock(DataSource plain, String fragment) throws SQLException {
    return queryLong(
        plain,
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            + " AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
            + " AND position(? in query) > 0",
        fragment);
  }

  /**
   * Waits until {@code count} backends wait for a lock in a statement containing {@code fragment}.
   */
  static void awaitWaitingOnLock(DataSource plain, String fragment, long count) {
    await().atMost(PATIENCE).until(() -> waitingOnLock(plain, fragment) == count);
  }

  /**
   * Runs {@code fencing.try_acquire} for {@code resource} on a plain connection with a handover
   * timeout of 200 ms: throws (SQLSTATE ZF007) while a fenced transaction holds the resource.
   */
  static void probeAcquire(DataSource plain, String resource) throws SQLException {
    query(
        plain,
        "SELECT acquired FROM fencing.try_acquire(?, 'probe', interval '30 seconds',"
            + " interval '200 milliseconds')",
        resource);
  }
}
