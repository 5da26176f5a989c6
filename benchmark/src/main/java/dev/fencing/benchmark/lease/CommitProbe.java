package dev.fencing.benchmark.lease;

import dev.fencing.benchmark.measure.Samples;
import dev.fencing.benchmark.measure.Scale;
import dev.fencing.benchmark.report.Distribution;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/**
 * What one WAL flush costs on this server: a 1-row INSERT committed with {@code synchronous_commit}
 * on, against the same with it off, timed in each round next to the lease operations.
 */
final class CommitProbe {
  private static final String TABLE = "bench_commit_probe";

  private final DataSource database;
  private final int ops;
  private final long[] durable;
  private final long[] async;
  private int rounds;

  CommitProbe(DataSource database, Scale scale) throws SQLException {
    this.database = database;
    this.ops = scale.latencyOps();
    this.durable = new long[scale.rounds() * ops];
    this.async = new long[scale.rounds() * ops];
    LeaseBenchmark.execute(
        database, "CREATE TABLE IF NOT EXISTS " + TABLE + " (id bigserial PRIMARY KEY, n int)");
  }

  void round() throws SQLException {
    try (Connection c = database.getConnection();
        Statement s = c.createStatement();
        PreparedStatement insert = c.prepareStatement("INSERT INTO " + TABLE + " (n) VALUES (1)")) {
      for (String mode : new String[] {"on", "off"}) {
        s.execute("SET synchronous_commit = " + mode);
        long[] into = mode.equals("on") ? durable : async;
        for (int i = 0; i < ops; i++) {
          long t0 = System.nanoTime();
          insert.executeUpdate();
          into[rounds * ops + i] = System.nanoTime() - t0;
        }
      }
      s.execute("TRUNCATE " + TABLE);
    }
    rounds++;
  }

  Distribution durable() {
    return Samples.millis(
        "lease/commit-durable",
        "1-row INSERT, autocommit, synchronous_commit = on (one WAL flush)",
        java.util.Arrays.copyOf(durable, rounds * ops),
        null);
  }

  Distribution async() {
    return Samples.millis(
        "lease/commit-async",
        "1-row INSERT, autocommit, synchronous_commit = off (no flush wait)",
        java.util.Arrays.copyOf(async, rounds * ops),
        null);
  }

  static void drop(DataSource database) throws SQLException {
    LeaseBenchmark.execute(database, "DROP TABLE IF EXISTS " + TABLE);
  }
}
