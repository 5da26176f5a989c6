/**
 * Fenced ShedLock jobs: {@link dev.fencing.shedlock.FencedLockProvider} is a ShedLock {@code
 * LockProvider} backed by fencing leases, which binds the lease's token on the thread that runs the
 * job, so every write of a {@code @SchedulerLock} job through a {@link
 * dev.fencing.jdbc.FencedDataSource} is checked by PostgreSQL.
 */
@NullMarked
package dev.fencing.shedlock;

import org.jspecify.annotations.NullMarked;
