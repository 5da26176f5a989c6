package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.testing.RoundTrips;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 13, what the wire pays: the benchmark's transactions (a single-row {@code UPDATE}, the
 * TPC-B-like one, three reads) written as applications write them, a new {@code PreparedStatement}
 * per statement per transaction over one pooled connection (autocommit off), send with a token
 * bound exactly the messages they send unfenced plus the check's Bind and Execute (two of each for
 * a lease's token: V30's function-free form, the lock and the read, {@link CheckForms}), in as many
 * round trips: once the connection has prepared its statements (pgjdbc's prepareThreshold), no
 * Parse (nothing parsed or planned again: the combined statement and the commit's check are
 * pgjdbc's cached, server-prepared statements like the caller's) and no Describe.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class SteadyStateMessagesTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  /** Transactions before counting: past pgjdbc's prepareThreshold (5) for every statement. */
  private static final int WARM_UP = 8;

  private static HikariDataSource pool;
  private static DataSource fenced;
  private static String resource;
  private static FencingToken local;

  @BeforeAll
  static void start() throws SQLException {
    FencingTestSupport.migrate(db);
    DataSource plain = db.dataSource();
    exec(plain, "CREATE TABLE steady_accounts (id int PRIMARY KEY, balance int NOT NULL)");
    exec(plain, "CREATE TABLE steady_history (id int GENERATED ALWAYS AS IDENTITY, delta int)");
    exec(plain, "INSERT INTO steady_accounts SELECT i, 0 FROM generate_series(1, 10) i");
    resource = externalResource(plain, "steady-state", 5);
    local =
        FencingToken.of(
            "steady-local",
            FencingTestSupport.queryLong(
                plain,
                "SELECT token FROM fencing.try_acquire('steady-local', 'steady', interval '1 hour')"));
    HikariConfig config = new HikariConfig();
    config.setDataSource(plain);
    config.setMaximumPoolSize(1);
    config.setAutoCommit(false); // as the benchmark's pool
    pool = new HikariDataSource(config);
    fenced = FencedDataSource.wrap(pool);
  }

  @AfterAll
  static void stop() {
    pool.close();
  }

  /** One transaction of the benchmark's kind. */
  private interface Transaction {
    void run(DataSource database, int id) throws SQLException;
  }

  @Test
  void aSingleUpdateSendsTheUnfencedMessagesAndTheCheck() throws SQLException {
    assertSteady(SteadyStateMessagesTest::update);
  }

  @Test
  void aTpcbLikeTransactionSendsTheUnfencedMessagesAndTheCheck() throws SQLException {
    assertSteady(SteadyStateMessagesTest::tpcb);
  }

  @Test
  void aReadOnlyTransactionSendsTheUnfencedMessagesAndTheCommitsCheck() throws SQLException {
    assertSteady(SteadyStateMessagesTest::readOnly);
  }

  /**
   * V30: a lease's token (a local resource, READ COMMITTED) is carried in the function-free form
   * ({@link CheckForms}), two statements in front of the write (the lock, then the read that
   * accepts): two Binds and two Executes more than unfenced, each statement binding the resource,
   * in as many round trips, nothing parsed or described.
   */
  @Test
  void aSingleUpdateWithALeasesTokenSendsTheUnfencedMessagesAndTheTwoStatementsOfTheCheck()
      throws SQLException {
    assertSteady(SteadyStateMessagesTest::update, local, Map.of("Bind", 2, "Execute", 2), 2);
  }

  @Test
  void aTpcbLikeTransactionWithALeasesTokenSendsTheUnfencedMessagesAndTheTwoStatementsOfTheCheck()
      throws SQLException {
    assertSteady(SteadyStateMessagesTest::tpcb, local, Map.of("Bind", 2, "Execute", 2), 2);
  }

  private static void assertSteady(Transaction tx) throws SQLException {
    assertSteady(tx, FencingToken.of(resource, 5), Map.of("Bind", 1, "Execute", 1), 1);
  }

  private static void assertSteady(
      Transaction tx, FencingToken token, Map<String, Integer> expected, int bound)
      throws SQLException {
    String resource = token.resource();
    for (int i = 0; i < WARM_UP; i++) {
      tx.run(pool, 1 + i % 10);
      try (FencingScope scope = Fencing.bind(token)) {
        tx.run(fenced, 1 + i % 10);
      }
    }
    try (RoundTrips trips = new RoundTrips()) {
      trips.reset();
      tx.run(pool, 3);
      int unfencedTrips = trips.count();
      List<String> unfenced = trips.sent();

      trips.reset();
      try (FencingScope scope = Fencing.bind(token)) {
        tx.run(fenced, 3);
      }
      int fencedTrips = trips.count();
      List<String> sent = trips.sent();

      assertThat(fencedTrips)
          .as("round trips, fenced %s against unfenced %s", sent, unfenced)
          .isEqualTo(unfencedTrips);
      assertThat(sent)
          .as("a steady fenced transaction parses and describes nothing")
          .noneMatch(m -> m.startsWith(" FE=> Parse") || m.startsWith(" FE=> Describe"));
      assertThat(unfenced).noneMatch(m -> m.startsWith(" FE=> Parse"));
      Map<String, Integer> extra = kinds(sent);
      kinds(unfenced).forEach((k, n) -> extra.merge(k, -n, Integer::sum));
      extra.values().removeIf(n -> n == 0);
      assertThat(extra)
          .as("messages beyond the unfenced ones: fenced %s, unfenced %s", sent, unfenced)
          .isEqualTo(expected);
      List<String> checks = new ArrayList<>();
      for (String m : sent) {
        if (m.contains(resource)) {
          checks.add(m);
        }
      }
      assertThat(checks)
          .as("the check's arguments, bound once a statement: %s", sent)
          .hasSize(bound);
    }
  }

  /** The messages by kind (Bind, Execute, Sync, ...), counted. */
  private static Map<String, Integer> kinds(List<String> sent) {
    Map<String, Integer> kinds = new TreeMap<>();
    for (String m : sent) {
      String k = m.trim().substring("FE=> ".length());
      int paren = k.indexOf('(');
      kinds.merge(paren < 0 ? k.trim() : k.substring(0, paren), 1, Integer::sum);
    }
    return kinds;
  }

  private static void update(DataSource database, int id) throws SQLException {
    try (Connection c = database.getConnection()) {
      try (PreparedStatement ps =
          c.prepareStatement("UPDATE steady_accounts SET balance = balance + ? WHERE id = ?")) {
        ps.setInt(1, 7);
        ps.setInt(2, id);
        assertThat(ps.executeUpdate()).isOne();
      }
      c.commit();
    }
  }

  private static void tpcb(DataSource database, int id) throws SQLException {
    try (Connection c = database.getConnection()) {
      try (PreparedStatement ps =
          c.prepareStatement("UPDATE steady_accounts SET balance = balance + ? WHERE id = ?")) {
        ps.setInt(1, 7);
        ps.setInt(2, id);
        assertThat(ps.executeUpdate()).isOne();
      }
      select(c, id);
      try (PreparedStatement ps =
          c.prepareStatement("UPDATE steady_accounts SET balance = balance - ? WHERE id = ?")) {
        ps.setInt(1, 7);
        ps.setInt(2, 1 + id % 10);
        assertThat(ps.executeUpdate()).isOne();
      }
      try (PreparedStatement ps =
          c.prepareStatement("INSERT INTO steady_history (delta) VALUES (?)")) {
        ps.setInt(1, 7);
        assertThat(ps.executeUpdate()).isOne();
      }
      c.commit();
    }
  }

  private static void readOnly(DataSource database, int id) throws SQLException {
    try (Connection c = database.getConnection()) {
      select(c, id);
      select(c, 1 + id % 10);
      select(c, 1 + (id + 1) % 10);
      c.commit();
    }
  }

  private static void select(Connection c, int id) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT balance FROM steady_accounts WHERE id = ?")) {
      ps.setInt(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
      }
    }
  }
}
