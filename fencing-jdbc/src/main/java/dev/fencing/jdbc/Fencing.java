package dev.fencing.jdbc;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.Executor;

/**
 * Fencing tokens for PostgreSQL: the entry point for carrying them.
 *
 * <h2>The protocol</h2>
 *
 * A lease tells a client "you hold it", but a GC pause or a partition can outlast the lease; the
 * lock service then rightly gives the resource to someone else, and the paused client wakes up and
 * writes anyway. Fencing makes that write harmless:
 *
 * <ol>
 *   <li><b>Issue</b> — every acquisition gets a token strictly greater than any token issued before
 *       for that resource ({@link LeaseClient}, or a {@link FencedLock} of ZooKeeper or etcd).
 *   <li><b>Carry</b> — the token goes with every write: bind it here, write through a {@link
 *       FencedDataSource}.
 *   <li><b>Compare</b> — PostgreSQL keeps {@code max_seen} per resource and, in the writer's own
 *       transaction, refuses a token lower than it ({@link StaleFencingTokenException}).
 * </ol>
 *
 * <pre>
 * t0  client 1 acquires -> token 33          max_seen = 33 (acquiring fences at once)
 * t1  client 1 pauses; its lease expires
 * t3  client 2 acquires -> token 34          max_seen = 34
 * t4  client 2 writes with 34                accepted
 * t6  client 1 wakes, writes with 33         REFUSED: 33 &lt; 34, nothing written
 * </pre>
 *
 * Tokens only ever increase; a token equal to {@code max_seen} is the same acquisition writing
 * again and is accepted (unless the resource is strict: one write transaction per token).
 *
 * <h2>Binding</h2>
 *
 * <pre>{@code
 * try (Lease lease = leases.acquire("ledger", Duration.ofSeconds(30), Duration.ofSeconds(5));
 *      FencingScope scope = Fencing.bind(lease)) {
 *   ... every write through a FencedDataSource on this thread is fenced by lease's token ...
 * }
 * }</pre>
 *
 * Bindings belong to the calling thread, nest (inner scopes add resources), and never follow a
 * pooled connection: a connection checks the tokens bound on the thread that writes. Another thread
 * gets them only explicitly: {@link #wrap(Runnable)}, {@link #wrap(Executor)}, or {@link
 * FencingContext#bind()}.
 */
public final class Fencing {
  private static final ThreadLocal<FencingContext> CURRENT =
      ThreadLocal.withInitial(() -> FencingContext.EMPTY);

  private Fencing() {}

  /** Binds the leases' tokens to the calling thread until the returned scope is closed. */
  public static FencingScope bind(Lease... leases) {
    Objects.requireNonNull(leases, "leases");
    List<FencingContext.Binding> bindings = new ArrayList<>(leases.length);
    for (Lease lease : leases) {
      Objects.requireNonNull(lease, "lease");
      bindings.add(new FencingContext.Binding(lease.token(), lease));
    }
    return install(bindings);
  }

  /**
   * Binds tokens issued elsewhere (ZooKeeper, etcd, another service) to the calling thread until
   * the returned scope is closed.
   */
  public static FencingScope bind(FencingToken... tokens) {
    Objects.requireNonNull(tokens, "tokens");
    List<FencingContext.Binding> bindings = new ArrayList<>(tokens.length);
    for (FencingToken token : tokens) {
      bindings.add(new FencingContext.Binding(Objects.requireNonNull(token, "token"), null));
    }
    return install(bindings);
  }

  /** The tokens bound to the calling thread (empty if none). */
  public static FencingContext current() {
    return CURRENT.get();
  }

  /** {@code task} with the calling thread's current tokens bound wherever it runs. */
  public static Runnable wrap(Runnable task) {
    Objects.requireNonNull(task, "task");
    return current().wrap(task);
  }

  /** {@code task} with the calling thread's current tokens bound wherever it is called. */
  public static <T> Callable<T> wrap(Callable<T> task) {
    Objects.requireNonNull(task, "task");
    return current().wrap(task);
  }

  /**
   * An executor that runs each task with the tokens bound on the thread that submitted it, so work
   * handed to a pool (or to virtual threads) stays fenced.
   */
  public static Executor wrap(Executor executor) {
    Objects.requireNonNull(executor, "executor");
    return task -> executor.execute(wrap(task));
  }

  static FencingScope install(List<FencingContext.Binding> bindings) {
    FencingContext previous = CURRENT.get();
    FencingContext installed = previous.with(bindings);
    if (installed == previous) {
      // binds nothing new: still a scope of its own, which the enclosing scope's close can tell
      // apart (closing that one first must throw, not unbind this one's tokens)
      installed = installed.copy();
    }
    CURRENT.set(installed);
    return new FencingScope(Thread.currentThread(), previous, installed);
  }

  static void restore(FencingContext previous) {
    if (previous.isEmpty()) {
      CURRENT.remove();
    } else {
      CURRENT.set(previous);
    }
  }
}
