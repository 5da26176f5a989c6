package dev.fencing.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The watch on a holding's lock key, kept for as long as the holding lives: a deletion of the key,
 * or a put that leaves it no longer the holding's (another create revision, another lease or none),
 * ends the holding as lost.
 *
 * <p>A watch stream that ends (an error, etcd restarting, etcd cancelling the watch: its revision
 * compacted away, or any other reason) is not left to jetcd: jetcd closes a watch etcd cancelled
 * for good without telling a listener that only takes events, so the holding stayed held with
 * nobody watching its key; and it resumes others from the revision of the watch's creation, which
 * may skip events sent after it. Instead the stream is closed and the key read again (a
 * linearizable get): gone, or no longer the holding's, the holding is lost; still its own, it is
 * watched again from the revision after that read, so that nothing after the read is missed. A read
 * etcd does not answer is tried again (100 ms, doubling to 1 s) while the holding's lease is known
 * alive, and ends it as lost after that; so do {@value #REFUSALS} watches in a row that end before
 * etcd created them while the reads succeed (etcd refusing to watch the key).
 */
final class KeyWatch {
  private static final Logger LOG = LoggerFactory.getLogger(KeyWatch.class);
  static final int REFUSALS = 5;
  private static final long FIRST_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  private static final long LAST_RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final Client client;
  private final ScheduledExecutorService scheduler;
  private final ByteSequence key;
  private final long leaseId;
  private final long createRevision;
  private final Duration requestTimeout;
  private final Holder holder;
  private volatile @Nullable Stream current;
  private int refused; // watches in a row that ended before etcd created them; on the scheduler

  /** What the watch needs of its holding. */
  interface Holder {
    /** Whether the holding is lost or ended: nothing left to watch. */
    boolean over();

    /** Whether the holding's lease is known alive. */
    boolean alive();

    /** Ends the holding as lost. */
    void lose();
  }

  KeyWatch(
      Client client,
      ScheduledExecutorService scheduler,
      ByteSequence key,
      long leaseId,
      long createRevision,
      Duration requestTimeout,
      Holder holder) {
    this.client = client;
    this.scheduler = scheduler;
    this.key = key;
    this.leaseId = leaseId;
    this.createRevision = createRevision;
    this.requestTimeout = requestTimeout;
    this.holder = holder;
  }

  /**
   * Watches the key from {@code fromRevision} on. A watch the client refuses to start (its watch
   * service closed) ends the holding as lost: nothing would tell it of a deletion.
   */
  void start(long fromRevision) {
    Stream s = new Stream();
    current = s;
    Watch.Watcher w;
    try {
      w =
          client
              .getWatchClient()
              .watch(
                  key,
                  WatchOption.builder().withRevision(fromRevision).withCreateNotify(true).build(),
                  Watch.listener(s::onNext, failure -> s.ended(), s::ended));
    } catch (RuntimeException e) {
      holder.lose();
      return;
    }
    s.watcher = w;
    if (holder.over() || current != s || s.done.get()) {
      w.close(); // lost, or ended, meanwhile: ended() or close() may have missed the watcher
    }
  }

  /** Closes the watch: the holding is over. */
  void close() {
    Stream s = current;
    if (s != null) {
      s.close();
    }
  }

  /** Whether the key read is still the one this holding's lease put. */
  private boolean ours(List<KeyValue> kvs) {
    return !kvs.isEmpty()
        && kvs.get(0).getCreateRevision() == createRevision
        && kvs.get(0).getLease() == leaseId;
  }

  /**
   * Reads the key again after the watch ended; {@code attempt} counts the reads etcd has not
   * answered in a row (each waits longer before it is sent).
   */
  private void recheck(int attempt) {
    if (holder.over()) {
      return;
    }
    try {
      client
          .getKVClient()
          .get(key)
          .orTimeout(requestTimeout.toNanos(), TimeUnit.NANOSECONDS)
          .whenComplete((read, failure) -> scheduler.execute(() -> reread(read, attempt)));
    } catch (RuntimeException e) {
      holder.lose(); // the client refuses to send (closed): the key can be watched no more
    }
  }

  private void reread(@Nullable GetResponse read, int attempt) {
    if (holder.over()) {
      return;
    }
    if (read == null) {
      if (!holder.alive()) {
        holder.lose(); // neither the key nor the lease known: not held
        return;
      }
      long delay = Math.min(FIRST_RETRY_NANOS << Math.min(attempt, 10), LAST_RETRY_NANOS);
      scheduler.schedule(() -> recheck(attempt + 1), delay, TimeUnit.NANOSECONDS);
      return;
    }
    if (!ours(read.getKvs())) {
      holder.lose(); // deleted or overwritten while it was not watched
      return;
    }
    if (refused >= REFUSALS) {
      LOG.warn(
          "etcd ended {} watches in a row on the lock key {} before creating them; the holding"
              + " of lease {} is lost",
          REFUSALS,
          key.toString(StandardCharsets.UTF_8),
          Long.toHexString(leaseId));
      holder.lose();
      return;
    }
    start(read.getHeader().getRevision() + 1);
  }

  /** One watch stream; once it ends, the next one (if any) is another. */
  private final class Stream {
    final AtomicBoolean done = new AtomicBoolean();
    private volatile boolean created;
    volatile Watch.@Nullable Watcher watcher;

    void onNext(WatchResponse response) {
      if (done.get()) {
        return;
      }
      if (!created) {
        created = true;
        scheduler.execute(() -> refused = 0);
      }
      for (WatchEvent e : response.getEvents()) {
        if (e.getEventType() != WatchEvent.EventType.PUT
            || e.getKeyValue().getCreateRevision() != createRevision
            || e.getKeyValue().getLease() != leaseId) {
          holder.lose(); // deleted, or no longer this holding's key
        }
      }
    }

    /**
     * The stream ended (jetcd's onError or onCompleted; not after {@link #close()}): closed here
     * (on the scheduler: jetcd is still handling the end, and would resume some streams itself),
     * then the key is read again.
     */
    void ended() {
      if (!done.compareAndSet(false, true) || holder.over()) {
        return;
      }
      scheduler.execute(
          () -> {
            closeWatcher();
            if (!created) {
              refused++;
            }
            recheck(0);
          });
    }

    void close() {
      done.set(true);
      closeWatcher();
    }

    private void closeWatcher() {
      Watch.Watcher w = watcher;
      if (w != null) {
        w.close();
      }
    }
  }
}
