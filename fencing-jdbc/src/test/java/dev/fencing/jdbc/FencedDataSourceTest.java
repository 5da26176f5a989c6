package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.LONG_TTL;
import static dev.fencing.jdbc.FencingTestSupport.PATIENCE;
import static dev.fencing.jdbc.FencingTestSupport.awaitLeaseExpired;
import static dev.fencing.jdbc.FencingTestSupport.awaitWaitingOnLock;
import static dev.fencing.jdbc.FencingTestSupport.backendPid;
import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.FencingTestSupport.insert;
import static dev.fencing.jdbc.FencingTestSupport.maxSeen;
import static dev.fencing.jdbc.FencingTestSupport.nextBlock;
import static dev.fencing.jdbc.FencingTestSupport.present;
import static dev.fencing.jdbc.FencingTestSupport.probeAcquire;
import static dev.fencing.jdbc.FencingTestSupport.query;
import static dev.fencing.jdbc.FencingTestSupport.queryLong;
import static dev.fencing.jdbc.FencingTestSupport.rejections;
import static dev.fencing.jdbc.FencingTestSupport.written;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.jdbc.FencingTestSupport.Pool;
import dev.fencing.jdbc.FencingTestSupport.Wiring;
import dev.fencing.testing.TestDatabaseExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.sql.BatchUpdateException;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.postgresql.PGConnection;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;
import org.postgresql.util.PSQLException;

