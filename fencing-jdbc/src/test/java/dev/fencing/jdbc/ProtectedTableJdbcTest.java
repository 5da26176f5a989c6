package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.queryLong;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.testing.TestDatabaseExtension;
import java.io.StringReader;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;

/**
 * Protected tables through {@link FencedDataSource}: its check before the first write of each
 * transaction leaves the marker the tables' triggers accept, so fenced writes work unchanged, and a
 * write that carries no token is refused by PostgreSQL itself.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class ProtectedTableJdbcTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final String ITEMS = "jdbc/items";
  private static final Duration TTL = Duration.ofMinutes(5);

  private static DataSource plain;
  private static DataSource fenced;
  private static DataSource fencedAutosave;
  private static LeaseClient leases;
  private Lease lease;

  @BeforeAll
  static void setUp() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = FencingTestSupport.plain(db, ds -> ds);
    fenced = FencedDataSource.wrap(plain);
    fencedAutosave = FencedDataSource.wrap(FencingTestSupport.autosaveAlways(db));
    exec(plain, "CREATE TABLE item (id int PRIMARY KEY, note text NOT NULL)");
    exec(plain, "CREATE TABLE acct (id int PRIMARY KEY, balance int NOT NULL)");
    exec(plain, "SELECT fencing.protect('item', ?)", ITEMS);
    exec(plain, "SELECT fencing.protect_rows('acct', 'id', 'jdbc/acct/')");
    exec(plain, "SELECT fencing.create_resource(?)", "jdbc/acct/1");
    exec(plain, "SELECT fencing.create_resource(?)", "jdbc/acct/2");
    leases = LeaseClient.builder(plain).holder("jdbc-test").build();
  }

  @AfterAll
  static void tearDown() {
    leases.close();
  }

  @BeforeEach
  void acquire() throws SQLException {
    lease = leases.tryAcquire(ITEMS, TTL).orElseThrow();
  }

  @AfterEach
  void release() {
    lease.close();
  }

  private static long items() throws SQLException {
    return queryLong(plain, "SELECT count(*) FROM item");
  }

  @Test
  void fencedWritesPassTheTriggersOnEveryWritePath() throws Exception {
    long before = items();
    try (FencingScope scope = Fencing.bind(lease);
        Connection c = fenced.getConnection()) {
      // autocommit: one transaction with its check
      exec(c, "INSERT INTO item VALUES (1000 + ?, 'autocommit')", (int) lease.token().value());
      c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO item VALUES (?, 'batch')")) {
        for (int i = 0; i < 3; i++) {
          ps.setInt(1, 2000 + (int) lease.token().value() * 10 + i);
          ps.addBatch();
        }
        ps.executeBatch();
      }
      c.unwrap(PGConnection.class)
          .getCopyAPI()
          .copyIn(
              "COPY item FROM STDIN",
              new StringReader((3000 + lease.token().value()) + "\tcopied\n"));
      exec(c, "UPDATE item SET note = note || '!' WHERE note = 'batch'");
      c.commit();
    }
    assertThat(items()).isEqualTo(before + 5);
  }

  @Test
  void oneCheckPerTransactionHoweverManyProtectedWrites() throws SQLException {
    try (FencingScope scope = Fencing.bind(lease);
        Connection c = fenced.getConnection()) {
      exec(c, "SET track_functions = 'all'");
      c.setAutoCommit(false);
      int base = 4000 + (int) lease.token().value() * 10;
      for (int i = 0; i < 5; i++) {
        exec(c, "INSERT INTO item VALUES (?, 'many')", base + i);
      }
      exec(c, "UPDATE item SET note = 'many!' WHERE id >= ?", base);
      // the one check, and no fence() from the triggers (V15: the check decides a one-token check
      // itself; before it, check_tokens called fence() once; V21: check_one, one token's check)
      Object calls =
          FencingTestSupport.query(
              c,
              "SELECT string_agg(funcname || ' ' || calls, ', ' ORDER BY funcname)"
                  + " FROM pg_stat_xact_user_functions WHERE schemaname = 'fencing'"
                  + " AND funcname IN ('fence', 'check_token', 'check_tokens', 'check_one')");
      assertThat(calls).isEqualTo("check_one 1");
      c.commit();
    }
  }

  @Test
  void withAutosaveAlwaysFencedWritesPass() throws SQLException {
    long before = items();
    try (FencingScope scope = Fencing.bind(lease);
        Connection c = fencedAutosave.getConnection()) {
      c.setAutoCommit(false);
      int base = 5000 + (int) lease.token().value() * 10;
      exec(c, "INSERT INTO item VALUES (?, 'autosave')", base);
      exec(c, "INSERT INTO item VALUES (?, 'autosave')", base + 1);
      c.commit();
    }
    assertThat(items()).isEqualTo(before + 2);
  }

  @Test
  void aWriteWithNoTokenBoundIsRefusedByTheTrigger() throws SQLException {
    long before = items();
    Throwable thrown;
    try (Connection c = fenced.getConnection()) {
      thrown = catchThrowable(() -> exec(c, "INSERT INTO item VALUES (-1, 'unfenced')"));
    }
    assertThat(thrown).isInstanceOf(SQLException.class);
    assertThat(((SQLException) thrown).getSQLState()).isEqualTo("ZF002");
    assertThat(FencingExceptions.find(thrown))
        .get()
        .isInstanceOf(MissingFencingTokenException.class)
        .extracting(FencingRefusedException::resource)
        .isEqualTo(ITEMS);
    // and through a plain, unwrapped connection as well
    try (Connection c = plain.getConnection()) {
      Throwable raw = catchThrowable(() -> exec(c, "DELETE FROM item"));
      assertThat(FencingExceptions.find(raw))
          .get()
          .isInstanceOf(MissingFencingTokenException.class);
    }
    assertThat(items()).isEqualTo(before);
  }

  @Test
  void aZombieTokenIsRefused() throws SQLException {
    long before = items();
    FencingToken zombie = lease.token();
    lease.close();
    lease = leases.tryAcquire(ITEMS, TTL).orElseThrow();
    assertThat(lease.token().value()).isGreaterThan(zombie.value());
    Throwable thrown;
    try (FencingScope scope = Fencing.bind(zombie);
        Connection c = fenced.getConnection()) {
      thrown = catchThrowable(() -> exec(c, "INSERT INTO item VALUES (-2, 'zombie')"));
    }
    assertThat(FencingExceptions.find(thrown)).get().isInstanceOf(StaleFencingTokenException.class);
    assertThat(items()).isEqualTo(before);
  }

  @Test
  void perRowResourcesNeedTheRowsOwnToken() throws SQLException {
    try (Lease one = leases.tryAcquire("jdbc/acct/1", TTL).orElseThrow();
        Lease two = leases.tryAcquire("jdbc/acct/2", TTL).orElseThrow()) {
      try (FencingScope scope = Fencing.bind(one, two);
          Connection c = fenced.getConnection()) {
        exec(c, "INSERT INTO acct VALUES (1, 100), (2, 200) ON CONFLICT (id) DO NOTHING");
      }
      Throwable thrown;
      try (FencingScope scope = Fencing.bind(two);
          Connection c = fenced.getConnection()) {
        exec(c, "UPDATE acct SET balance = balance + 1 WHERE id = 2");
        thrown = catchThrowable(() -> exec(c, "UPDATE acct SET balance = 0 WHERE id = 1"));
      }
      assertThat(FencingExceptions.find(thrown))
          .get()
          .isInstanceOf(MissingFencingTokenException.class)
          .extracting(FencingRefusedException::resource)
          .isEqualTo("jdbc/acct/1");
      assertThat(queryLong(plain, "SELECT balance FROM acct WHERE id = 1")).isEqualTo(100);
      assertThat(queryLong(plain, "SELECT balance FROM acct WHERE id = 2")).isEqualTo(201);
    }
  }
}
