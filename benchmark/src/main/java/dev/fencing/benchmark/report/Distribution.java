package dev.fencing.benchmark.report;

import org.jspecify.annotations.Nullable;

/**
 * Latency percentiles of one operation.
 *
 * @param id its stable key, {@code <section id>/<slug>} (see {@link Ids}), e.g. {@code
 *     "lease/acquire-release-p50"}
 * @param name what was timed, e.g. {@code "PostgreSQL lease acquire+release, 1 client"}
 * @param unit e.g. {@code "ms"}
 * @param count number of timed operations
 * @param p50 median
 * @param p90 90th percentile
 * @param p99 99th percentile
 * @param max the slowest
 * @param targetP50 the median the issue asks for at most, or null
 */
public record Distribution(
    String id,
    String name,
    String unit,
    long count,
    double p50,
    double p90,
    double p99,
    double max,
    @Nullable Double targetP50) {}
