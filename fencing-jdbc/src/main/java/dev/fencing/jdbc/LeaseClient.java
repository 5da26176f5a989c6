package dev.fencing.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientException;
import java.sql.SQLWarning;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Issues leases, and with them fencing tokens, from the fence's SQL ({@code try_acquire}, {@code
 * renew}, {@code release} of the migrations): every acquisition of a resource gets a token greater
 * than any issued for it before. See {@link Fencing} for the protocol and {@link Lease} for what
 * happens on expiry and crash.
 *
 * <pre>{@code
 * LeaseClient leases = LeaseClient.builder(dataSource).keepAlive(true).build();
 * Optional<Lease> lease = leases.tryAcquire("ledger", Duration.ofSeconds(30)); // empty: held
 * try (Lease l = leases.acquire("ledger", Duration.ofSeconds(30), Duration.ofSeconds(5))) { ... }
 * }</pre>
 *
 * <p>All times that decide anything come from the database clock; the client's clock only estimates
 * when a lease runs out ({@link Lease#isLost()} says what that estimate cannot know, {@link
 * Lease#verify()} asks the database). A token is handed out only after the transaction that issued
 * it committed durably. Thread-safe; {@link #close()} stops the keep-alive but releases nothing.
 */
public final class LeaseClient implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LeaseClient.class);

  private final DataSource dataSource;
  private final String holder;
  private final Duration handoverTimeout;
  private final double renewFraction;
  private final LeaseListener listener;
  private final LongSupplier nanoTime;
  private final @Nullable ScheduledExecutorService keepAlive;
  private final LeaseQueries queries;
  private final AtomicBoolean closed = new AtomicBoolean();

  private LeaseClient(Builder builder, String holder) {
    this.dataSource = builder.dataSource;
    this.holder = holder;
    this.handoverTimeout = builder.handoverTimeout;
    this.renewFraction = builder.renewFraction;
    this.listener = builder.listener;
    this.nanoTime = builder.nanoTime;
    this.keepAlive = builder.keepAlive ? LeaseSettings.newKeepAliveScheduler() : null;
    this.queries = new LeaseQueries(builder.schema);
  }

  /** Starts a configuration that borrows connections from {@code dataSource}. */
  public static Builder builder(DataSource dataSource) {
    return new Builder(dataSource);
  }

  /** The holder name recorded with every lease this client acquires. */
  public String holder() {
    return holder;
  }

  /**
   * Whether this client renews its leases in the background until they are closed ({@link
   * Builder#keepAlive(boolean)}).
   */
  public boolean keepsAlive() {
    return keepAlive != null;
  }

  /**
   * Takes the lease on {@code resource} if it is free or expired (database clock), in one
   * transaction on a connection borrowed from the DataSource. Contention is not an error.
   *
   * <p>The resource may be free while the previous holder's fenced transactions are still open: the
   * acquisition then waits for them up to {@link Builder#handoverTimeout(Duration)}. If they
   * outlast it, nothing is acquired and the result is empty, as when another client holds the lease
   * (the previous holder is still at work); it is logged at WARN. Use {@link #acquire} to keep
   * trying.
   *
   * <p>An interrupt of the calling thread during the handover wait ends it (noticed within 100 ms:
   * the statement is cancelled), as it ends {@link #acquire}'s waits; a thread interrupted already
   * does not wait for a handover. An interrupted thread that finds the lease free, with no handover
   * to wait for, still takes it.
   *
   * @param ttl how long the lease is granted, 1 ms to 7 days
   * @return the lease, or empty if another client holds it (or is acquiring it right now, or its
   *     fenced transactions outlasted the handover timeout)
   * @throws SQLException if the database fails, or the issuing commit might not be durable (the
   *     token then counts as not issued); with SQLState {@code 57014} and an {@link
   *     InterruptedException} as cause if the thread was interrupted while waiting for the
   *     handover: nothing is acquired and the thread's interrupt status is kept
   * @throws IllegalArgumentException if {@code resource} is malformed ({@link
   *     FencingToken#requireValidResource(String)}) or {@code ttl} is out of range
   * @throws IllegalStateException if this client is closed
   */
  public Optional<Lease> tryAcquire(String resource, Duration ttl) throws SQLException {
    FencingToken.requireValidResource(resource);
    LeaseSettings.checkTtl(ttl);
    requireOpen();
    try (Connection c = dataSource.getConnection()) {
      return Optional.ofNullable(attempt(c, resource, ttl, handoverTimeout).lease());
    } catch (HandoverTimeoutException e) {
      LOG.warn("Lease on {} not acquired: {}", resource, e.getMessage());
      return Optional.empty();
    }
  }

  /**
   * Takes the lease on {@code resource}, waiting up to {@code timeout} for it. The wait holds one
   * connection that listens for releases ({@code fencing_lease_released}) and otherwise sleeps on
   * the socket until the current lease expires by the database's reckoning; it does not poll.
   *
   * <p>Once the lease is free, the acquisition waits for the previous holder's open fenced
   * transactions (the handover), each attempt up to {@link Builder#handoverTimeout(Duration)} but
   * never past {@code timeout}, and tries again while {@code timeout} has time left.
   *
   * @param ttl how long the lease is granted, 1 ms to 7 days
   * @param timeout how long to wait, not negative; zero means one attempt (which does not wait for
   *     a handover either)
   * @throws HandoverTimeoutException if the lease was free but the previous holder's fenced
   *     transactions were still open when {@code timeout} ran out (an {@link SQLTimeoutException})
   * @throws SQLTimeoutException if the lease did not become free within {@code timeout}
   * @throws SQLException if the database fails, or the issuing commit might not be durable; with
   *     SQLState {@code 57014} and an {@link InterruptedException} as cause if the thread was
   *     interrupted while waiting, for a release or for a handover (noticed within 100 ms): nothing
   *     is acquired and the thread's interrupt status is kept
   * @throws IllegalArgumentException if {@code resource} is malformed ({@link
   *     FencingToken#requireValidResource(String)}), or {@code ttl} or {@code timeout} is out of
   *     range
   * @throws IllegalStateException if this client is closed, also while waiting (noticed within 100
   *     ms; nothing is acquired then)
   */
  public Lease acquire(String resource, Duration ttl, Duration timeout) throws SQLException {
    FencingToken.requireValidResource(resource);
    LeaseSettings.checkTtl(ttl);
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must not be negative, was " + timeout);
    }
    requireOpen();
    long start = System.nanoTime(); // how long acquire waits is real time, whatever the lease clock
    try (Connection c = dataSource.getConnection()) {
      return LeaseWait.acquire(
          c,
          resource,
          handoverTimeout,
          timeout,
          start,
          closed::get,
          (connection, handover) -> attempt(connection, resource, ttl, handover));
    }
  }

  /**
   * Stops the keep-alive of every lease of this client, and ends the waits of {@link #acquire}
   * calls under way (they throw {@link IllegalStateException} and acquire nothing). Releases
   * nothing; idempotent.
   */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true) && keepAlive != null) {
      keepAlive.shutdownNow();
      LOG.info("Lease client {} closed; its leases are no longer renewed", holder);
    }
  }

  @Override
  public String toString() {
    return "LeaseClient[" + holder + (keepAlive == null ? "" : ", keep-alive") + "]";
  }

  // --- acquiring -------------------------------------------------------------------------------

  /**
   * One try_acquire transaction on {@code c}; the connection's settings are restored after.
   *
   * @throws HandoverTimeoutException if the previous holder's transactions outlasted {@code
   *     handover}
   */
  private LeaseWait.Attempt attempt(Connection c, String resource, Duration ttl, Duration handover)
      throws SQLException {
    // Taken before the query: the database's remaining time then ends no later than we assume.
    long sentAt = nanoTime.getAsLong();
    // An interrupt ends the handover wait: one that comes while it runs cancels the statement; a
    // thread interrupted already does not wait for one (it still takes a free lease that needs
    // none)
    boolean interrupted = Thread.currentThread().isInterrupted();
    LeaseTransaction.Committed<LeaseQueries.Acquired> committed;
    try {
      committed =
          queries.acquire(
              c,
              resource,
              holder,
              ttl,
              interrupted ? LeaseSettings.MIN_HANDOVER_TIMEOUT : handover,
              !interrupted);
    } catch (SQLException e) {
      if (LeaseTransaction.isInterrupted(e)) {
        throw LeaseWait.interrupted(resource, "waiting for the handover", e);
      }
      HandoverTimeoutException timedOut = FencingExceptions.handoverTimeout(e);
      if (timedOut != null && interrupted) {
        throw LeaseWait.interrupted(resource, "waiting for the handover", timedOut);
      }
      throw timedOut == null ? e : timedOut;
    }
    LeaseQueries.Acquired row = committed.result();
    if (!row.acquired()) {
      return new LeaseWait.Attempt(null, row.holder(), row.expiresAt(), row.remainingNanos());
    }
    FencingToken token = new FencingToken(resource, Objects.requireNonNull(row.token()));
    SQLWarning notReplicated = committed.notReplicated();
    if (notReplicated != null) {
      throw notIssued(c, token, notReplicated);
    }
    Instant expiresAt = Objects.requireNonNull(row.expiresAt());
    long remaining = Objects.requireNonNull(row.remainingNanos());
    Lease lease = new Lease(this, token, holder, ttl, expiresAt, sentAt + remaining);
    LOG.info(
        "Acquired lease on {} with token {} as {}, expires at {}",
        resource,
        token.value(),
        holder,
        expiresAt);
    startKeepAlive(lease);
    return new LeaseWait.Attempt(lease, holder, expiresAt, remaining);
  }

  /** Hazard 1: a commit that might not be replicated did not issue the token. */
  private SQLException notIssued(Connection c, FencingToken token, SQLWarning warning) {
    SQLException e =
        new SQLTransientException(
            "token "
                + token.value()
                + " for resource "
                + token.resource()
                + " is NOT issued: its commit is local only and might not have been replicated ("
                + LeaseTransaction.warningText(warning)
                + "); retry the acquisition",
            warning);
    try {
      release(c, token);
    } catch (SQLException | RuntimeException releaseFailure) {
      e.addSuppressed(releaseFailure);
    }
    LOG.warn(
        "Token {} for {} not issued: commit might not be replicated",
        token.value(),
        token.resource());
    return e;
  }

  private void startKeepAlive(Lease lease) {
    if (keepAlive == null) {
      return;
    }
    long periodNanos = Math.max(1, (long) (lease.ttl().toNanos() * renewFraction));
    if (!lease.startKeepAlive(keepAlive, periodNanos, listener)) {
      lease.close();
      throw new IllegalStateException("lease client " + holder + " was closed while acquiring");
    }
  }

  // --- renewing and releasing (used by Lease) --------------------------------------------------

  /**
   * Extends {@code token}'s lease by {@code ttl}; the fence's refusals come back as the raw
   * SQLException (Lease translates them).
   */
  LeaseQueries.Renewal renew(FencingToken token, Duration ttl) throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      LeaseTransaction.Committed<LeaseQueries.Renewal> committed = queries.renew(c, token, ttl);
      SQLWarning notReplicated = committed.notReplicated();
      if (notReplicated != null) {
        // counting on a renewal a failover may undo would let the client trust a shorter lease
        throw new SQLTransientException(
            "renewal of token "
                + token
                + " might not have been replicated; not counted ("
                + LeaseTransaction.warningText(notReplicated)
                + ")",
            notReplicated);
      }
      return committed.result();
    }
  }

  /** Releases {@code token}'s lease; false if it was released already. */
  boolean release(FencingToken token) throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      return release(c, token);
    }
  }

  private boolean release(Connection c, FencingToken token) throws SQLException {
    return queries.release(c, token);
  }

  /** Asks the database, in one statement, whether {@code token}'s lease is valid now. */
  LeaseQueries.Held held(FencingToken token) throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      boolean autoCommit = c.getAutoCommit();
      if (!autoCommit) {
        c.setAutoCommit(true); // no transaction is open on a borrowed connection: no round trip
      }
      try {
        return queries.held(c, token);
      } finally {
        if (!autoCommit) {
          c.setAutoCommit(false);
        }
      }
    }
  }

  /**
   * For tests: lets the keep-alive's tasks under way and due finish, interrupting none, and waits
   * for them to end; true if they have (or there is no keep-alive).
   */
  boolean drainKeepAlive(Duration timeout) throws InterruptedException {
    if (keepAlive == null) {
      return true;
    }
    keepAlive.shutdown();
    return keepAlive.awaitTermination(timeout.toNanos(), TimeUnit.NANOSECONDS);
  }

  /** The monotonic clock of this client's leases ({@link System#nanoTime()} but in tests). */
  long nanoTime() {
    return nanoTime.getAsLong();
  }

  private void requireOpen() {
    if (closed.get()) {
      throw new IllegalStateException("lease client " + holder + " is closed");
    }
  }

  /** Configuration of a {@link LeaseClient}; {@link #build()} validates it. */
  public static final class Builder {
    private final DataSource dataSource;
    private @Nullable String holder;
    private String schema = "fencing";
    private Duration handoverTimeout = Duration.ofSeconds(5);
    private boolean keepAlive;
    private double renewFraction = 1.0 / 3;
    private LeaseListener listener = (lease, cause) -> {};
    private LongSupplier nanoTime = System::nanoTime;

    private Builder(DataSource dataSource) {
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    /**
     * Who holds the leases, as recorded in the database and shown to waiting clients: 1 to 200
     * characters, no control characters. Default {@code hostname/pid/random}.
     */
    public Builder holder(String holder) {
      this.holder = Objects.requireNonNull(holder, "holder");
      return this;
    }

    /** The schema the fence was migrated into (lower-case SQL identifier). Default "fencing". */
    public Builder schema(String schema) {
      this.schema = Objects.requireNonNull(schema, "schema");
      return this;
    }

    /**
     * How long one attempt to acquire waits for the previous holder's fenced transactions to end
     * (the handover; the database's SQLSTATE {@code ZF007} when they outlast it): 1 ms to 1 h.
     * Default 5 s. {@link LeaseClient#tryAcquire} then reports the lease as not acquired; {@link
     * LeaseClient#acquire} tries again within its own timeout, and throws {@link
     * HandoverTimeoutException} if that runs out first.
     */
    public Builder handoverTimeout(Duration handoverTimeout) {
      this.handoverTimeout = Objects.requireNonNull(handoverTimeout, "handoverTimeout");
      return this;
    }

    /** Whether leases are renewed in the background until closed. Default false. */
    public Builder keepAlive(boolean keepAlive) {
      this.keepAlive = keepAlive;
      return this;
    }

    /**
     * With keep-alive, renew every {@code ttl * renewFraction}: 0.001 to 0.5. Default 1/3, so two
     * renewals can fail before the lease runs out. Above 1/2 the first renewal could come after the
     * client reckons the lease expired (the reckoning starts before the acquisition's round trip),
     * and the lease would be lost without a renewal tried; below 1/1000 a long lease would be
     * renewed every few hundred microseconds.
     */
    public Builder renewFraction(double renewFraction) {
      this.renewFraction = renewFraction;
      return this;
    }

    /** Told when a kept-alive lease is lost. Default: nothing (the loss is still logged). */
    public Builder listener(LeaseListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /**
     * The monotonic clock (nanoseconds, like {@link System#nanoTime()}) by which leases reckon
     * their expiry for {@link Lease#isLost()} and the keep-alive. For tests: a clock that runs slow
     * or stops, as a paused process's would.
     */
    Builder nanoTime(LongSupplier nanoTime) {
      this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
      return this;
    }

    /**
     * Validates and builds.
     *
     * @throws IllegalArgumentException naming the first invalid field
     */
    public LeaseClient build() {
      String h = holder == null ? LeaseSettings.defaultHolder() : holder;
      LeaseSettings.checkHolder(h);
      LeaseSettings.checkSchema(schema);
      LeaseSettings.checkHandoverTimeout(handoverTimeout);
      LeaseSettings.checkRenewFraction(renewFraction);
      return new LeaseClient(this, h);
    }
  }
}
