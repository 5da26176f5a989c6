package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingContext;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.Lease;
import java.util.ArrayList;
import java.util.List;
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
 *
 * <p>Innermost means opened last, not registered last: a nested method ends (and registers) before
 * the one around it, a later sibling after the earlier one although it was bound inside it. So the
 * one whose binding is the thread's current one is ended first, then the next, until none is left.
 */
final class DeferredRelease implements TransactionSynchronization {
  private static final Logger LOG = LoggerFactory.getLogger(DeferredRelease.class);

  /** A binding to end: {@code context} is what it installed on the thread. */
  private record Deferred(FencingContext context, Runnable end) {}

  private final List<Deferred> deferred = new ArrayList<>();

  private DeferredRelease() {}

  /** Keeps {@code scope} and {@code lease} until the current transaction completed. */
  static void register(FencingScope scope, Lease lease, HeldLeases held) {
    current().deferred.add(new Deferred(scope.context(), () -> end(scope, lease, held)));
  }

  /**
   * A ShedLock job's unlocking ({@code FencedLockProvider.Builder#deferUnlock}), whose binding
   * installed {@code binding}: run when the thread's transaction completed, if one is active.
   *
   * @return whether it was deferred
   */
  static boolean deferUnlock(FencingContext binding, Runnable unlock) {
    if (!TransactionSynchronizationManager.isSynchronizationActive()) {
      return false;
    }
    current().deferred.add(new Deferred(binding, unlock));
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
    while (!deferred.isEmpty()) {
      try {
        next().end().run();
      } catch (RuntimeException e) {
        // an unbalanced binding opened inside the transaction; the lease is released anyway
        LOG.error("Could not unbind a lease's token after the transaction", e);
      }
    }
  }

  /** The one bound innermost; else (a binding opened inside is still open) the last registered. */
  private Deferred next() {
    FencingContext bound = Fencing.current();
    for (int i = deferred.size() - 1; i >= 0; i--) {
      if (deferred.get(i).context() == bound) {
        return deferred.remove(i);
      }
    }
    return deferred.remove(deferred.size() - 1);
  }

  @Override
  public int getOrder() {
    return Ordered.LOWEST_PRECEDENCE;
  }
}
