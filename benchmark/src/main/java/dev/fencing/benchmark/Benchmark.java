package dev.fencing.benchmark;

import dev.fencing.benchmark.report.Section;
import java.util.List;
import java.util.function.Predicate;
import javax.sql.DataSource;

/**
 * One measurement of the report: given a migrated database, returns its sections. Implementations
 * call the {@code run} methods of the measurement classes, listed in {@link Main#BENCHMARKS}.
 */
@FunctionalInterface
public interface Benchmark {
  /**
   * Measures on {@code database}.
   *
   * @param quick the README's quick mode (a few minutes) rather than the full one
   * @param selected which section ids to measure ({@code --sections}); a measurement that cannot
   *     measure one of its sections alone may return the others too (the caller drops them)
   */
  List<Section> run(DataSource database, boolean quick, Predicate<String> selected)
      throws Exception;
}
