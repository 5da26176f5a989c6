package dev.fencing.shedlock;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingContext;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.Lease;

/** A lease bound on the thread that runs a job, from lock() to unlock(). */
final class FencedJob {
  private final Lease lease;
  private final FencingScope scope;
  private final Thread thread;

  private FencedJob(Lease lease, FencingScope scope, Thread thread) {
    this.lease = lease;
    this.scope = scope;
    this.thread = thread;
  }

  /** Binds {@code lease}'s token on the calling thread. */
  static FencedJob start(Lease lease) {
    return new FencedJob(lease, Fencing.bind(lease), Thread.currentThread());
  }

  Lease lease() {
    return lease;
  }

  /** The tokens bound while the job's scope is open. */
  FencingContext binding() {
    return scope.context();
  }

  /**
   * Unbinds the token on the job's thread.
   *
   * @throws IllegalStateException if called on another thread (the binding stays where it is), or
   *     while a binding the job opened is still open
   */
  void end() {
    if (Thread.currentThread() != thread) {
      throw new IllegalStateException(
          "lock on "
              + lease.resource()
              + " taken on thread "
              + thread.getName()
              + " is released on "
              + Thread.currentThread().getName()
              + ": its token stays bound on "
              + thread.getName());
    }
    scope.close();
  }
}
