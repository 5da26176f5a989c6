/**
 * The torture test: worker processes contend for a few resources through the lease client and
 * {@code FencedDataSource} while they are paused past their leases, their connections are killed
 * and PostgreSQL crashes; a {@link dev.fencing.torture.Checker} then judges the recorded history.
 */
@NullMarked
package dev.fencing.torture;

import org.jspecify.annotations.NullMarked;
