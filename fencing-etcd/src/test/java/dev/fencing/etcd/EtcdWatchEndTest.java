package dev.fencing.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.jdbc.FencingToken;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.api.WatchResponse;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Status;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A holding's watch on its lock key that ends for good: etcd cancels it (its revision compacted
 * away while the stream was down across an etcd restart: jetcd resumes it from that revision and
 * etcd refuses), or its stream is closed with an error jetcd does not retry. jetcd then closes the
 * watch without a word to a listener that only takes events; the holding stayed held with nobody
 * watching its key, so a deletion (the next contender then holds the lock) went unnoticed for as
 * long as the lease lived (an hour here). Now the holding reads its key again and watches it from
 * the read's revision on: still its own, it stays held and a later deletion is seen; gone
 * meanwhile, it is lost. The watch streams are observed and cut by an interceptor on the holder's
 * client ({@link WatchStreams}); waits are on what etcd answered, no sleeps.
 */
class EtcdWatchEndTest {
  @RegisterExtension static final EtcdFixture etcd = new EtcdFixture("watch-end");

  private static final Duration PATIENCE = EtcdFixture.PATIENCE;

  private EtcdFencedLock lock(Client client) {
    return EtcdFencedLock.builder(client, etcd.resource()).leaseTtl(Duration.ofHours(1)).build();
  }

  private static void delete(Client client, KeyValue kv) throws Exception {
    client.getKVClient().delete(kv.getKey()).get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
  }

  /**
   * Compaction past the watch's revision: the holder's watch is created, the store moves on and is
   * compacted, etcd restarts. jetcd resumed the watch from its old revision, etcd cancelled it
   * ("required revision has been compacted") and jetcd closed it for good: a deletion afterwards
   * went unseen. The holding must watch its key again from a revision etcd still has (after reading
   * it: still its own, it stays held) and see the deletion.
   */
  @Test
  void aWatchCompactedAwayAcrossARestartIsWatchedAgain() throws Exception {
    WatchStreams streams = new WatchStreams();
    Client holder = etcd.client(streams.interceptor());
    Client other = etcd.client();
    try (EtcdFencedLock lock = lock(holder)) {
      FencingToken token = lock.acquire(PATIENCE);
      await().atMost(PATIENCE).until(() -> streams.created() == 1);
      long revision = 0;
      for (int i = 0; i < 2; i++) { // the watch resumes from the first one's revision at most
        revision =
            other
                .getKVClient()
                .put(bytes("unrelated-" + etcd.resource()), bytes("moves the store on " + i))
                .get(PATIENCE.toSeconds(), TimeUnit.SECONDS)
                .getHeader()
                .getRevision();
      }
      other.getKVClient().compact(revision).get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      etcd.server().restart();

      await()
          .atMost(PATIENCE)
          .alias("a watch created after the restart")
          .until(() -> streams.created() >= 2);
      assertThat(lock.isHeld()).as("the key is still this holding's").isTrue();
      assertThat(lock.token()).contains(token);

      delete(other, EtcdFixture.holderKey(other, lock));
      await().atMost(PATIENCE).alias("the new watch sees the deletion").until(() -> !lock.isHeld());
      assertThat(lock.token()).isEmpty();
    }
  }

  /**
   * The watch stream closed with an error jetcd does not retry (a cancelled call): jetcd closes the
   * watch for good. The holding watches its key again and a deletion afterwards is seen.
   */
  @Test
  void aWatchClosedWithAnErrorIsWatchedAgain() throws Exception {
    WatchStreams streams = new WatchStreams();
    Client other = etcd.client();
    try (EtcdFencedLock lock = lock(etcd.client(streams.interceptor()))) {
      FencingToken token = lock.acquire(PATIENCE);
      await().atMost(PATIENCE).until(() -> streams.created() == 1);
      streams.cancelAll();

      await()
          .atMost(PATIENCE)
          .alias("a watch created after the stream was cancelled")
          .until(streams::createdAfterCancel);
      assertThat(lock.isHeld()).isTrue();
      assertThat(lock.token()).contains(token);

      delete(other, EtcdFixture.holderKey(other, lock));
      await().atMost(PATIENCE).alias("the new watch sees the deletion").until(() -> !lock.isHeld());
    }
  }

  /**
   * The key deleted while the watch was not delivering (its events withheld by the interceptor),
   * then the watch ends for good: the holding reads its key again, finds it gone and is lost.
   */
  @Test
  void aKeyDeletedWhileItsWatchWasEndingIsLost() throws Exception {
    WatchStreams streams = new WatchStreams();
    Client other = etcd.client();
    try (EtcdFencedLock lock = lock(etcd.client(streams.interceptor()))) {
      lock.acquire(PATIENCE);
      await().atMost(PATIENCE).until(() -> streams.created() == 1);
      streams.withhold.set(true);
      delete(other, EtcdFixture.holderKey(other, lock));
      streams.cancelAll();
      streams.withhold.set(false);

      await().atMost(PATIENCE).alias("the key is gone").until(() -> !lock.isHeld());
      assertThat(lock.token()).isEmpty();
      assertThat(lock.leaseId()).isEmpty();
    }
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  /**
   * The client's Watch streams: counts the watches etcd created, notes when one was cancelled (by
   * etcd, or by the test), cancels the live streams on request ({@code cancelAll}: gRPC status
   * CANCELLED, which jetcd does not retry), and withholds every message while {@code withhold} is
   * set.
   */
  static final class WatchStreams {
    final AtomicBoolean withhold = new AtomicBoolean();
    private final AtomicInteger created = new AtomicInteger();
    private final AtomicInteger createdAtCancel = new AtomicInteger(-1);
    private final List<ClientCall<?, ?>> calls = new CopyOnWriteArrayList<>();

    int created() {
      return created.get();
    }

    /** Whether etcd created a watch after one was cancelled (by etcd or by {@link #cancelAll}). */
    boolean createdAfterCancel() {
      int atCancel = createdAtCancel.get();
      return atCancel >= 0 && created.get() > atCancel;
    }

    void cancelAll() {
      createdAtCancel.compareAndSet(-1, created.get());
      for (ClientCall<?, ?> call : calls) {
        call.cancel("cut by the test", null);
      }
    }

    /** The interceptor for the holder's client. */
    ClientInterceptor interceptor() {
      return Replies.tap(
          method -> method.endsWith("/Watch"),
          call -> {
            calls.add(call);
            return new Replies.Tap() {
              @Override
              public boolean onMessage(Object message) {
                if (withhold.get()) {
                  return false;
                }
                WatchResponse r = (WatchResponse) message;
                if (r.getCanceled()) {
                  createdAtCancel.compareAndSet(-1, created.get());
                } else if (r.getCreated()) {
                  created.incrementAndGet();
                }
                return true;
              }

              @Override
              public void onClose(Status status) {
                calls.remove(call);
              }
            };
          });
    }
  }
}
