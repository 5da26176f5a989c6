package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.Lease;
import java.util.ArrayDeque;
import java.util.Deque;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.Ordered;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The leases of {@code @WithLease} methods and ShedLock jobs that ran inside a transaction: their
 * tokens stay bound until the transaction completed (so its commit, and a JPA flush at commit, are
 * fenced), then they are unbound, innermost first, and released. One per transaction
 * synchronization scope.
 */
final class DeferredRelease implements TransactionSynchronization {
  private static final Logger LOG = LoggerFactory.getLogger(DeferredRelease.class);

  private final Deque<Runnable> stack = new ArrayDeque<>();

  private DeferredRelease() {}

  /** Keeps {@code scope} and {@code lease} until the current transaction completed. */
  static void register(FencingScope scope, Lease lease, HeldLeases held) {
    current().stack.push(() -> end(scope, lease, held));
  }

  /**
   * A ShedLock job's unlocking ({@code FencedLockProvider.Builder#deferUnlock}): run when the
   * thread's transaction completed, if one is active.
   *
   * @return whether it was deferred
   */
  static boolean deferUnlock(Runnable unlock) {
    if (!TransactionSynchronizationManager.isSynchronizationActive()) {
      return false;
    }
    current().stack.push(unlock);
    return true;
  }

  private static DeferredRelease current() {
    for (TransactionSynchronization s : TransactionSynchronizationManager.getSynchronizations()) {
      if (s instanceof DeferredRelease d) {
        return d;
      }
    }
    DeferredRelease deferred = new DeferredRelease();
    TransactionSynchronizationManager.registerSynchronization(deferred);
    return deferred;
  }

  /** Unbinds and releases now. */
  static void end(FencingScope scope, Lease lease, HeldLeases held) {
    try {
      scope.close();
    } finally {
      lease.close();
      held.remove(lease);
    }
  }

  @Override
  public void afterCompletion(int status) {
    while (!stack.isEmpty()) {
      try {
        stack.pop().run();
      } catch (RuntimeException e) {
        // an unbalanced binding opened inside the transaction; the lease is released anyway
        LOG.error("Could not unbind a lease's token after the transaction", e);
      }
    }
  }

  @Override
  public int getOrder() {
    return Ordered.LOWEST_PRECEDENCE;
  }
}
