package dev.fencing.benchmark;

import dev.fencing.benchmark.report.Section;
import java.util.List;
import javax.sql.DataSource;

/**
 * One measurement of the report: given a migrated database, returns its sections. Implementations
 * are the {@code run(DataSource, boolean)} methods of the measurement classes, listed in {@link
 * Main#BENCHMARKS}.
 */
@FunctionalInterface
public interface Benchmark {
  /**
   * Measures on {@code database}.
   *
   * @param quick the README's quick mode (a few minutes) rather than the full one
   */
  List<Section> run(DataSource database, boolean quick) throws Exception;
}
