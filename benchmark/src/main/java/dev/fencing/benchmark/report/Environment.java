package dev.fencing.benchmark.report;

import java.util.Map;

/**
 * Where and how a benchmark ran: printed with every result, because a ratio means little without
 * the machine and the database settings behind it.
 *
 * @param date when the run started (ISO-8601, UTC)
 * @param mode {@code "quick"}, {@code "full"} or another named plan
 * @param durations the plan in words: rounds, warm-up and measured seconds per variant
 * @param cpus processors available to the JVM
 * @param os operating system and architecture
 * @param jvm Java runtime name and version
 * @param database how the database was reached (embedded, or the URL without credentials)
 * @param postgres PostgreSQL's {@code version()}
 * @param settings the PostgreSQL settings that move throughput: shared_buffers, synchronous_commit,
 *     fsync, max_connections, WAL settings
 */
public record Environment(
    String date,
    String mode,
    String durations,
    int cpus,
    String os,
    String jvm,
    String database,
    String postgres,
    Map<String, String> settings) {

  public Environment {
    settings = Map.copyOf(settings);
  }
}
