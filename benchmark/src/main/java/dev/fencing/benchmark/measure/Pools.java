package dev.fencing.benchmark.measure;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;

/** Connection pools over the benchmark's DataSource, as an application would have them. */
public final class Pools {
  private Pools() {}

  /**
   * A HikariCP pool of at most {@code size} connections borrowed from {@code database}; close it
   * when done.
   */
  public static HikariDataSource hikari(DataSource database, String name, int size) {
    HikariConfig config = new HikariConfig();
    config.setDataSource(database);
    config.setPoolName(name);
    config.setMaximumPoolSize(size);
    config.setMinimumIdle(size);
    config.setConnectionTimeout(30_000);
    return new HikariDataSource(config);
  }
}
