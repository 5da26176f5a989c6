/**
 * Fencing tokens from etcd: {@link dev.fencing.etcd.EtcdFencedLock}, a lock of etcd's Lock service
 * whose token is the revision that created its lock key, checked by PostgreSQL through
 * fencing-jdbc's {@code FencedDataSource}.
 */
@NullMarked
package dev.fencing.etcd;

import org.jspecify.annotations.NullMarked;