/**
 * {@link FencedDataSource} against a real PostgreSQL, over and under HikariCP: the founding trace,
 * every JDBC write path with a stale and a current token, what reads and transactions cost, and
 * what happens around savepoints, autosave, pooled connections and driver errors.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class FencedDataSourceTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;

  /** Pools of both wirings shared by the write path tests (connections are reused). */
  private static final Map<Wiring, Pool> POOLS = new EnumMap<>(Wiring.class);

  private final List<LeaseClient> clients = new ArrayList<>();
  private final ExecutorService executor = Executors.newCachedThreadPool();

  @BeforeAll
  static void migrate() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    FencingTestSupport.createTestSchema(plain);
    for (Wiring wiring : Wiring.values()) {
      POOLS.put(wiring, wiring.open(plain, 2));
    }
  }

  @AfterAll
  static void closePools() {
    POOLS.values().forEach(Pool::close);
  }

  @AfterEach
  void cleanUp() {
    clients.forEach(LeaseClient::close);
    executor.shutdownNow();
  }

  private LeaseClient client(String holder) {
    return client(LeaseClient.builder(plain).holder(holder));
  }

  private LeaseClient client(LeaseClient.Builder builder) {
    LeaseClient client = builder.build();
    clients.add(client);
    return client;
  }

  // --- the founding trace ---------------------------------------------------------------------

  @ParameterizedTest
  @EnumSource(Wiring.class)
  void foundingTraceTheOldHoldersWriteIsRefusedByTheDatabase(Wiring wiring) throws Exception {
    String resource = "founding-" + wiring.name().toLowerCase(Locale.ROOT);
    int base = nextBlock();
    try (Pool pool = wiring.open(plain, 2)) {
      // t0: client 1 acquires; t1: its lease expires (database clock)
      Lease lease1 = client("client-1").tryAcquire(resource, Duration.ofMillis(300)).orElseThrow();
      long token1 = lease1.token().value();
      awaitLeaseExpired(plain, resource);

      // t3: client 2 acquires; t4: client 2 writes: accepted
      Lease lease2 = client("client-2").tryAcquire(resource, LONG_TTL).orElseThrow();
      long token2 = lease2.token().value();
      assertThat(token2).isGreaterThan(token1);
      assertThat(maxSeen(plain, resource)).isEqualTo(token2);
      try (FencingScope scope = Fencing.bind(lease2);
          Connection c = pool.dataSource().getConnection()) {
        insert(c, base + 2);
      }
      assertThat(present(plain, base + 2)).isTrue();

      // t6: client 1 wakes and writes with its old token: refused by the database
      try (FencingScope scope = Fencing.bind(FencingToken.of(resource, token1));
          Connection c = pool.dataSource().getConnection()) {
        Throwable refused = catchThrowable(() -> insert(c, base + 1));
        assertThat(refused)
            .isInstanceOfSatisfying(
                StaleFencingTokenException.class,
                e -> {
                  assertThat(e.resource()).isEqualTo(resource);
                  assertThat(e.presentedToken()).isEqualTo(token1);
                  assertThat(e.maxSeen()).isEqualTo(token2);
                  assertThat(e.getSQLState()).isEqualTo("ZF001");
                });
      }
      assertThat(present(plain, base + 1)).isFalse();
      assertThat(
              query(
                  plain,
                  "SELECT format('%s %s %s %s', reason, token, max_seen, holder)"
                      + " FROM fencing.rejection WHERE resource = ?",
                  resource))
          .isEqualTo("stale_token " + token1 + " " + token2 + " client-1");

      // client 1 bound to its lost Lease itself: the client refuses to carry the token
      assertThat(lease1.isLost()).isTrue();
      try (FencingScope scope = Fencing.bind(lease1);
          Connection c = pool.dataSource().getConnection()) {
        assertThatThrownBy(() -> insert(c, base + 3))
            .isInstanceOfSatisfying(
                LeaseLostException.class,
                e -> {
                  assertThat(e.resource()).isEqualTo(resource);
                  assertThat(e.presentedToken()).isEqualTo(token1);
                  assertThat(e.getSQLState()).isEqualTo("ZF005");
                });
      }
      assertThat(present(plain, base + 3)).isFalse();
      assertThat(written(plain, base)).isEqualTo(1);
    }
  }

  // --- every write path -----------------------------------------------------------------------

  /** A way of writing through JDBC; each writes {@link #rows()} rows from id {@code base} on. */
  enum WritePath {
    STATEMENT_EXECUTE {
      @Override
      void write(Connection c, int base) throws Exception {
        try (Statement s = c.createStatement()) {
          s.execute("INSERT INTO t (id, v) VALUES (" + base + ", 1)");
          assertThat(s.getUpdateCount()).isEqualTo(1);
        }
      }
    },
    STATEMENT_EXECUTE_UPDATE {
      @Override
      void write(Connection c, int base) throws Exception {
        try (Statement s = c.createStatement()) {
          assertThat(s.executeUpdate("INSERT INTO t (id, v) VALUES (" + base + ", 1)"))
              .isEqualTo(1);
        }
      }
    },
    STATEMENT_EXECUTE_LARGE_UPDATE {
      @Override
      void write(Connection c, int base) throws Exception {
        try (Statement s = c.createStatement()) {
          assertThat(s.executeLargeUpdate("INSERT INTO t (id, v) VALUES (" + base + ", 1)"))
              .isEqualTo(1L);
        }
      }
    },
    PREPARED_EXECUTE {
      @Override
      void write(Connection c, int base) throws Exception {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO t (id, v) VALUES (?, 1)")) {
          ps.setInt(1, base);
          assertThat(ps.execute()).isFalse();
          assertThat(ps.getUpdateCount()).isEqualTo(1);
        }
      }
    },
    PREPARED_EXECUTE_UPDATE {
      @Override
      void write(Connection c, int base) throws Exception {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO t (id, v) VALUES (?, 1)")) {
          ps.setInt(1, base);
          assertThat(ps.executeUpdate()).isEqualTo(1);
        }
      }
    },
    PREPARED_EXECUTE_LARGE_UPDATE {
      @Override
      void write(Connection c, int base) throws Exception {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO t (id, v) VALUES (?, 1)")) {
          ps.setInt(1, base);
          assertThat(ps.executeLargeUpdate()).isEqualTo(1L);
        }
      }
    },
    CALLABLE_CALL_PROCEDURE {
      @Override
      void write(Connection c, int base) throws Exception {
        try (CallableStatement cs = c.prepareCall("CALL my_proc(?)")) {
          cs.setInt(1, base);
          cs.execute();
        }
      }
    },
    CALLABLE_ESCAPE_CALL_FUNCTION {
      @Override
      void write(Connection c, int base) throws Exception {
        try (CallableStatement cs = c.prepareCall("{call insert_row(?)}")) {
          cs.setInt(1, base);
          cs.execute();
        }
      }
    },
    STATEMENT_BATCH {
      @Override
      void write(Connection c, int base) throws Exception {
        try (Statement s = c.createStatement()) {
          for (int i = 0; i < rows(); i++) {
            s.addBatch("INSERT INTO t (id, v) VALUES (" + (base + i) + ", 1)");
          }
          assertThat(s.executeBatch()).containsExactly(1, 1, 1);
        }
      }

      @Override
      int rows() {
        return 3;
      }
    },
    PREPARED_BATCH {
      @Override
      void write(Connection c, int base) throws Exception {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO t (id, v) VALUES (?, 1)")) {
          for (int i = 0; i < rows(); i++) {
            ps.setInt(1, base + i);
            ps.addBatch();
          }
          assertThat(ps.executeBatch()).hasSize(3);
        }
      }

      @Override
      int rows() {
        return 3;
      }
    },
    PREPARED_LARGE_BATCH {
      @Override
      void write(Connection c, int base) throws Exception {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO t (id, v) VALUES (?, 1)")) {
          for (int i = 0; i < rows(); i++) {
            ps.setInt(1, base + i);
            ps.addBatch();
          }
          assertThat(ps.executeLargeBatch()).hasSize(3);
        }
      }

      @Override
      int rows() {
        return 3;
      }
    },
    COPY_FROM_STDIN {
      @Override
      void write(Connection c, int base) throws Exception {
        String data = base + "\t1\n" + (base + 1) + "\t1\n";
        long copied =
            c.unwrap(PGConnection.class)
                .getCopyAPI()
                .copyIn("COPY t (id, v) FROM STDIN", new StringReader(data));
        assertThat(copied).isEqualTo(2);
      }

      @Override
      int rows() {
        return 2;
      }
    },
    WRITING_CTE_IN_EXECUTE_QUERY {
      @Override
      void prepare(int base) throws SQLException {
        exec(plain, "INSERT INTO t (id, v) VALUES (?, 0)", base);
      }

      @Override
      void write(Connection c, int base) throws Exception {
        try (Statement s = c.createStatement();
            ResultSet rs =
                s.executeQuery(
                    "WITH x AS (UPDATE t SET v = 1 WHERE id = "
                        + base
                        + " RETURNING *) SELECT * FROM x")) {
          assertThat(rs.next()).isTrue();
        }
      }
    },
    FUNCTION_IN_EXECUTE_QUERY {
      @Override
      void write(Connection c, int base) throws Exception {
        try (PreparedStatement ps = c.prepareStatement("SELECT insert_row(?)")) {
          ps.setInt(1, base);
          try (ResultSet rs = ps.executeQuery()) {
            assertThat(rs.next()).isTrue();
          }
        }
      }
    };

    /** Sets up what the write needs, unfenced. */
    void prepare(int base) throws SQLException {}

    abstract void write(Connection c, int base) throws Exception;

    int rows() {
      return 1;
    }
  }

  static Stream<Arguments> writePaths() {
    List<Arguments> all = new ArrayList<>();
    for (Wiring wiring : Wiring.values()) {
      for (WritePath path : WritePath.values()) {
        for (boolean autoCommit : new boolean[] {true, false}) {
          for (boolean stale : new boolean[] {true, false}) {
            all.add(Arguments.of(wiring, path, autoCommit, stale ? "stale" : "current"));
          }
        }
      }
    }
    return all.stream();
  }

  @ParameterizedTest(name = "{0} {1} autocommit={2} {3} token")
  @MethodSource("writePaths")
  void everyWritePathIsFenced(Wiring wiring, WritePath path, boolean autoCommit, String token)
      throws Exception {
    boolean stale = token.equals("stale");
    int base = nextBlock();
    String resource = externalResource(plain, "path-" + base, 5);
    path.prepare(base);

    try (Connection c = POOLS.get(wiring).dataSource().getConnection()) {
      c.setAutoCommit(autoCommit);
      FencingScope scope = Fencing.bind(FencingToken.of(resource, stale ? 4 : 5));
      try {
        if (stale) {
          Throwable refused = catchThrowable(() -> path.write(c, base));
          assertThat(refused)
              .isInstanceOfSatisfying(
                  StaleFencingTokenException.class,
                  e -> {
                    assertThat(e.resource()).isEqualTo(resource);
                    assertThat(e.presentedToken()).isEqualTo(4L);
                    assertThat(e.maxSeen()).isEqualTo(5L);
                    assertThat(e.getSQLState()).isEqualTo("ZF001");
                  });
        } else {
          path.write(c, base);
          if (!autoCommit) {
            c.commit();
          }
        }
      } finally {
        scope.close();
      }
      // committed (or not) as seen from another session, while c is still open
      assertThat(written(plain, base)).isEqualTo(stale ? 0 : path.rows());
      assertThat(c.getAutoCommit()).isEqualTo(autoCommit);

      if (stale && !autoCommit) {
        // the refused transaction was rolled back, and stays failed until the application rolls
        // it back: a write in it is refused (25P02, the refusal as cause), nothing sent
        assertThat(c.unwrap(BaseConnection.class).getTransactionState())
            .isEqualTo(TransactionState.IDLE);
        try (FencingScope current = Fencing.bind(FencingToken.of(resource, 5))) {
          assertThatThrownBy(() -> insert(c, base + 51))
              .isInstanceOfSatisfying(
                  SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("25P02"))
              .hasCauseInstanceOf(FencingRefusedException.class);
        }
        c.rollback();
        try (FencingScope current = Fencing.bind(FencingToken.of(resource, 5))) {
          insert(c, base + 50);
          c.commit();
        }
        assertThat(present(plain, base + 50)).isTrue();
        assertThat(written(plain, base)).isEqualTo(1);
      }
    }
    assertThat(rejections(plain, resource, "stale_token")).isEqualTo(stale ? 1 : 0);
  }

  @Test
  void streamingCopyInAutocommitWithATokenIsRefusedNotRunUnfenced() throws Exception {
    int base = nextBlock();
    String resource = externalResource(plain, "streaming-copy", 5);
    try (Connection c = FencedDataSource.wrap(plain).getConnection();
        FencingScope scope = Fencing.bind(FencingToken.of(resource, 5))) {
      assertThatThrownBy(
              () -> c.unwrap(PGConnection.class).getCopyAPI().copyIn("COPY t (id, v) FROM STDIN"))
          .isInstanceOf(SQLException.class)
          .extracting(e -> ((SQLException) e).getSQLState())
          .isEqualTo("25000");
      // in a transaction it works and is fenced
      c.setAutoCommit(false);
      var copy = c.unwrap(PGConnection.class).getCopyAPI().copyIn("COPY t (id, v) FROM STDIN");
      byte[] row = (base + "\t1\n").getBytes(StandardCharsets.UTF_8);
      copy.writeToCopy(row, 0, row.length);
      assertThat(copy.endCopy()).isEqualTo(1);
      c.commit();
    }
    assertThat(present(plain, base)).isTrue();
  }

  // --- batches in autocommit are never half-applied (hazard 15) --------------------------------

  @ParameterizedTest
  @EnumSource(Wiring.class)
  void refusedAutocommitBatchOfAThousandRowsLeavesNone(Wiring wiring) throws Exception {
    exec(plain, "CREATE TABLE batch_refused_" + wiring.ordinal() + " (id int PRIMARY KEY)");
    String resource = externalResource(plain, "batch-refused-" + wiring.ordinal(), 5);
    try (Pool pool = wiring.open(plain, 2);
        Connection c = pool.dataSource().getConnection();
        FencingScope scope = Fencing.bind(FencingToken.of(resource, 4));
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO batch_refused_" + wiring.ordinal() + " (id) VALUES (?)")) {
      assertThat(c.getAutoCommit()).isTrue();
      for (int i = 0; i < 1000; i++) {
        ps.setInt(1, i);
        ps.addBatch();
      }
      assertThatThrownBy(ps::executeBatch).isInstanceOf(StaleFencingTokenException.class);
    }
    assertThat(queryLong(plain, "SELECT count(*) FROM batch_refused_" + wiring.ordinal())).isZero();
  }

  @ParameterizedTest
  @EnumSource(Wiring.class)
  void acceptedAutocommitBatchOfAThousandRowsLeavesAll(Wiring wiring) throws Exception {
    exec(plain, "CREATE TABLE batch_accepted_" + wiring.ordinal() + " (id int PRIMARY KEY)");
    String resource = externalResource(plain, "batch-accepted-" + wiring.ordinal(), 5);
    try (Pool pool = wiring.open(plain, 2);
        Connection c = pool.dataSource().getConnection();
        FencingScope scope = Fencing.bind(FencingToken.of(resource, 5));
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO batch_accepted_" + wiring.ordinal() + " (id) VALUES (?)")) {
      for (int i = 0; i < 1000; i++) {
        ps.setInt(1, i);
        ps.addBatch();
      }
      assertThat(ps.executeBatch()).hasSize(1000);
    }
    assertThat(queryLong(plain, "SELECT count(*) FROM batch_accepted_" + wiring.ordinal()))
        .isEqualTo(1000);
  }

  @Test
  void fencedAutocommitBatchFailingAtItsLastRowLeavesNone() throws Exception {
    // pgjdbc alone commits the first ~255 rows of such a batch (hazard 15); fenced, it is one
    // transaction with its check
    exec(plain, "CREATE TABLE batch_failing (id int PRIMARY KEY)");
    exec(plain, "INSERT INTO batch_failing (id) VALUES (999999)");
    String resource = externalResource(plain, "batch-failing", 5);
    try (Connection c = FencedDataSource.wrap(plain).getConnection();
        FencingScope scope = Fencing.bind(FencingToken.of(resource, 5));
        PreparedStatement ps = c.prepareStatement("INSERT INTO batch_failing (id) VALUES (?)")) {
      for (int i = 0; i < 999; i++) {
        ps.setInt(1, i);
        ps.addBatch();
      }
      ps.setInt(1, 999999);
      ps.addBatch();
      assertThatThrownBy(ps::executeBatch)
          .isInstanceOf(BatchUpdateException.class)
          .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("23505"));
      assertThat(c.getAutoCommit()).isTrue();
    }
    assertThat(queryLong(plain, "SELECT count(*) FROM batch_failing")).isEqualTo(1);
  }

  // --- what it costs --------------------------------------------------------------------------

  @Test
  void plainReadsRunNoCheckEvenWithAStaleToken() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    FencedDataSource fenced = FencedDataSource.builder(plain).meterRegistry(registry).build();
    String resource = externalResource(plain, "reads", 5);
    int base = nextBlock();
    exec(plain, "INSERT INTO t (id, v) VALUES (?, 1)", base);

    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 4));
        Connection c = fenced.getConnection()) {
      for (boolean autoCommit : new boolean[] {true, false}) {
        c.setAutoCommit(autoCommit);
        try (Statement s = c.createStatement();
            ResultSet rs = s.executeQuery("SELECT count(*) FROM t")) {
          assertThat(rs.next()).isTrue();
          assertThat(rs.getLong(1)).isPositive();
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT v FROM t WHERE id = ?")) {
          ps.setInt(1, base);
          try (ResultSet rs = ps.executeQuery()) {
            assertThat(rs.next()).isTrue();
          }
        }
        if (!autoCommit) {
          c.commit();
        }
      }
      assertThat(registry.get("fencing.checks").counter().count()).isZero();
      assertThat(rejections(plain, resource, "stale_token")).isZero();

      // the stale token is bound all right: a write is refused
      assertThatThrownBy(() -> insert(c, base + 1)).isInstanceOf(StaleFencingTokenException.class);
    }
  }

  @Test
  void oneCheckPerTransactionNotPerWrite() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    FencedDataSource fenced = FencedDataSource.builder(plain).meterRegistry(registry).build();
    String resource = externalResource(plain, "one-check", 5);
    int base = nextBlock();

    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 5));
        Connection c = fenced.getConnection()) {
      c.setAutoCommit(false);
      for (int i = 0; i < 100; i++) {
        exec(c, "INSERT INTO t (id, v) VALUES (?, 1)", base + i);
      }
      c.commit();
      assertThat(registry.get("fencing.checks").counter().count()).isEqualTo(1.0);

      // the next transaction checks again
      exec(c, "UPDATE t SET v = 1 WHERE id = ?", base);
      c.rollback();
      assertThat(registry.get("fencing.checks").counter().count()).isEqualTo(2.0);

      // in autocommit every write is its own transaction, with its own check
      c.setAutoCommit(true);
      exec(c, "UPDATE t SET v = 1 WHERE id = ?", base);
      exec(c, "UPDATE t SET v = 1 WHERE id = ?", base + 1);
      assertThat(registry.get("fencing.checks").counter().count()).isEqualTo(4.0);
    }
    assertThat(written(plain, base)).isEqualTo(100);
  }

  // --- savepoints and autosave (hazard 8) ------------------------------------------------------

  /** A released lease's token: still accepted, and the resource is free for the next acquire. */
  private long releasedToken(String resource) throws SQLException {
    Lease lease = client("first-" + resource).tryAcquire(resource, LONG_TTL).orElseThrow();
    lease.close();
    return lease.token().value();
  }

  @Test
  void rollbackToSavepointDropsTheCheckAndTheNextWriteChecksAgain() throws Exception {
    String resource = "savepoint-api";
    long token = releasedToken(resource);
    int base = nextBlock();
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, token));
        Connection c = FencedDataSource.wrap(plain).getConnection()) {
      c.setAutoCommit(false);
      Savepoint savepoint = c.setSavepoint("s");
      insert(c, base); // the check runs inside the savepoint
      assertThatThrownBy(() -> probeAcquire(plain, resource))
          .isInstanceOfSatisfying(
              SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("ZF007"));

      c.rollback(savepoint); // releases the check's row lock

      Lease next =
          client(LeaseClient.builder(plain).holder("next").handoverTimeout(PATIENCE))
              .tryAcquire(resource, LONG_TTL)
              .orElseThrow();
      assertThat(next.token().value()).isGreaterThan(token);
      assertThatThrownBy(() -> insert(c, base + 1)).isInstanceOf(StaleFencingTokenException.class);
    }
    assertThat(written(plain, base)).isZero();
  }

  @Test
  void rollbackToSavepointInSqlTextDropsTheCheckToo() throws Exception {
    String resource = "savepoint-sql";
    long token = releasedToken(resource);
    int base = nextBlock();
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, token));
        Connection c = FencedDataSource.wrap(plain).getConnection();
        Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      s.execute("SAVEPOINT s");
      s.execute("INSERT INTO t (id, v) VALUES (" + base + ", 1)");
      assertThatThrownBy(() -> probeAcquire(plain, resource))
          .isInstanceOfSatisfying(
              SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("ZF007"));

      s.execute("ROLLBACK TO SAVEPOINT s");

      Lease next =
          client(LeaseClient.builder(plain).holder("next").handoverTimeout(PATIENCE))
              .tryAcquire(resource, LONG_TTL)
              .orElseThrow();
      assertThat(next.token().value()).isGreaterThan(token);
      assertThatThrownBy(() -> s.execute("INSERT INTO t (id, v) VALUES (" + (base + 1) + ", 1)"))
          .isInstanceOf(StaleFencingTokenException.class);
    }
    assertThat(written(plain, base)).isZero();
  }

  @Test
  void autosaveAlwaysAFailedStatementKeepsTheFencedWriteAndTheFence() throws Exception {
    String resource = "autosave";
    long token = releasedToken(resource);
    int base = nextBlock();
    exec(plain, "INSERT INTO t (id, v) VALUES (?, 1)", base + 99);
    DataSource autosave = FencingTestSupport.autosaveAlways(db);
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, token));
        Connection c = FencedDataSource.wrap(autosave).getConnection()) {
      c.setAutoCommit(false);
      insert(c, base);
      Throwable failed = catchThrowable(() -> insert(c, base + 99)); // duplicate key
      assertThat(failed)
          .isInstanceOfSatisfying(
              PSQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("23505"));

      // autosave rolled back to the savepoint before the failed statement only: the fence holds
      assertThatThrownBy(() -> probeAcquire(plain, resource))
          .isInstanceOfSatisfying(
              SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("ZF007"));
      insert(c, base + 1);
      assertThatThrownBy(() -> probeAcquire(plain, resource))
          .isInstanceOfSatisfying(
              SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("ZF007"));
      c.commit();
    }
    assertThat(present(plain, base)).isTrue();
    assertThat(present(plain, base + 1)).isTrue();
    // the fence ended with the transaction
    assertThat(
            query(
                plain,
                "SELECT acquired FROM fencing.try_acquire(?, 'after', interval '1 minute', interval '200 milliseconds')",
                resource))
        .isEqualTo(true);
  }

  // --- pooled connections ---------------------------------------------------------------------

  @ParameterizedTest
  @EnumSource(Wiring.class)
  void aPooledConnectionDoesNotCarryTheLastBorrowersToken(Wiring wiring) throws Exception {
    String resource = externalResource(plain, "reuse-" + wiring.ordinal(), 5);
    int base = nextBlock();
    try (Pool pool = wiring.open(plain, 1)) {
      // thread A binds, writes, commits, returns the connection
      Future<Integer> a =
          executor.submit(
              () -> {
                try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 5));
                    Connection c = pool.dataSource().getConnection()) {
                  c.setAutoCommit(false);
                  insert(c, base);
                  c.commit();
                  return backendPid(c);
                }
              });
      int pidA = a.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      assertThat(present(plain, base)).isTrue();
      exec(plain, "SELECT fencing.check_token(?, 6)", resource); // A's token is stale now

      // thread B, no token bound, borrows the same physical connection: not fenced
      Future<List<Object>> b =
          executor.submit(
              () -> {
                try (Connection c = pool.dataSource().getConnection()) {
                  List<Object> seen = new ArrayList<>();
                  seen.add(backendPid(c));
                  seen.add(Fencing.current().isEmpty());
                  seen.add(
                      String.valueOf(query(c, "SELECT current_setting('fencing.token', true)")));
                  insert(c, base + 1);
                  c.setAutoCommit(false);
                  insert(c, base + 2);
                  c.commit();
                  return seen;
                }
              });
      List<Object> seen = b.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      assertThat(seen.get(0)).isEqualTo(pidA);
      assertThat(seen.get(1)).isEqualTo(true);
      assertThat(seen.get(2)).isIn("null", "");
    }
    assertThat(present(plain, base + 1)).isTrue();
    assertThat(present(plain, base + 2)).isTrue();
    assertThat(rejections(plain, resource, "stale_token")).isZero();
  }

  // --- unwrapping and driver exceptions --------------------------------------------------------

  @ParameterizedTest
  @EnumSource(Wiring.class)
  void unwrapReachesHikariAndPgjdbc(Wiring wiring) throws Exception {
    try (Pool pool = wiring.open(plain, 2);
        Connection c = pool.dataSource().getConnection()) {
      DataSource ds = pool.dataSource();
      assertThat(ds.isWrapperFor(HikariDataSource.class)).isTrue();
      assertThat(ds.unwrap(HikariDataSource.class)).isSameAs(pool.hikari());
      assertThat(ds.isWrapperFor(FencedDataSource.class)).isTrue();
      assertThat(ds.unwrap(FencedDataSource.class)).isInstanceOf(FencedDataSource.class);
      assertThat(c.isWrapperFor(PGConnection.class)).isTrue();
      PGConnection pg = c.unwrap(PGConnection.class);
      assertThat(pg.getBackendPID()).isEqualTo(backendPid(c));
    }
  }

  @ParameterizedTest
  @EnumSource(Wiring.class)
  void driverExceptionsPassThroughUnchanged(Wiring wiring) throws Exception {
    String resource = externalResource(plain, "driver-errors-" + wiring.ordinal(), 5);
    int base = nextBlock();
    exec(plain, "INSERT INTO t (id, v) VALUES (?, 1)", base);
    try (Pool pool = wiring.open(plain, 2);
        Connection c = pool.dataSource().getConnection();
        FencingScope scope = Fencing.bind(FencingToken.of(resource, 5))) {
      for (boolean autoCommit : new boolean[] {true, false}) {
        c.setAutoCommit(autoCommit);
        try (Statement s = c.createStatement()) {
          assertThatThrownBy(() -> s.executeUpdate("INSERT INTO t (id, v) VALUES ("))
              .isInstanceOf(PSQLException.class)
              .extracting(e -> ((SQLException) e).getSQLState())
              .isEqualTo("42601");
        }
        if (!autoCommit) {
          c.rollback();
        }
        assertThatThrownBy(() -> insert(c, base))
            .isInstanceOf(PSQLException.class)
            .extracting(e -> ((SQLException) e).getSQLState())
            .isEqualTo("23505");
        if (!autoCommit) {
          c.rollback();
        }
      }
    }
    assertThat(rejections(plain, resource, "stale_token")).isZero();
  }

  @Test
  void aConnectionReachedThroughResultSetGetStatementIsFencedToo() throws Exception {
    String resource = externalResource(plain, "object-graph-rs", 5);
    int base = nextBlock();
    try (Connection c = FencedDataSource.wrap(plain).getConnection();
        FencingScope scope = Fencing.bind(FencingToken.of(resource, 4));
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT 1")) {
      assertThat(s.getConnection()).isSameAs(c);
      Connection reached = rs.getStatement().getConnection();
      Throwable t = catchThrowable(() -> insert(reached, base));
      assertThat(written(plain, base)).as("rows written with a stale token").isZero();
      assertThat(t).isInstanceOf(StaleFencingTokenException.class);
    }
  }

  @Test
  void aConnectionReachedThroughDatabaseMetaDataIsFencedToo() throws Exception {
    String resource = externalResource(plain, "object-graph-md", 5);
    int base = nextBlock();
    try (Connection c = FencedDataSource.wrap(plain).getConnection();
        FencingScope scope = Fencing.bind(FencingToken.of(resource, 4))) {
      Connection reached = c.getMetaData().getConnection();
      Throwable t = catchThrowable(() -> insert(reached, base));
      assertThat(written(plain, base)).as("rows written with a stale token").isZero();
      assertThat(t).isInstanceOf(StaleFencingTokenException.class);
    }
  }

  // --- several resources ----------------------------------------------------------------------

  @Test
  void everyBoundResourceIsChecked() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    FencedDataSource fenced = FencedDataSource.builder(plain).meterRegistry(registry).build();
    String a = externalResource(plain, "multi-a", 5);
    String b = externalResource(plain, "multi-b", 7);
    int base = nextBlock();
    try (Connection c = fenced.getConnection()) {
      try (FencingScope scope = Fencing.bind(FencingToken.of(a, 5), FencingToken.of(b, 6))) {
        assertThatThrownBy(() -> insert(c, base))
            .isInstanceOfSatisfying(
                StaleFencingTokenException.class,
                e -> {
                  assertThat(e.resource()).isEqualTo(b);
                  assertThat(e.presentedToken()).isEqualTo(6L);
                  assertThat(e.maxSeen()).isEqualTo(7L);
                });
      }
      try (FencingScope scope = Fencing.bind(FencingToken.of(b, 7), FencingToken.of(a, 4))) {
        assertThatThrownBy(() -> insert(c, base + 1))
            .isInstanceOfSatisfying(
                StaleFencingTokenException.class,
                e -> {
                  assertThat(e.resource()).isEqualTo(a);
                  assertThat(e.presentedToken()).isEqualTo(4L);
                  assertThat(e.maxSeen()).isEqualTo(5L);
                });
      }
      try (FencingScope outer = Fencing.bind(FencingToken.of(a, 5));
          FencingScope inner = Fencing.bind(FencingToken.of(b, 7))) {
        insert(c, base + 2);
      }
    }
    assertThat(written(plain, base)).isEqualTo(1);
    assertThat(present(plain, base + 2)).isTrue();
    assertThat(registry.get("fencing.checks").counter().count()).isEqualTo(2.0);
  }

  @Test
  void twoWritersBindingTwoResourcesInOppositeOrderDoNotDeadlock() throws Exception {
    // both present token 10 for two fresh external resources: each check advances (row-locks)
    // both rows. Locking them in bind order would deadlock; the fence locks by name.
    String a = externalResource(plain, "order-a", 0);
    String b = externalResource(plain, "order-b", 0);
    int base = nextBlock();
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    CyclicBarrier start = new CyclicBarrier(2);
    try (Connection blocker = db.connect()) {
      // hold both resource rows so that both writers are inside their checks at the same time
      blocker.setAutoCommit(false);
      query(
          blocker,
          "SELECT count(*) FROM (SELECT 1 FROM fencing.resource WHERE name IN (?, ?) FOR UPDATE) l",
          a,
          b);

      List<Future<Void>> writers = new ArrayList<>();
      List<List<FencingToken>> orders =
          List.of(
              List.of(FencingToken.of(a, 10), FencingToken.of(b, 10)),
              List.of(FencingToken.of(b, 10), FencingToken.of(a, 10)));
      for (int i = 0; i < 2; i++) {
        int id = base + i;
        FencingToken[] tokens = orders.get(i).toArray(new FencingToken[0]);
        writers.add(
            executor.submit(
                () -> {
                  try (FencingScope scope = Fencing.bind(tokens);
                      Connection c = fenced.getConnection()) {
                    c.setAutoCommit(false);
                    start.await(PATIENCE.toSeconds(), TimeUnit.SECONDS);
                    insert(c, id);
                    c.commit();
                  }
                  return null;
                }));
      }
      awaitWaitingOnLock(plain, "check_tokens", 2);
      blocker.commit();
      for (Future<Void> writer : writers) {
        writer.get(PATIENCE.toSeconds(), TimeUnit.SECONDS); // no 40P01
      }
    }
    assertThat(present(plain, base)).isTrue();
    assertThat(present(plain, base + 1)).isTrue();
    assertThat(maxSeen(plain, a)).isEqualTo(10);
    assertThat(maxSeen(plain, b)).isEqualTo(10);
  }

  // --- requireToken ---------------------------------------------------------------------------

  @Test
  void requireTokenRefusesAWriteWithoutATokenButNotAReads() throws Exception {
    FencedDataSource fenced = FencedDataSource.builder(plain).requireToken(true).build();
    int base = nextBlock();
    exec(plain, "INSERT INTO t (id, v) VALUES (?, 0)", base);
    assertThat(Fencing.current().isEmpty()).isTrue();
    try (Connection c = fenced.getConnection()) {
      for (boolean autoCommit : new boolean[] {true, false}) {
        c.setAutoCommit(autoCommit);
        assertThatThrownBy(() -> insert(c, base + (autoCommit ? 1 : 2)))
            .isInstanceOfSatisfying(
                MissingFencingTokenException.class,
                e -> assertThat(e.getSQLState()).isEqualTo("ZF002"));
        assertThat(c.getAutoCommit()).isEqualTo(autoCommit);
        if (!autoCommit) {
          c.rollback(); // the refused transaction stays failed until rolled back
        }
        assertThat(query(c, "SELECT v FROM t WHERE id = ?", base)).isEqualTo(0);
        if (!autoCommit) {
          c.commit();
        }
      }
    }
    assertThat(written(plain, base)).isZero();
  }

  // --- finding the refusal --------------------------------------------------------------------

  @Test
  void findLocatesTheRefusalThroughWrappers() throws Exception {
    String resource = externalResource(plain, "find", 5);
    StaleFencingTokenException refusal;
    try (Connection c = FencedDataSource.wrap(plain).getConnection();
        FencingScope scope = Fencing.bind(FencingToken.of(resource, 4))) {
      Throwable t = catchThrowable(() -> insert(c, nextBlock()));
      assertThat(t).isInstanceOf(StaleFencingTokenException.class);
      refusal = (StaleFencingTokenException) t;
    }
    RuntimeException wrapped =
        new RuntimeException("outer", new IllegalStateException("inner", refusal));
    assertThat(FencingExceptions.find(wrapped)).containsSame(refusal);

    // a raw driver exception with the fence's SQLSTATE is translated
    SQLException raw;
    try (Connection c = db.connect()) {
      raw =
          (SQLException)
              catchThrowable(() -> query(c, "SELECT fencing.check_token(?, 3)", resource));
    }
    assertThat((Throwable) raw).isInstanceOf(PSQLException.class);
    assertThat(FencingExceptions.find(new RuntimeException(new RuntimeException(raw))))
        .hasValueSatisfying(
            e -> {
              assertThat((Throwable) e).isInstanceOf(StaleFencingTokenException.class);
              assertThat(e.resource()).isEqualTo(resource);
              assertThat(e.presentedToken()).isEqualTo(3L);
              assertThat(e.maxSeen()).isEqualTo(5L);
            });
    assertThat(FencingExceptions.find(new RuntimeException("unrelated"))).isEmpty();
    assertThat(FencingExceptions.find(null)).isEmpty();
  }
}
