package dev.fencing.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencedLock;
import dev.fencing.jdbc.FencedLockException;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingExceptions;
import dev.fencing.jdbc.FencingRefusedException;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.testing.EtcdServer;
import dev.fencing.testing.TestDatabaseExtension;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.grpc.ClientInterceptor;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link EtcdFencedLock} against a real etcd ({@link EtcdServer}) and a real PostgreSQL: tokens
 * increase across holders and leases; a holder whose lease was revoked or expired is refused by
 * PostgreSQL once the next holder wrote.
 */
class EtcdFencedLockTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();
  @RegisterExtension static final EtcdFixture etcd = new EtcdFixture("etcd");

  private static final Duration PATIENCE = EtcdFixture.PATIENCE;
  private static final Duration SHORT = Duration.ofMillis(300);

  private static HikariDataSource pool;
  private static FencedDataSource fenced;

  private String resource;

  @BeforeAll
  static void start() throws Exception {
    FencingMigrations.builder(db.migrationDataSource())
        .ownerRole(db.ownerRole())
        .applicationRole(db.appRole())
        .build()
        .migrate();
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(db.jdbcUrl());
    config.setUsername(db.user());
    config.setPassword(db.password());
    config.setMaximumPoolSize(3);
    pool = new HikariDataSource(config);
    fenced = FencedDataSource.wrap(pool);
    Ledger.create(pool);
  }

  @AfterAll
  static void stop() {
    if (pool != null) {
      pool.close();
    }
  }

  @BeforeEach
  void declareResource() throws SQLException {
    resource = etcd.resource();
    fenced.createExternalResource(resource);
  }

  private Client client() {
    return etcd.client();
  }

  private EtcdFencedLock lock(Client client) {
    return EtcdFencedLock.builder(client, resource).build();
  }

  private static void zombieIsRefused(FencingToken zombie, FencingToken next) {
    assertThatThrownBy(() -> Ledger.write(fenced, zombie, "zombie " + zombie))
        .isInstanceOf(StaleFencingTokenException.class)
        .satisfies(
            e -> {
              FencingRefusedException refusal = (FencingRefusedException) e;
              assertThat(refusal.getSQLState()).isEqualTo("ZF001");
              assertThat(refusal.presentedToken()).isEqualTo(zombie.value());
              assertThat(refusal.maxSeen()).isEqualTo(next.value());
            });
  }

  @Test
  void zombieWhoseLeaseWasRevokedIsRefusedAfterTheNextHolderWrote() throws Exception {
    Client clientA = client();
    Client clientB = client();
    try (EtcdFencedLock lockA = lock(clientA);
        EtcdFencedLock lockB = lock(clientB)) {
      FencingToken tokenA = lockA.acquire(PATIENCE);
      Ledger.write(fenced, tokenA, "A before the pause");

      // etcd takes the lock away from A (an operator, or the lease running out): A does not know
      clientB.getLeaseClient().revoke(lockA.leaseId().orElseThrow()).get(30, TimeUnit.SECONDS);

      FencingToken tokenB = lockB.acquire(PATIENCE);
      assertThat(tokenB.value()).isGreaterThan(tokenA.value());
      Ledger.write(fenced, tokenB, "B");
      assertThat(Ledger.maxSeen(pool, resource)).isEqualTo(tokenB.value());

      zombieIsRefused(tokenA, tokenB);
      assertThat(Ledger.contains(pool, resource, "zombie " + tokenA)).isFalse();
      assertThat(Ledger.contains(pool, resource, "A before the pause")).isTrue();
      assertThat(Ledger.contains(pool, resource, "B")).isTrue();
      assertThat(
              Ledger.count(
                  pool,
                  "SELECT count(*) FROM fencing.rejection WHERE resource = ? AND token = "
                      + tokenA.value(),
                  resource))
          .isOne();

      await().atMost(PATIENCE).until(() -> !lockA.isHeld());
      assertThat(lockA.token()).isEmpty();
      assertThat(lockB.token()).contains(tokenB);
    }
  }

  /**
   * The lock key deleted by another client (an operator kicking a stuck holder) while the lease
   * lives: etcd dropped the lock and the next contender holds it. A watch on the key tells the
   * holder: isHeld() turns false (it stayed true for as long as the lease lived).
   */
  @Test
  void aLockKeyDeletedByAnotherClientIsNoLongerHeld() throws Exception {
    Client clientA = client();
    Client clientB = client();
    try (EtcdFencedLock lockA = lock(clientA);
        EtcdFencedLock lockB = lock(clientB)) {
      FencingToken tokenA = lockA.acquire(PATIENCE);
      ByteSequence prefix = ByteSequence.from(lockA.lockName() + "/", StandardCharsets.UTF_8);
      clientB
          .getKVClient()
          .delete(prefix, io.etcd.jetcd.options.DeleteOption.builder().isPrefix(true).build())
          .get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      FencingToken tokenB = lockB.acquire(PATIENCE);
      assertThat(tokenB.value()).isGreaterThan(tokenA.value());
      await().atMost(PATIENCE).until(() -> !lockA.isHeld());
      assertThat(lockA.token()).isEmpty();
      assertThat(lockB.isHeld()).isTrue();
      lockB.release();
      FencingToken again = lockA.acquire(PATIENCE);
      assertThat(again.value()).isGreaterThan(tokenB.value());
    }
  }

  @Test
  void zombieWhoseLeaseExpiredIsRefusedAfterTheNextHolderWrote() throws Exception {
    Client clientA = client();
    Client clientB = client();
    EtcdFencedLock lockA =
        EtcdFencedLock.builder(clientA, resource).leaseTtl(Duration.ofSeconds(2)).build();
    FencingToken tokenA = acquireShortLease(lockA);
    Ledger.write(fenced, tokenA, "A before the pause");
    clientA.close(); // A is cut off from etcd: no more keep-alives; the lease runs out

    try (EtcdFencedLock lockB = lock(clientB)) {
      FencingToken tokenB = lockB.acquire(PATIENCE);
      assertThat(tokenB.value()).isGreaterThan(tokenA.value());
      assertThat(lockA.isHeld()).as("unconfirmed for a whole TTL").isFalse();
      Ledger.write(fenced, tokenB, "B");
      zombieIsRefused(tokenA, tokenB);
      assertThat(Ledger.contains(pool, resource, "B")).isTrue();
    }
  }

  /**
   * Acquires a lock whose lease is short (a few seconds), again while the acquisition ends in
   * {@link FencedLockException} (never held then), until PATIENCE: on a box stalled for a whole TTL
   * between the grant and the read-back (no keep-alive confirmed, or etcd expiring the lease), the
   * lock rightly refuses to report the lease as acquired; that refusal is tested on its own, and is
   * not what a test needing the lock held is about.
   */
  private static FencingToken acquireShortLease(EtcdFencedLock lock) throws Exception {
    long deadline = System.nanoTime() + PATIENCE.toNanos();
    while (true) {
      try {
        return lock.acquire(PATIENCE);
      } catch (FencedLockException e) {
        assertThat(lock.isHeld()).as("not held after " + e).isFalse();
        if (System.nanoTime() - deadline > 0) {
          throw e;
        }
      }
    }
  }

  /**
   * The lease's TTL counts from when the grant was sent: etcd starts it no earlier than it receives
   * the request, so counting from the reply would overstate the hold by the latency. The lease
   * clock is the test's and moves only when etcd's reply to a grant or keep-alive arrives (no
   * timing); the TTL is an hour so that no background keep-alive runs meanwhile.
   */
  @Test
  void theTtlCountsFromWhenTheGrantWasSentNotFromItsReply() throws Exception {
    AtomicLong now = new AtomicLong(System.nanoTime());
    long ttl = TimeUnit.HOURS.toNanos(1);
    try (EtcdFencedLock lock = latencyLock(now)) {
      long sent = now.get();
      lock.acquire(PATIENCE);
      assertThat(now.get()).as("the grant's reply came LATENCY later").isEqualTo(sent + LATENCY);
      now.set(sent + ttl - 1);
      assertThat(lock.isHeld()).isTrue();
      now.set(sent + ttl);
      assertThat(lock.isHeld()).as("a TTL after the grant was sent").isFalse();
      assertThat(lock.token()).isEmpty();
    }
  }

  /** The same for a keep-alive: its TTL counts from when it was sent. */
  @Test
  void aKeepAlivesTtlCountsFromWhenItWasSentNotFromItsReply() throws Exception {
    AtomicLong now = new AtomicLong(System.nanoTime());
    long ttl = TimeUnit.HOURS.toNanos(1);
    try (EtcdFencedLock lock = latencyLock(now)) {
      long granted = now.get();
      FencingToken token = lock.acquire(PATIENCE);
      long sent = granted + ttl / 2;
      now.set(sent);
      lock.renewNow().get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      assertThat(now.get())
          .as("the keep-alive's reply came LATENCY later")
          .isEqualTo(sent + LATENCY);
      now.set(sent + ttl - 1);
      assertThat(lock.token()).contains(token);
      now.set(sent + ttl);
      assertThat(lock.isHeld()).as("a TTL after the keep-alive was sent").isFalse();
    }
  }

  /**
   * etcd's "lease not found" to a keep-alive (the lease revoked or expired there) ends the holding
   * at once, not a TTL later: the TTL is an hour, so only the refusal can turn isHeld() false.
   */
  @Test
  void aKeepAliveRefusedAsLeaseNotFoundEndsTheHoldingAtOnce() throws Exception {
    Client other = client();
    try (EtcdFencedLock lock =
        EtcdFencedLock.builder(client(), resource)
            .leaseTtl(Duration.ofHours(1))
            .watchKey(false) // the revoke deletes the key: the watch would tell first
            .build()) {
      lock.acquire(PATIENCE);
      other.getLeaseClient().revoke(lock.leaseId().orElseThrow()).get(30, TimeUnit.SECONDS);
      assertThat(lock.isHeld()).as("not known yet").isTrue();
      lock.renewNow().get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      assertThat(lock.isHeld()).as("etcd said the lease is gone").isFalse();
      assertThat(lock.token()).isEmpty();
    }
  }

  /**
   * A keep-alive etcd leaves unanswered (the process stopped with SIGSTOP: its connection stays
   * open, nothing is refused) ends the holding within the lease's TTL from when it was sent:
   * jetcd's request has no deadline of its own. The lease clock is the real one; the wait is on the
   * keep-alive's own future, bounded by PATIENCE (a hang guard).
   */
  @Test
  void aKeepAliveEtcdLeavesUnansweredEndsTheHoldingWithinTheTtl() throws Exception {
    try (EtcdFencedLock lock =
        EtcdFencedLock.builder(client(), resource).leaseTtl(Duration.ofSeconds(3)).build()) {
      acquireShortLease(lock);
      etcd.server().pause();
      try {
        CompletableFuture<?> keepAlive = lock.renewNow();
        await().atMost(PATIENCE).until(keepAlive::isDone);
        assertThat(lock.isHeld()).as("no answer for a whole TTL").isFalse();
        assertThat(lock.token()).isEmpty();
        assertThat(lock.keepsAlive()).as("no more keep-alives").isFalse();
      } finally {
        etcd.server().resume();
      }
      lock.renewNow().get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      assertThat(lock.isHeld()).as("lost for good, whatever etcd answers now").isFalse();
    }
  }

  /**
   * A keep-alive left unanswered for a TTL does not end a holding that a later keep-alive kept
   * alive: etcd's answer to that one says the lease lives a TTL from when it was sent. The lease
   * clock is the test's (moved by hand); the answer to the keep-alives the test thread sends while
   * {@code withhold} names it is withheld by an interceptor (jetcd starts the call on the calling
   * thread), and their deadline, a TTL, runs in real time (the wait is on that keep-alive's own
   * future).
   */
  @Test
  void aKeepAliveLeftUnansweredDoesNotEndAHoldingALaterOneConfirmed() throws Exception {
    AtomicLong now = new AtomicLong(System.nanoTime());
    AtomicReference<Thread> withhold = new AtomicReference<>();
    Client client = etcd.client(withholdKeepAliveReplies(withhold));
    try (EtcdFencedLock lock =
        EtcdFencedLock.builder(client, resource)
            .leaseTtl(Duration.ofSeconds(3))
            .nanoTime(now::get)
            .build()) {
      FencingToken token = lock.acquire(PATIENCE);
      withhold.set(Thread.currentThread());
      CompletableFuture<?> unanswered = lock.renewNow();
      withhold.set(null);
      now.addAndGet(TimeUnit.SECONDS.toNanos(1));
      lock.renewNow().get(PATIENCE.toSeconds(), TimeUnit.SECONDS); // confirmed: a TTL from now
      await().atMost(PATIENCE).until(unanswered::isDone);
      assertThat(lock.isHeld()).as("a later keep-alive confirmed the lease").isTrue();
      assertThat(lock.token()).contains(token);
      assertThat(lock.keepsAlive()).as("still kept alive").isTrue();
    }
  }

  /**
   * A lease lost while the acquisition waits for the lock (a keep-alive etcd left unanswered for a
   * whole TTL) is not returned as acquired once the lock comes: the caller would be told it holds a
   * lock whose {@code isHeld()} is already false. The acquisition ends at the loss with a {@link
   * FencedLockException} and revokes the lease (its waiting key goes with it). etcd's answers to
   * B's keep-alives are withheld by an interceptor (etcd still receives them); the wait is on the
   * loss itself, then A releases.
   */
  @Test
  void aLeaseLostWhileWaitingIsNotReturnedAsAcquired() throws Exception {
    AtomicBoolean withhold = new AtomicBoolean();
    Client clientA = client();
    Client clientB = etcd.client(withholdKeepAliveRepliesWhile(withhold));
    try (EtcdFencedLock lockA =
            EtcdFencedLock.builder(clientA, resource).leaseTtl(Duration.ofHours(1)).build();
        EtcdFencedLock lockB =
            EtcdFencedLock.builder(clientB, resource).leaseTtl(Duration.ofSeconds(2)).build()) {
      lockA.acquire(PATIENCE);
      withhold.set(true);
      CompletableFuture<Optional<FencingToken>> waiting =
          EtcdFixture.tryAcquireAsync(lockB, PATIENCE);
      await()
          .atMost(PATIENCE)
          .until(
              () -> {
                CompletableFuture<?> lost = lockB.acquisitionLost();
                return lost != null ? lost.isDone() : waiting.isDone();
              });
      withhold.set(false);
      lockA.release();
      assertThatThrownBy(() -> waiting.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
          .hasCauseInstanceOf(FencedLockException.class)
          .cause()
          .hasMessageContaining("lost while acquiring")
          .hasMessageContaining(resource);
      assertThat(lockB.isHeld()).isFalse();
      assertThat(lockB.token()).isEmpty();
      assertThat(lockB.leaseId()).isEmpty();
      assertThat(EtcdFixture.keyCount(clientA, lockA))
          .as("B's lease was revoked with its key")
          .isZero();
      assertThat(lockB.acquire(PATIENCE)).as("the lock object is usable again").isNotNull();
    }
  }

  /**
   * The wait itself ends at the loss, not when the lock comes: B was willing to wait an hour, and A
   * (TTL one hour) keeps the lock until B's acquisition has failed. B's keep-alive answers are
   * withheld as above; B's key goes with its revoked lease, A's stays.
   */
  @Test
  void aLeaseLostWhileWaitingEndsTheWaitWhileTheLockIsStillTaken() throws Exception {
    AtomicBoolean withhold = new AtomicBoolean();
    Client clientA = client();
    Client clientB = etcd.client(withholdKeepAliveRepliesWhile(withhold));
    // B first: A, closed first, lets a B that is still waiting go on (and B's close not block)
    try (EtcdFencedLock lockB =
            EtcdFencedLock.builder(clientB, resource).leaseTtl(Duration.ofSeconds(2)).build();
        EtcdFencedLock lockA =
            EtcdFencedLock.builder(clientA, resource).leaseTtl(Duration.ofHours(1)).build()) {
      lockA.acquire(PATIENCE);
      withhold.set(true);
      CompletableFuture<Optional<FencingToken>> waiting =
          EtcdFixture.tryAcquireAsync(lockB, Duration.ofHours(1));
      assertThatThrownBy(() -> waiting.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
          .as("B's acquisition ends at the loss, while A still holds the lock")
          .isInstanceOf(ExecutionException.class)
          .cause()
          .isInstanceOf(FencedLockException.class)
          .hasMessageContaining("lost while acquiring");
      assertThat(lockA.isHeld()).isTrue();
      assertThat(lockB.isHeld()).isFalse();
      assertThat(EtcdFixture.keyCount(clientA, lockA)).as("A's key only: B's was revoked").isOne();
    }
  }

  /**
   * An acquisition interrupted while it waits for the lock throws {@link InterruptedException}
   * after revoking its lease: its waiting key is gone at once, and no keep-alive goes on for a
   * lease whose lock call could still succeed later (a hold nobody knows of).
   */
  @Test
  void anAcquisitionInterruptedWhileWaitingRevokesItsLease() throws Exception {
    Client clientA = client();
    Client clientB = client();
    try (EtcdFencedLock lockA = lock(clientA);
        EtcdFencedLock lockB = lock(clientB)) {
      lockA.acquire(PATIENCE);
      AtomicReference<Throwable> outcome = new AtomicReference<>();
      Thread waiter =
          new Thread(
              () -> {
                try {
                  outcome.set(
                      new AssertionError("acquired " + lockB.tryAcquire(Duration.ofHours(1))));
                } catch (Throwable t) {
                  outcome.set(t);
                }
              });
      waiter.start();
      await().atMost(PATIENCE).until(() -> EtcdFixture.keyCount(clientA, lockA) == 2);
      waiter.interrupt();
      waiter.join(PATIENCE.toMillis());
      assertThat(waiter.isAlive()).isFalse();
      assertThat(outcome.get()).isInstanceOf(InterruptedException.class);
      assertThat(lockB.isHeld()).isFalse();
      assertThat(EtcdFixture.keyCount(clientA, lockA))
          .as("B's waiting key went with its lease")
          .isOne();
      lockA.release();
      assertThat(EtcdFixture.keyCount(clientA, lockA)).as("nothing left once A released").isZero();
    }
  }

  /**
   * The same when the lease's TTL ran out, unconfirmed, by the time the lock key is read back (here
   * the lease clock, the test's, jumps two TTLs at the read-back's reply): etcd may have expired
   * the lease, so the lock is not known held and no token is returned.
   */
  @Test
  void aLeaseWhoseTtlRanOutBeforeTheLockWasConfirmedIsNotReturnedAsAcquired() throws Exception {
    AtomicLong now = new AtomicLong(System.nanoTime());
    Client client =
        etcd.client(atEachReply("/Range", () -> now.addAndGet(TimeUnit.HOURS.toNanos(2))));
    Client other = client();
    try (EtcdFencedLock lock =
        EtcdFencedLock.builder(client, resource)
            .leaseTtl(Duration.ofHours(1))
            .nanoTime(now::get)
            .build()) {
      assertThatThrownBy(() -> lock.tryAcquire(PATIENCE))
          .isInstanceOf(FencedLockException.class)
          .hasMessageContaining("lost while acquiring");
      assertThat(lock.isHeld()).isFalse();
      assertThat(lock.leaseId()).isEmpty();
      assertThat(EtcdFixture.keyCount(other, lock))
          .as("the lease was revoked with its key")
          .isZero();
    }
  }

  /** Withholds every reply to LeaseKeepAlive calls started while {@code withhold} is set. */
  private static ClientInterceptor withholdKeepAliveRepliesWhile(AtomicBoolean withhold) {
    return Replies.withhold(method -> method.endsWith("/LeaseKeepAlive") && withhold.get());
  }

  /** Runs {@code action} before each reply to the calls of the method ending in {@code suffix}. */
  private static ClientInterceptor atEachReply(String suffix, Runnable action) {
    return Replies.onEachReply(
        method -> method.endsWith(suffix),
        message -> {
          action.run();
          return true;
        });
  }

  /**
   * Withholds every reply to the LeaseKeepAlive calls started on the thread {@code withhold} names.
   */
  private static ClientInterceptor withholdKeepAliveReplies(AtomicReference<Thread> withhold) {
    return Replies.withhold(
        method -> method.endsWith("/LeaseKeepAlive") && withhold.get() == Thread.currentThread());
  }

  /**
   * A released holding's keep-alives are unscheduled at once: nothing of it stays queued until the
   * next third of its TTL (here an hour), once per acquisition. The holding's own task is looked
   * for in the scheduler's queue, which other tests' locks share (a lock whose client was closed
   * keeps its task until the task's next run finds the client closed).
   */
  @Test
  void releaseUnschedulesTheKeepAlives() throws Exception {
    try (EtcdFencedLock lock =
        EtcdFencedLock.builder(client(), resource).leaseTtl(Duration.ofHours(1)).build()) {
      LeaseHolding previous = null;
      for (int i = 0; i < 3; i++) {
        lock.acquire(PATIENCE);
        LeaseHolding holding = lock.holding();
        assertThat(holding).isNotNull().isNotSameAs(previous);
        assertThat(holding.keepAliveQueued()).isTrue();
        lock.release();
        assertThat(holding.keepAliveQueued()).isFalse();
        previous = holding;
      }
    }
  }

  private static final long LATENCY = TimeUnit.SECONDS.toNanos(5);

  /**
   * A lock of an hour's TTL on {@code now}, which moves LATENCY at each lease call's first reply.
   */
  private EtcdFencedLock latencyLock(AtomicLong now) {
    Client client = etcd.client(replyLatency(now));
    return EtcdFencedLock.builder(client, resource)
        .leaseTtl(Duration.ofHours(1))
        .nanoTime(now::get)
        .build();
  }

  private static ClientInterceptor replyLatency(AtomicLong now) {
    // jetcd's keepAliveOnce ends its stream with the request again (WriteStream.end(request)):
    // etcd's answer to that second copy, which completes nothing, comes at any time later
    return Replies.tap(
        method -> method.endsWith("/LeaseGrant") || method.endsWith("/LeaseKeepAlive"),
        call -> {
          AtomicBoolean answered = new AtomicBoolean();
          return message -> {
            if (!answered.getAndSet(true)) {
              now.addAndGet(LATENCY);
            }
            return true;
          };
        });
  }

  @Test
  void contentionIsNotAnErrorAndATimedOutWaitLeavesNothingBehind() throws Exception {
    Client clientA = client();
    Client clientB = client();
    try (EtcdFencedLock lockA = lock(clientA);
        EtcdFencedLock lockB = lock(clientB)) {
      FencingToken tokenA = lockA.acquire(PATIENCE);
      assertThat(lockB.tryAcquire(SHORT)).isEmpty();
      assertThatThrownBy(() -> lockB.acquire(SHORT))
          .isInstanceOf(TimeoutException.class)
          .hasMessageContaining(resource);
      assertThat(lockB.isHeld()).isFalse();
      assertThat(lockB.leaseId()).isEmpty();
      assertThat(EtcdFixture.keyCount(clientA, lockA))
          .as("the waiters' keys went with their leases")
          .isOne();

      CompletableFuture<FencingToken> waiting =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return lockB.acquire(PATIENCE);
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              });
      await().atMost(PATIENCE).until(() -> EtcdFixture.keyCount(clientA, lockA) == 2);
      assertThat(waiting).isNotDone();
      lockA.release();
      assertThat(lockA.isHeld()).isFalse();
      FencingToken tokenB = waiting.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      assertThat(tokenB.value()).isGreaterThan(tokenA.value());
      lockB.release(); // any thread may release
      assertThat(EtcdFixture.keyCount(clientA, lockA)).isZero();
    }
  }

  @Test
  void tokensIncreaseAcrossHolders() throws Exception {
    Client one = client();
    Client two = client();
    List<Long> tokens = new ArrayList<>();
    for (int round = 0; round < 3; round++) {
      for (Client client : List.of(one, two)) {
        try (EtcdFencedLock lock = lock(client)) {
          FencingToken token = lock.acquire(PATIENCE);
          Ledger.write(fenced, token, "round " + round + " " + tokens.size());
          tokens.add(token.value());
        }
      }
    }
    assertThat(tokens).hasSize(6).isSorted().doesNotHaveDuplicates();
    assertThat(Ledger.maxSeen(pool, resource)).isEqualTo(tokens.get(tokens.size() - 1));
  }

  @Test
  void restartOfEtcdWithinTheTtlKeepsTheLockAndItsToken() throws Exception {
    Client clientA = client();
    Client clientB = client();
    try (EtcdFencedLock lockA =
            EtcdFencedLock.builder(clientA, resource).leaseTtl(Duration.ofSeconds(30)).build();
        EtcdFencedLock lockB = lock(clientB)) {
      FencingToken token = lockA.acquire(PATIENCE);
      etcd.server().restart();
      assertThat(lockB.tryAcquire(Duration.ofSeconds(2))).isEmpty();
      assertThat(lockA.isHeld()).isTrue();
      assertThat(lockA.token()).contains(token);
      Ledger.write(fenced, token, "after the restart");
      assertThat(Ledger.maxSeen(pool, resource)).isEqualTo(token.value());
    }
  }

  @Test
  void misuseAndBadInputAreRefusedClearly() throws Exception {
    Client client = client();
    assertThatThrownBy(() -> EtcdFencedLock.builder(client, "bad name").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("position 4");
    assertThatThrownBy(() -> EtcdFencedLock.builder(client, "").build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> EtcdFencedLock.builder(client, "r").leaseTtl(Duration.ofMillis(1500)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("whole seconds");
    assertThatThrownBy(() -> EtcdFencedLock.builder(client, "r").leaseTtl(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> EtcdFencedLock.builder(client, "r").requestTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> EtcdFencedLock.builder(client, "r").lockName(""))
        .isInstanceOf(IllegalArgumentException.class);

    FencedLock lock = lock(client);
    assertThatThrownBy(() -> lock.tryAcquire(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class);
    FencingToken token = lock.acquire(PATIENCE);
    assertThatThrownBy(() -> lock.acquire(PATIENCE))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("already held");
    assertThat(lock.token()).contains(token);
    lock.close();
    lock.close();
    assertThat(lock.isHeld()).isFalse();
    assertThat(EtcdFixture.keyCount(client, (EtcdFencedLock) lock)).isZero();
    assertThatThrownBy(() -> lock.tryAcquire(SHORT))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed");
  }

  /** The README's quick start, as written there (with the test's table). */
  @Test
  void quickStartWorksAsDocumented() throws Exception {
    Client etcd = client();
    FencedDataSource db = FencedDataSource.wrap(pool);
    boolean refused = false;

    db.createExternalResource("ledger"); // once (idempotent): its tokens come from elsewhere
    try (EtcdFencedLock lock = EtcdFencedLock.builder(etcd, "ledger").build()) {
      FencingToken token =
          lock.acquire(Duration.ofSeconds(10)); // the create revision of the lock key
      db.fence(token); // optional: fence the previous holder off now, not at the first write
      try (FencingScope scope = Fencing.bind(token);
          Connection c = db.getConnection()) {
        c.setAutoCommit(false);
        try (PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO ledger (resource, note, token) VALUES ('ledger', ?, ?)")) {
          ps.setString(1, "quick start");
          ps.setLong(2, token.value());
          ps.executeUpdate(); // PostgreSQL checks the token first
        }
        c.commit();
      }
    } catch (SQLException e) {
      if (FencingExceptions.find(e).isPresent()) {
        refused = true; // a later holder has written: stop, never retry
      }
    }

    assertThat(refused).isFalse();
    assertThat(Ledger.contains(pool, "ledger", "quick start")).isTrue();
    assertThat(Ledger.maxSeen(pool, "ledger")).isPositive();
  }
}
