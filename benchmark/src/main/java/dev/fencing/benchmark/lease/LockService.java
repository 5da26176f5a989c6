package dev.fencing.benchmark.lease;

/**
 * A lock service whose acquire+release the benchmark times, the fence's leases or an alternative.
 * Another alternative (etcd, once its token source exists) is one more implementation added to
 * {@link LeaseBenchmark#services}.
 */
interface LockService extends AutoCloseable {
  /** The name in the report, e.g. {@code "ZooKeeper (Curator InterProcessMutex)"}. */
  String name();

  /** Its slug in the report's ids, e.g. {@code "zookeeper"} ({@code lease/zookeeper-1-client}). */
  String slug();

  /**
   * A client of lock number {@code lock} (0 to clients - 1): each client takes its own lock, so
   * there is no contention between clients. Called once per client before measuring.
   */
  Client client(int lock) throws Exception;

  /** One client (one thread uses it at a time). */
  interface Client {
    /** Acquires its lock, durably, and releases it; fails if the lock is not free. */
    void acquireRelease() throws Exception;
  }
}
