package dev.fencing.jdbc;

import org.jspecify.annotations.Nullable;

/**
 * Told when a kept-alive lease is lost: its renewal was refused (another client acquired the
 * resource, or the lease had expired), or the keep-alive could not renew it before it expired. It
 * is called at most once per lease, and never once {@link Lease#close()} has been called (a call
 * the keep-alive began before may still be running when close() returns).
 *
 * <p>It runs on the keep-alive thread ({@code fencing-keepalive-N}), which renews every other lease
 * of the {@link LeaseClient}: it must not block. Hand real work (stopping a job, alerting) to
 * another thread. Whatever it throws is logged and otherwise ignored.
 */
@FunctionalInterface
public interface LeaseListener {
  /**
   * The lease is lost: stop the work it guards. Writes carrying its token are refused from now on,
   * by the client ({@link Lease#isLost()}) or by the database once another client acquired it.
   *
   * @param lease the lost lease
   * @param cause the refusal of the renewal (e.g. {@link StaleFencingTokenException}), or the last
   *     failed renewal attempt when the lease ran out before one succeeded; null if none is known
   */
  void leaseLost(Lease lease, @Nullable Throwable cause);
}
