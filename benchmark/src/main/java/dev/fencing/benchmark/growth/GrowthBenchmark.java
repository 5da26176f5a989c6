package dev.fencing.benchmark.growth;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.benchmark.measure.Scale;
import dev.fencing.benchmark.report.Section;
import dev.fencing.jdbc.FencingToken;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * Growth: the check's cost with 1, 10^3 and 10^6 resources (it must not grow with the count), with
 * 1 to 1,000 writes per transaction (one check per transaction), the multixacts a sustained
 * same-token load consumes (hazard 6), and the per-row trigger cost of protected tables.
 *
 * <pre>{@code
 * List<Section> sections = GrowthBenchmark.run(dataSource, true); // quick mode: up to 10^4
 * }</pre>
 *
 * The fence's schema must be migrated and the user must own the tables it creates (it protects
 * them). Resources are created through {@code fencing.try_acquire} and stay (up to 10^6 named
 * {@code bench/growth/...}: resources cannot be deleted); the benchmark's tables are dropped.
 */
public final class GrowthBenchmark {
  private GrowthBenchmark() {}

  /**
   * Measures, in quick mode or in full.
   *
   * @return the sections "growth-resources", "growth-writes", "growth-multixact" and
   *     "growth-row-triggers"
   * @throws SQLException if the database fails
   * @throws InterruptedException if interrupted
   */
  public static List<Section> run(DataSource database, boolean quick)
      throws SQLException, InterruptedException {
    return run(database, Scale.of(quick));
  }

  /**
   * Measures at {@code scale} ({@link Scale#tiny()} for tests of the harness).
   *
   * @throws SQLException if the database fails
   * @throws InterruptedException if interrupted
   */
  public static List<Section> run(DataSource database, Scale scale)
      throws SQLException, InterruptedException {
    String run = UUID.randomUUID().toString().substring(0, 8);
    List<Section> sections = new ArrayList<>();
    try (HikariDataSource pool = asyncCommitPool(database, scale.clients() + 1)) {
      Workbench w = new Workbench(database, pool, scale, run);
      w.createItems();
      try {
        FencingToken hot = issue(database, w.prefix + "hot");
        FencingToken row = issue(database, w.prefix + "row/1");
        sections.add(CheckCost.measure(w));
        sections.add(WritesPerTransaction.measure(w, hot));
        sections.add(MultixactGrowth.measure(w, hot));
        sections.add(RowTriggerCost.measure(w, hot, row));
      } finally {
        w.dropItems();
      }
    }
    return sections;
  }

  /** A pool whose commits do not wait for the WAL flush (the same in every variant). */
  private static HikariDataSource asyncCommitPool(DataSource database, int size) {
    HikariConfig config = new HikariConfig();
    config.setDataSource(database);
    config.setPoolName("bench-growth");
    config.setMaximumPoolSize(size);
    config.setMinimumIdle(size);
    config.setConnectionInitSql("SET synchronous_commit = off");
    return new HikariDataSource(config);
  }

  /** A token really issued by the fence, on a lease that lasts a day. */
  static FencingToken issue(DataSource database, String resource) throws SQLException {
    try (Connection c = database.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT acquired, token FROM fencing.try_acquire(?, 'bench-growth',"
                    + " interval '1 day')")) {
      ps.setString(1, resource);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        if (!rs.getBoolean(1)) {
          throw new IllegalStateException("the benchmark's resource " + resource + " was held");
        }
        return FencingToken.of(resource, rs.getLong(2));
      }
    }
  }
}
