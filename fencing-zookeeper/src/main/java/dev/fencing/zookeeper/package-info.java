/**
 * Fencing tokens from ZooKeeper: {@link dev.fencing.zookeeper.ZooKeeperFencedLock}, a Curator lock
 * whose token is the czxid of its lock node, checked by PostgreSQL through fencing-jdbc's {@code
 * FencedDataSource}.
 */
@NullMarked
package dev.fencing.zookeeper;

import org.jspecify.annotations.NullMarked;
