package dev.fencing.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencing.jdbc.FencedLockException;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.testing.EtcdServer;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.LeaseOption;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What an {@link EtcdFencedLock} acquisition leaves in etcd when it gives up, how long it may take,
 * and a holding lost before the next acquisition: etcd only ({@link EtcdServer}), no PostgreSQL.
 * Faults come from gRPC interceptors on the acquiring client (a revoke dropped before it reaches
 * etcd, a grant's reply held back until the test lets it through); no sleeps.
 */
class EtcdAcquisitionTest {
  @RegisterExtension static final EtcdFixture etcd = new EtcdFixture("acquisition");

  private static final Duration PATIENCE = EtcdFixture.PATIENCE;
  private static final Duration SHORT = Duration.ofMillis(300);
  private static final Duration GIVE_UP = Duration.ofSeconds(5);

  private Client client(ClientInterceptor... interceptors) {
    return etcd.client(interceptors);
  }

  private EtcdFencedLock.Builder lock(Client client) {
    return EtcdFencedLock.builder(client, etcd.resource()).leaseTtl(Duration.ofHours(1));
  }

  private static List<KeyValue> keys(Client client, EtcdFencedLock lock) throws Exception {
    return EtcdFixture.keys(client, lock);
  }

  /** Whether etcd still knows the lease (a revoked or expired one has a TTL of -1). */
  private static boolean leaseExists(Client client, long leaseId) throws Exception {
    return client
            .getLeaseClient()
            .timeToLive(leaseId, LeaseOption.DEFAULT)
            .get(PATIENCE.toSeconds(), TimeUnit.SECONDS)
            .getTTL()
        > 0;
  }

  /**
   * An acquisition that timed out while its revoke could not reach etcd (dropped by an interceptor
   * while {@code dropRevokes} is set) leaves its waiting key behind, attached to a lease with an
   * hour to live. Once the holder lets go, etcd's lock call completes for that key: the given-up
   * attempt must then revoke its lease, so that the key holds nothing and a third client acquires
   * at once (with the old code it waited for the hour).
   */
  @Test
  void aGivenUpAcquisitionWhoseRevokeFailedRevokesOnceItsLockCallCompletes() throws Exception {
    AtomicBoolean dropRevokes = new AtomicBoolean();
    Client clientA = client();
    Client clientB = client(dropRevokes(dropRevokes));
    try (EtcdFencedLock lockA = lock(clientA).build();
        EtcdFencedLock lockB = lock(clientB).build();
        EtcdFencedLock lockC = lock(client()).build()) {
      FencingToken tokenA = lockA.acquire(PATIENCE);
      long leaseA = lockA.leaseId().orElseThrow();
      dropRevokes.set(true);
      // a wait long enough for the grant and the lock call to go out first, even on a loaded box
      assertThatThrownBy(() -> lockB.tryAcquire(GIVE_UP))
          .isInstanceOf(FencedLockException.class)
          .hasMessageContaining("could not revoke");
      dropRevokes.set(false);
      assertThat(lockB.isHeld()).isFalse();
      await("A's key and B's, whose revoke was dropped")
          .atMost(PATIENCE)
          .until(() -> keys(clientA, lockA).size() == 2);
      List<KeyValue> waiting = keys(clientA, lockA);
      long leaseB =
          waiting.stream()
              .mapToLong(KeyValue::getLease)
              .filter(l -> l != leaseA)
              .findFirst()
              .orElseThrow();

      lockA.release();
      FencingToken tokenC = lockC.acquire(PATIENCE);
      assertThat(tokenC.value()).isGreaterThan(tokenA.value());
      assertThat(keys(clientA, lockA))
          .as("C's key only")
          .singleElement()
          .satisfies(kv -> assertThat(kv.getLease()).isEqualTo(lockC.leaseId().orElseThrow()));
      assertThat(leaseExists(clientA, leaseB)).as("B's lease revoked").isFalse();
    }
  }

  /**
   * A wait of zero is a deadline already passed: nothing is sent to etcd (no lease to grant and
   * revoke), nothing is acquired, whether the lock is free or not.
   */
  @Test
  void aWaitOfZeroSendsNothingToEtcd() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    Client counted = client(countCalls(calls));
    try (EtcdFencedLock lock = lock(counted).build()) {
      assertThat(lock.tryAcquire(Duration.ZERO)).isEmpty();
      assertThat(calls).as("requests sent to etcd").hasValue(0);
      assertThat(lock.isHeld()).isFalse();
      assertThat(keys(client(), lock)).isEmpty();
    }
  }

  /**
   * The wait bounds the lease's grant too: a grant etcd has not answered by the deadline ends the
   * acquisition as not acquired in time, however long the request timeout (here an hour; the old
   * code waited for it). The grant's reply is held back until the test lets it through; the lease
   * it names is then revoked, not left to its TTL of an hour.
   */
  @Test
  void theWaitBoundsTheGrantAndALateGrantIsRevoked() throws Exception {
    HeldReplies held = new HeldReplies("/LeaseGrant");
    Client client = client(held);
    Client other = client();
    EtcdFencedLock lock = lock(client).requestTimeout(Duration.ofMinutes(1)).build();
    CompletableFuture<Optional<FencingToken>> acquiring = EtcdFixture.tryAcquireAsync(lock, SHORT);
    assertThat(acquiring.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
        .as("not acquired in time")
        .isEmpty();
    assertThat(lock.isHeld()).isFalse();
    long leaseId = ((io.etcd.jetcd.api.LeaseGrantResponse) held.letThrough()).getID();
    await().atMost(PATIENCE).until(() -> !leaseExists(other, leaseId));
    assertThat(keys(other, lock)).isEmpty();
    lock.close();
  }

  /**
   * The wait bounds the read-back of the lock key too: with the lock free and taken, a read-back
   * etcd has not answered by the deadline ends the acquisition as not acquired in time (the old
   * code waited for the request timeout, here a minute), its lease revoked with the key it held.
   * The read-back's reply is held back until the deadline has passed (the acquisition returned).
   */
  @Test
  void theWaitBoundsTheReadBack() throws Exception {
    HeldReplies held = new HeldReplies("/Range");
    Client client = client(held);
    Client other = client();
    EtcdFencedLock lock = lock(client).requestTimeout(Duration.ofMinutes(1)).build();
    CompletableFuture<Optional<FencingToken>> acquiring =
        EtcdFixture.tryAcquireAsync(lock, GIVE_UP);
    assertThat(acquiring.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
        .as("not acquired in time")
        .isEmpty();
    assertThat(lock.isHeld()).isFalse();
    assertThat(keys(other, lock)).as("the lease was revoked with its key").isEmpty();
    if (held.started()) { // the lock came within the wait (grant and lock call took under 5 s)
      held.letThrough();
    }
    lock.close();
  }

  /**
   * A holding etcd ended (its lease revoked by another client) does not make the next acquisition
   * on the same lock object fail as "already held": the acquisition asks etcd first, finds the
   * lease gone, and acquires with a new lease and a greater token.
   */
  @Test
  void aHoldingEtcdEndedDoesNotCountAsHeld() throws Exception {
    Client other = client();
    try (EtcdFencedLock lock = lock(client()).build()) {
      FencingToken first = lock.acquire(PATIENCE);
      long firstLease = lock.leaseId().orElseThrow();
      other.getLeaseClient().revoke(firstLease).get(PATIENCE.toSeconds(), TimeUnit.SECONDS);

      FencingToken second = lock.acquire(PATIENCE);
      assertThat(second.value()).isGreaterThan(first.value());
      assertThat(lock.isHeld()).isTrue();
      assertThat(lock.leaseId()).isPresent().get().isNotEqualTo(firstLease);
      assertThat(keys(other, lock)).hasSize(1);
      assertThatThrownBy(() -> lock.acquire(PATIENCE))
          .as("a live holding still counts")
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("already held");
    }
  }

  /** The same when the loss is already known (a keep-alive refused as "lease not found"). */
  @Test
  void aHoldingKnownLostDoesNotCountAsHeld() throws Exception {
    Client other = client();
    try (EtcdFencedLock lock = lock(client()).build()) {
      FencingToken first = lock.acquire(PATIENCE);
      other
          .getLeaseClient()
          .revoke(lock.leaseId().orElseThrow())
          .get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      lock.renewNow().get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      assertThat(lock.isHeld()).isFalse();

      assertThat(lock.acquire(PATIENCE).value()).isGreaterThan(first.value());
      assertThat(lock.isHeld()).isTrue();
      assertThat(keys(other, lock)).hasSize(1);
    }
  }

  /** Counts every call started on the client. */
  private static ClientInterceptor countCalls(AtomicInteger calls) {
    return Replies.onEachReply(
        method -> {
          calls.incrementAndGet();
          return false; // counted as it starts; its replies go through untouched
        },
        message -> true);
  }

  /**
   * Fails LeaseRevoke calls started while {@code drop} is set, before they reach etcd (a status
   * jetcd does not retry).
   */
  private static ClientInterceptor dropRevokes(AtomicBoolean drop) {
    return new ClientInterceptor() {
      @Override
      public <Q, R> ClientCall<Q, R> interceptCall(
          MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        if (!method.getFullMethodName().endsWith("/LeaseRevoke") || !drop.get()) {
          return next.newCall(method, options);
        }
        return new ClientCall<>() {
          @Override
          public void start(Listener<R> listener, Metadata headers) {
            listener.onClose(
                Status.FAILED_PRECONDITION.withDescription("test: revoke dropped"), new Metadata());
          }

          @Override
          public void request(int n) {}

          @Override
          public void cancel(@Nullable String message, @Nullable Throwable cause) {}

          @Override
          public void halfClose() {}

          @Override
          public void sendMessage(Q message) {}
        };
      }
    };
  }

  /**
   * Holds back the reply (and the end) of the first call to the method ending in {@code suffix}
   * until {@link #letThrough()}: etcd has received and applied the request.
   */
  private static final class HeldReplies implements ClientInterceptor {
    private final String suffix;
    private final AtomicBoolean first = new AtomicBoolean(true);
    private final CompletableFuture<Object> message = new CompletableFuture<>();
    private final CompletableFuture<Runnable> end = new CompletableFuture<>();

    HeldReplies(String suffix) {
      this.suffix = suffix;
    }

    /** Whether the call whose reply is held back was started. */
    boolean started() {
      return !first.get();
    }

    /** Delivers the held reply, and returns it. */
    Object letThrough() throws Exception {
      Object reply = message.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      end.get(PATIENCE.toSeconds(), TimeUnit.SECONDS).run();
      return reply;
    }

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(
        MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
      ClientCall<Q, R> call = next.newCall(method, options);
      if (!method.getFullMethodName().endsWith(suffix) || !first.compareAndSet(true, false)) {
        return call;
      }
      AtomicReference<@Nullable R> reply = new AtomicReference<>();
      return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
        @Override
        public void start(Listener<R> listener, Metadata headers) {
          super.start(
              new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                @Override
                public void onMessage(R m) {
                  reply.set(m);
                  message.complete(m);
                }

                @Override
                public void onClose(Status status, Metadata trailers) {
                  end.complete(
                      () -> {
                        R m = reply.get();
                        if (m != null) {
                          listener.onMessage(m);
                        }
                        listener.onClose(status, trailers);
                      });
                }
              },
              headers);
        }
      };
    }
  }
}
