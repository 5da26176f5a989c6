package dev.fencing.shedlock;

import dev.fencing.jdbc.FencingContext;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.LeaseClient;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiPredicate;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.support.LockException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A ShedLock {@link net.javacrumbs.shedlock.core.LockProvider} whose locks are fencing leases: a
 * {@code @SchedulerLock} job's writes through a {@link dev.fencing.jdbc.FencedDataSource} carry the
 * lease's token, so PostgreSQL refuses them once another instance took the lock over (after this
 * one's {@code lockAtMostFor} ran out in a GC pause, a hung call, a partition).
 *
 * <pre>{@code
 * @Bean LockProvider lockProvider(DataSource pool) {        // the pool itself, not the fenced one
 *   return FencedLockProvider.builder(LeaseClient.builder(pool).build()).build();
 * }
 * }</pre>
 *
 * <ul>
 *   <li>{@link #lock} takes the lease on the lock's name (after {@link
 *       Builder#resourcePrefix(String)}) for {@code lockAtMostFor}, and binds its token ({@link
 *       dev.fencing.jdbc.Fencing#bind}) on the calling thread: ShedLock calls it on the thread that
 *       then runs the job, in its method-proxy and scheduler modes alike. A lock held by another
 *       instance is not an error: empty, and ShedLock skips the run.
 *   <li>{@link SimpleLock#unlock()} unbinds the token on that thread and releases the lease (when
 *       the job's transaction completed, with {@link Builder#deferUnlock}); if the job ended before
 *       {@code lockAtLeastFor}, the lease is released only when {@code lockAtLeastFor} has passed
 *       since the lock was taken (ShedLock's definition), by a daemon thread of this provider. The
 *       job's writes are no longer fenced after {@code unlock()}.
 *   <li>{@link SimpleLock#extend} renews the lease (its expiry moves {@code lockAtMostFor} on, by
 *       the database clock) and keeps the token bound. The lease's length is fixed when it is
 *       taken, so {@code extend} accepts only the lock's own {@code lockAtMostFor} (ShedLock's
 *       {@code KeepAliveLockProvider} asks for exactly that); another length throws {@link
 *       UnsupportedOperationException}. A lease that cannot be renewed (another instance took it)
 *       gives empty, as ShedLock expects; the job's writes are refused from then on.
 * </ul>
 *
 * <p>Use a {@link LeaseClient} without keep-alive (one with it is refused by {@link
 * Builder#build()}): ShedLock's {@code lockAtMostFor} means the lock ends after that time even if
 * the job still runs, and a kept-alive lease never would. Give the lease client the pool, not a
 * {@code FencedDataSource} (its own SQL needs no token). Lock names must be valid resource names
 * ({@link FencingToken#requireValidResource}); {@code lockAtMostFor} must be between 1 ms and 7
 * days (the lease's bounds).
 */
public final class FencedLockProvider implements ExtensibleLockProvider, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FencedLockProvider.class);
  private static final AtomicInteger THREAD_NUMBER = new AtomicInteger();

  private final LeaseClient leases;
  private final String resourcePrefix;
  private final BiPredicate<FencingContext, Runnable> unlockDeferral;
  private final Set<Lease> held = ConcurrentHashMap.newKeySet();
  private final ScheduledThreadPoolExecutor delayedReleases;

  private FencedLockProvider(Builder builder) {
    this.leases = builder.leases;
    this.resourcePrefix = builder.resourcePrefix;
    this.unlockDeferral = builder.unlockDeferral;
    this.delayedReleases =
        new ScheduledThreadPoolExecutor(
            1,
            task -> {
              Thread t =
                  new Thread(task, "fencing-shedlock-release-" + THREAD_NUMBER.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    this.delayedReleases.setRemoveOnCancelPolicy(true);
  }

  /**
   * Starts a configuration whose locks are leases of {@code leases}.
   *
   * @param leases the lease client, without keep-alive, over the pool
   * @return the builder
   */
  public static Builder builder(LeaseClient leases) {
    return new Builder(leases);
  }

  /**
   * Takes the lease on {@code resourcePrefix + name} for {@code lockAtMostFor} and binds its token
   * on the calling thread.
   *
   * @return the lock, or empty if another holder has the lease
   * @throws IllegalArgumentException if the resulting resource name is not a valid resource name,
   *     or {@code lockAtMostFor} is outside 1 ms to 7 days
   * @throws LockException if the database fails
   */
  @Override
  public Optional<SimpleLock> lock(LockConfiguration configuration) {
    String resource = FencingToken.requireValidResource(resourcePrefix + configuration.getName());
    Optional<Lease> acquired;
    try {
      acquired = leases.tryAcquire(resource, configuration.getLockAtMostFor());
    } catch (SQLException e) {
      throw new LockException("could not take the lease on " + resource + ": " + e.getMessage(), e);
    }
    if (acquired.isEmpty()) {
      return Optional.empty();
    }
    Lease lease = acquired.get();
    FencedJob job;
    try {
      job = FencedJob.start(lease);
    } catch (RuntimeException e) {
      lease.close();
      throw e;
    }
    held.add(lease);
    return Optional.of(new FencedLock(job, configuration));
  }

  /**
   * The leases of the locks this provider holds now (taken and not yet released).
   *
   * @return a snapshot, for health checks and logs
   */
  public List<Lease> heldLeases() {
    return List.copyOf(held);
  }

  /**
   * Stops the thread that releases leases after {@code lockAtLeastFor}. Leases still waiting for it
   * are not released early (that would break {@code lockAtLeastFor}): they expire after {@code
   * lockAtMostFor}. Does not close the lease client.
   */
  @Override
  public void close() {
    delayedReleases.shutdownNow();
  }

  @Override
  public String toString() {
    return "FencedLockProvider["
        + leases
        + (resourcePrefix.isEmpty() ? "" : ", " + resourcePrefix)
        + "]";
  }

  private void release(FencedJob job, LockConfiguration configuration) {
    Duration untilAtLeast =
        Duration.between(ClockProvider.now(), configuration.getLockAtLeastUntil());
    Lease lease = job.lease();
    if (untilAtLeast.isNegative() || untilAtLeast.isZero()) {
      releaseNow(lease);
      return;
    }
    LOG.debug(
        "Job under lock {} ended; its lease is kept until lockAtLeastFor has passed ({})",
        configuration.getName(),
        configuration.getLockAtLeastUntil());
    try {
      delayedReleases.schedule(
          () -> releaseNow(lease), untilAtLeast.toNanos(), TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      LOG.info(
          "Provider closed: lease on {} expires by itself at {}",
          lease.resource(),
          lease.expiresAt());
    }
  }

  private void releaseNow(Lease lease) {
    try {
      lease.close();
    } finally {
      held.remove(lease);
    }
  }

  /** One generation of a lock: a successful extend hands the job over to a new one. */
  private final class FencedLock implements SimpleLock {
    private final FencedJob job;
    private final LockConfiguration configuration;
    private boolean extended;

    FencedLock(FencedJob job, LockConfiguration configuration) {
      this.job = job;
      this.configuration = configuration;
    }

    @Override
    public synchronized void unlock() {
      requireCurrent();
      extended = true; // no further use of this generation
      Runnable end =
          () -> {
            try {
              job.end();
            } finally {
              release(job, configuration);
            }
          };
      if (!unlockDeferral.test(job.binding(), end)) {
        end.run();
      }
    }

    @Override
    public synchronized Optional<SimpleLock> extend(
        Duration lockAtMostFor, Duration lockAtLeastFor) {
      requireCurrent();
      Lease lease = job.lease();
      if (!lockAtMostFor.equals(lease.ttl())) {
        throw new UnsupportedOperationException(
            "a fenced lock is extended by its own lockAtMostFor ("
                + lease.ttl()
                + "), not by "
                + lockAtMostFor);
      }
      try {
        lease.renew();
      } catch (SQLException | RuntimeException e) {
        LOG.warn(
            "Could not extend lock {} (lease on {} with token {}): {}",
            configuration.getName(),
            lease.resource(),
            lease.token().value(),
            e.getMessage());
        return Optional.empty(); // this generation stays current, so unlock() still unbinds
      }
      extended = true;
      return Optional.of(
          new FencedLock(
              job,
              new LockConfiguration(
                  ClockProvider.now(), configuration.getName(), lockAtMostFor, lockAtLeastFor)));
    }

    private void requireCurrent() {
      if (extended) {
        throw new IllegalStateException(
            "Lock " + configuration.getName() + " has already been unlocked or extended");
      }
    }
  }

  /** Configuration of a {@link FencedLockProvider}. */
  public static final class Builder {
    private final LeaseClient leases;
    private String resourcePrefix = "";
    private BiPredicate<FencingContext, Runnable> unlockDeferral = (binding, unlock) -> false;

    private Builder(LeaseClient leases) {
      this.leases = Objects.requireNonNull(leases, "leases");
    }

    /**
     * Text put before every lock name to make the fenced resource's name (default empty: the lock
     * {@code "ledger"} fences the resource {@code "ledger"}, e.g. {@code @Fenced("ledger")}
     * entities). Letters, digits and {@code _ . : / @ + = # -}, at most 100 characters.
     *
     * @param resourcePrefix the prefix, possibly empty
     * @return this builder
     * @throws IllegalArgumentException if the prefix has other characters or is too long
     */
    public Builder resourcePrefix(String resourcePrefix) {
      Objects.requireNonNull(resourcePrefix, "resourcePrefix");
      if (!resourcePrefix.isEmpty()) {
        FencingToken.requireValidResource(resourcePrefix);
      }
      if (resourcePrefix.length() > 100) {
        throw new IllegalArgumentException(
            "resourcePrefix is " + resourcePrefix.length() + " characters long; the limit is 100");
      }
      this.resourcePrefix = resourcePrefix;
      return this;
    }

    /**
     * Lets {@link SimpleLock#unlock()} hand its unbinding and release to the job's transaction
     * (default: never). ShedLock's method advice may run inside a transaction's advice, so that
     * {@code unlock()} comes before the commit, and what the commit writes (a JPA flush) would
     * carry no token. {@code deferral} is called by {@code unlock()} on the job's thread with the
     * unlocking: it returns true if it will run it later on that thread (when the transaction
     * completed), false to have it run now. The Spring Boot starter defers to the thread's
     * transaction synchronization.
     *
     * @param deferral decides, per unlock, whether to run the unlocking later
     * @return this builder
     */
    public Builder deferUnlock(BiPredicate<FencingContext, Runnable> deferral) {
      this.unlockDeferral = Objects.requireNonNull(deferral, "deferral");
      return this;
    }

    /**
     * Builds the provider.
     *
     * @return the provider; close it when the application stops
     * @throws IllegalArgumentException if the lease client keeps its leases alive ({@link
     *     LeaseClient#keepsAlive()}): a lock would then outlive {@code lockAtMostFor} for as long
     *     as the job hangs
     */
    public FencedLockProvider build() {
      if (leases.keepsAlive()) {
        throw new IllegalArgumentException(
            "the lease client "
                + leases
                + " keeps its leases alive (keep-alive): a lock would never end after"
                + " lockAtMostFor while its job hangs; give FencedLockProvider a LeaseClient built"
                + " with keepAlive(false)");
      }
      return new FencedLockProvider(this);
    }
  }
}
