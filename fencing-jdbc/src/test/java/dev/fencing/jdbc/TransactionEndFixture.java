package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.FencingTestSupport.queryLong;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * The cases of {@link TransactionEndTest} and {@link TransactionBlockEndTest}, on one test
 * database: a resource whose current holder has token {@link #CURRENT} and a zombie the stale
 * {@link #STALE}, a write a read hides ({@code te_hidden}, counted by {@link #hidden}) and a table
 * of the holder's rows ({@code te_rows2}). Test code only.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
final class TransactionEndFixture {
  static final long STALE = 8;
  static final long CURRENT = 9;
  static final AtomicInteger IDS = new AtomicInteger(1);

  /** What one half of a case does on its connection. */
  @FunctionalInterface
  interface Work {
    void run(Connection c) throws SQLException;
  }

  static final Work NOTHING = c -> {};
  static final Work IN_TRANSACTION = c -> c.setAutoCommit(false);

  final DataSource plain;
  final DataSource fenced;
  private final String resource;

  TransactionEndFixture(TestDatabaseExtension db) throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    fenced = FencedDataSource.wrap(plain);
    resource = externalResource(plain, "tx-end", CURRENT);
    exec(plain, "CREATE TABLE te_rows2 (id int PRIMARY KEY)");
    FencingTestSupport.createHiddenWrite(plain, "te");
  }

  FencingScope bind(long token) {
    return Fencing.bind(FencingToken.of(resource, token));
  }

  /** Rows the hidden write committed. */
  long hidden() throws SQLException {
    return queryLong(plain, "SELECT count(*) FROM te_rows");
  }

  boolean present(int id) throws SQLException {
    return queryLong(plain, "SELECT count(*) FROM te_rows2 WHERE id = ?", id) == 1;
  }

  static void run(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  static void insert(Connection c, int id) throws SQLException {
    run(c, "INSERT INTO te_rows2 VALUES (" + id + ")");
  }

  static void assertRefused(Throwable e) {
    assertThat(FencingExceptions.find(e))
        .as("refused as stale: %s", String.valueOf(e))
        .containsInstanceOf(StaleFencingTokenException.class);
  }

  static long query1(Connection c) throws SQLException {
    return ((Number) FencingTestSupport.query(c, "SELECT 1")).longValue();
  }

  /**
   * On a new fenced connection: {@code open} with no token bound, {@code bound} with {@code token}
   * bound, {@code after} with it no longer bound; then the connection is closed.
   */
  void onConnection(long token, Work open, Work bound, Work after) throws SQLException {
    try (Connection c = fenced.getConnection()) {
      open.run(c);
      try (FencingScope scope = bind(token)) {
        bound.run(c);
      }
      after.run(c);
    }
  }

  /**
   * A zombie's half of a case: {@link #onConnection} with the stale token; nothing its hidden write
   * did is committed.
   */
  void zombie(Work open, Work bound, Work after) throws SQLException {
    long before = hidden();
    onConnection(STALE, open, bound, after);
    assertThat(hidden()).isEqualTo(before);
  }

  /** {@link #zombie} in a transaction opened by {@code setAutoCommit(false)}, nothing after. */
  void zombie(Work bound) throws SQLException {
    zombie(IN_TRANSACTION, bound, NOTHING);
  }

  /** The current holder's half of a case: {@code work} with its token bound throughout. */
  void holder(Work work) throws SQLException {
    onConnection(CURRENT, NOTHING, work, NOTHING);
  }
}
