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
 * The leases of {@code @WithLease} methods that ran inside a transaction: their tokens stay bound
 * until the transaction completed (so its commit, and a JPA flush at commit, are fenced), then they
 * are unbound, innermost first, and released. One per transaction synchronization scope.
 */
final class DeferredRelease implements TransactionSynchronization {
  private static final Logger LOG = LoggerFactory.getLogger(DeferredRelease.class);

  private record Held(FencingScope scope, Lease lease) {}

  private final Deque<Held> stack = new ArrayDeque<>();
  private final HeldLeases held;

  private DeferredRelease(HeldLeases held) {
    this.held = held;
  }

  /** Keeps {@code scope} and {@code lease} until the current transaction completed. */
  static void register(FencingScope scope, Lease lease, HeldLeases held) {
    DeferredRelease deferred = null;
    for (TransactionSynchronization s : TransactionSynchronizationManager.getSynchronizations()) {
      if (s instanceof DeferredRelease d) {
        deferred = d;
      }
    }
    if (deferred == null) {
      deferred = new DeferredRelease(held);
      TransactionSynchronizationManager.registerSynchronization(deferred);
    }
    deferred.stack.push(new Held(scope, lease));
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
      Held h = stack.pop();
      try {
        end(h.scope(), h.lease(), held);
      } catch (RuntimeException e) {
        // an unbalanced binding opened inside the transaction; the lease is released anyway
        LOG.error("Could not unbind the token of {} after the transaction", h.lease(), e);
      }
    }
  }

  @Override
  public int getOrder() {
    return Ordered.LOWEST_PRECEDENCE;
  }
}
