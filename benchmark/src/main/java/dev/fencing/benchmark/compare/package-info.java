/**
 * The founding document's table, measured: the same zombie scenario played against each way of
 * holding a distributed lock, with PostgreSQL as the protected resource. See {@link
 * dev.fencing.benchmark.compare.CompareCommand}.
 */
@NullMarked
package dev.fencing.benchmark.compare;

import org.jspecify.annotations.NullMarked;
