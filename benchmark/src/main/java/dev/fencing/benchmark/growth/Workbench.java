package dev.fencing.benchmark.growth;

import dev.fencing.benchmark.measure.Scale;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencingToken;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import javax.sql.DataSource;

/**
 * What the growth measurements share: the pool (commits asynchronous, so that the WAL flush, the
 * same in every variant, does not drown the check), its fenced view, a table of rows to update, and
 * resources with real tokens.
 */
final class Workbench {
  static final String ITEMS = "bench_growth_item";
  static final int ITEM_ROWS = 1_000;

  final DataSource database;
  final DataSource pool;
  final FencedDataSource fenced;
  final Scale scale;
  final String prefix;
  private long[] tokens = new long[1];
  private int created;

  Workbench(DataSource database, DataSource pool, Scale scale, String run) {
    this.database = database;
    this.pool = pool;
    this.fenced = FencedDataSource.wrap(pool);
    this.scale = scale;
    this.prefix = "bench/growth/" + run + "/";
  }

  void createItems() throws SQLException {
    execute(
        "CREATE TABLE IF NOT EXISTS "
            + ITEMS
            + " (id int PRIMARY KEY, v bigint NOT NULL DEFAULT 0) WITH (fillfactor = 50)");
    execute("TRUNCATE " + ITEMS);
    execute("INSERT INTO " + ITEMS + " (id) SELECT g FROM generate_series(1, " + ITEM_ROWS + ") g");
    execute("VACUUM ANALYZE " + ITEMS);
  }

  void dropItems() throws SQLException {
    execute("DROP TABLE IF EXISTS " + ITEMS);
  }

  /** The name of resource number {@code i} (1-based). */
  String resource(int i) {
    return prefix + i;
  }

  /** The token issued for resource number {@code i}. */
  FencingToken token(int i) {
    return FencingToken.of(resource(i), tokens[i]);
  }

  int created() {
    return created;
  }

  /**
   * Makes resources 1 to {@code n} exist, each with a token really issued: the fence's own API,
   * {@code fencing.try_acquire}, called set-wise, 10,000 per transaction (each commit durable, as
   * try_acquire requires). Returns the seconds it took.
   */
  double createResources(int n) throws SQLException {
    if (n <= created) {
      return 0;
    }
    long start = System.nanoTime();
    tokens = Arrays.copyOf(tokens, Math.max(tokens.length, n + 1));
    try (Connection c = database.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT g, a.acquired, a.token FROM generate_series(?, ?) g"
                    + " CROSS JOIN LATERAL fencing.try_acquire(? || g, 'bench-growth',"
                    + " interval '1 day') a")) {
      ps.setString(3, prefix);
      for (int from = created + 1; from <= n; from += 10_000) {
        int to = Math.min(n, from + 9_999);
        ps.setInt(1, from);
        ps.setInt(2, to);
        int rows = 0;
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            if (!rs.getBoolean(2)) {
              throw new IllegalStateException("resource " + resource(rs.getInt(1)) + " was held");
            }
            tokens[rs.getInt(1)] = rs.getLong(3);
            rows++;
          }
        }
        if (rows != to - from + 1) {
          throw new IllegalStateException("try_acquire returned " + rows + " rows for " + from);
        }
        created = to;
      }
    }
    return (System.nanoTime() - start) / 1e9;
  }

  /** One transaction's work on {@code c} (autocommit off); {@code n} counts transactions. */
  @FunctionalInterface
  interface Transaction {
    void run(Connection c, int n) throws SQLException;
  }

  /**
   * Transactions per second of {@code tx}, run back to back on one connection of {@code source} for
   * {@code millis} and at least {@code minTransactions} times; each is committed.
   */
  static double rate(DataSource source, long millis, int minTransactions, Transaction tx)
      throws SQLException {
    try (Connection c = source.getConnection()) {
      c.setAutoCommit(false);
      long start = System.nanoTime();
      long end = start + millis * 1_000_000;
      int n = 0;
      while (n < minTransactions || System.nanoTime() < end) {
        tx.run(c, n);
        c.commit();
        n++;
      }
      double rate = n / ((System.nanoTime() - start) / 1e9);
      c.setAutoCommit(true);
      return rate;
    }
  }

  void execute(String sql) throws SQLException {
    try (Connection c = database.getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  static long longValue(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
