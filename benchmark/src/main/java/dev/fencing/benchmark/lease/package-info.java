/**
 * Lease operations measured: acquire+release latency and throughput through the Java API, side by
 * side with the lock services users pick today, and the handover time after an expiry.
 */
@NullMarked
package dev.fencing.benchmark.lease;

import org.jspecify.annotations.NullMarked;
