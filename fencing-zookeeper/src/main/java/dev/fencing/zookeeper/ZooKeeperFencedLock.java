package dev.fencing.zookeeper;

import dev.fencing.jdbc.FencedLock;
import dev.fencing.jdbc.FencedLockException;
import dev.fencing.jdbc.FencingToken;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.CuratorZookeeperClient;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.zookeeper.common.PathUtils;
import org.jspecify.annotations.Nullable;

/**
 * A ZooKeeper lock (Curator's {@code InterProcessMutex} recipe) whose fencing token is the
 * <b>czxid</b> of its lock node: the id of the ZooKeeper transaction that created the node.
 * PostgreSQL compares it through a {@code FencedDataSource}; the resource must be declared external
 * first ({@code FencedDataSource.createExternalResource}).
 *
 * <pre>{@code
 * try (ZooKeeperFencedLock lock = ZooKeeperFencedLock.builder(curator, "ledger").build()) {
 *   FencingToken token = lock.acquire(Duration.ofSeconds(10));
 *   try (FencingScope scope = Fencing.bind(token); Connection c = fencedDataSource.getConnection()) {
 *     ... writes: PostgreSQL refuses them once a later holder has written ...
 *   }
 * }
 * }</pre>
 *
 * <h2>Why every later holder's token is strictly greater</h2>
 *
 * <ul>
 *   <li>The recipe: each contender creates an ephemeral sequential node under the lock path and
 *       holds the lock when its node is the one with the lowest sequence number among the children;
 *       it keeps the lock until its node is deleted (release, or the end of its session).
 *   <li>ZooKeeper applies every write in one total order (Zab) and gives it a zxid that increases
 *       along that order, across leader changes too (the epoch is in the high 32 bits). A node's
 *       czxid is the zxid of its creation, so of two nodes the later-created has the greater czxid.
 *   <li>If B holds the lock after A did, B's node was created after A's: had it existed when A
 *       acquired, it would have had the lower sequence number (sequence numbers under one parent
 *       follow creation order) and A would have waited for it. Hence czxid(B) &gt; czxid(A).
 *   <li>The czxid rather than the sequence number: Curator creates the lock path as a <i>container
 *       </i> node, which ZooKeeper deletes when empty; recreated, its sequence numbers start at 0
 *       again, but czxids never repeat.
 *   <li><b>Session expiry.</b> A's session expires (a long pause, a partition): ZooKeeper deletes
 *       A's node in a transaction, and only then can B be the lowest: B's token is greater, while A
 *       — not knowing yet — still carries its old token, which PostgreSQL refuses once B has
 *       written. If A acquires again, it does so with a new node in a new session: a new, greater
 *       token.
 *   <li><b>Reconnects.</b> A connection loss within the session timeout keeps the session and its
 *       ephemeral node: the holder still holds, with the same token, and nobody else could acquire
 *       meanwhile. {@link #isHeld()} says false while disconnected (it cannot know), true again
 *       after reconnecting to the same session.
 *   <li>After acquiring, the node is read back in the holder's own session (read-your-writes): the
 *       token is only returned if the node still exists and belongs to the current session, the
 *       same before and after the read (a client that gave its session up, as Curator does after a
 *       disconnection longer than the session timeout, may be connected in a new one while
 *       ZooKeeper still keeps the old session's node: that node is not held, and is deleted).
 *   <li>Limits: a ZooKeeper ensemble restored from an old backup, or a new ensemble, can hand out
 *       smaller zxids; PostgreSQL then refuses every new holder as stale (safe, but stuck) until an
 *       operator runs {@code fencing.reset_external(resource, <the new ensemble's zxid>)} once
 *       every holder of the old ensemble is known to be gone (README, "Limits of external tokens").
 *       zxids are positive unless the epoch exceeds 2^31.
 * </ul>
 *
 * <p>A holding whose session ZooKeeper ended (the client reconnected in a new session, or gave the
 * session up and is connecting anew), or whose lock node another client deleted (a watch on the
 * node tells; a node created again under its name has another czxid and is not it), is not held:
 * the next {@link #tryAcquire} on the acquiring thread forgets it and acquires anew; while
 * disconnected from the holding's own session the client cannot know, and the lock still counts as
 * held.
 *
 * <p>Like Curator's mutex, the lock belongs to the thread that acquired it: release (or close) it
 * on that thread. One lock object holds at most one acquisition at a time; create one per
 * concurrent holder. {@code close()} releases and also stops the object; an acquisition on another
 * thread that completes after {@code close()} releases the lock at once and throws {@link
 * IllegalStateException}.
 */
public final class ZooKeeperFencedLock implements FencedLock {

  private final CuratorFramework client;
  private final String resource;
  private final String lockPath;
  private final TokenMutex mutex;
  private volatile @Nullable Holding holding;
  private volatile boolean closed;
  private volatile Runnable afterSessionRead = () -> {};

  private ZooKeeperFencedLock(CuratorFramework client, String resource, String lockPath) {
    this.client = client;
    this.resource = resource;
    this.lockPath = lockPath;
    this.mutex = new TokenMutex(client, lockPath);
  }

  /**
   * Starts the configuration of a lock for {@code resource} (a PostgreSQL resource name: 1 to 200
   * of letters, digits and {@code _ . : / @ + = # -}) on a started Curator client.
   */
  public static Builder builder(CuratorFramework client, String resource) {
    return new Builder(client, resource);
  }

  @Override
  public String resource() {
    return resource;
  }

  /** The ZooKeeper path under which the lock nodes are created. */
  public String lockPath() {
    return lockPath;
  }

  @Override
  public Optional<FencingToken> tryAcquire(Duration wait) throws InterruptedException {
    Objects.requireNonNull(wait, "wait");
    if (wait.isNegative()) {
      throw new IllegalArgumentException("wait must not be negative, was " + wait);
    }
    if (closed) {
      throw new IllegalStateException("lock on " + resource + " is closed");
    }
    Holding current = holding;
    if (current != null) {
      forgetLost(current);
    }
    if (mutex.isOwnedByCurrentThread()) {
      // nothing held, yet Curator has a record for this thread: of an acquisition lost while
      // another
      // thread of this object acquired (its node is gone); re-entered, it would hand the node back
      clearRecord();
    }
    boolean acquired;
    try {
      acquired = mutex.acquire(saturatedNanos(wait), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.interrupted(); // Curator sets the status again; the exception reports it
      throw e;
    } catch (Exception e) {
      throw new FencedLockException(
          "could not acquire the ZooKeeper lock " + lockPath + " for " + resource, e);
    }
    if (!acquired) {
      return Optional.empty();
    }
    try {
      Holding h = readToken();
      holding = h;
      if (closed) {
        // close() came while this waited (and, not seeing the holding, released nothing): the
        // closed object must not keep the lock
        holding = null;
        throw new IllegalStateException(
            "lock on " + resource + " was closed while acquiring; released, not held");
      }
      return Optional.of(h.token());
    } catch (InterruptedException | RuntimeException e) {
      if (e instanceof InterruptedException) {
        Thread.interrupted(); // as above, and so that the release is not interrupted too
      }
      releaseQuietly(e);
      throw e;
    }
  }

  @Override
  public FencingToken acquire(Duration timeout) throws InterruptedException, TimeoutException {
    return tryAcquire(timeout)
        .orElseThrow(
            () ->
                new TimeoutException(
                    "ZooKeeper lock "
                        + lockPath
                        + " for "
                        + resource
                        + " not acquired within "
                        + timeout));
  }

  @Override
  public Optional<FencingToken> token() {
    Holding h = holding;
    return h != null && holds(h) ? Optional.of(h.token()) : Optional.empty();
  }

  @Override
  public boolean isHeld() {
    Holding h = holding;
    return h != null && holds(h);
  }

  /**
   * Deletes the lock node. On a thread whose own acquisition was lost while another thread of this
   * object acquired since, only this thread's lost acquisition is forgotten: the other's stays.
   *
   * @throws IllegalStateException if called on another thread than the one that acquired
   */
  @Override
  public void release() {
    Holding h = holding;
    if (h == null) {
      return;
    }
    if (!mutex.isOwnedByCurrentThread()) {
      throw new IllegalStateException(
          "lock on "
              + resource
              + " must be released on the thread that acquired it (Curator's mutex is per thread)");
    }
    if (!h.node().equals(mutex.node())) {
      // this thread's acquisition was lost (its node deleted) and another thread of this object
      // holds now: clear this thread's record only, never the other's holding
      clearRecord();
      return;
    }
    holding = null;
    try {
      mutex.release();
    } catch (Exception e) {
      throw new FencedLockException(
          "could not delete the lock node "
              + h.node()
              + "; ZooKeeper deletes it when the session ends",
          e);
    }
  }

  @Override
  public void close() {
    closed = true;
    release();
  }

  @Override
  public String toString() {
    Holding h = holding;
    return "ZooKeeperFencedLock["
        + resource
        + " at "
        + lockPath
        + (h == null
            ? ", not held"
            : holds(h)
                ? ", token " + h.token().value()
                : ", not held (was token " + h.token().value() + ")")
        + "]";
  }

  /** The node now held, read back in this session: its czxid is the token. */
  private Holding readToken() throws InterruptedException {
    return Holding.readBack(client, resource, mutex.node(), afterSessionRead);
  }

  /**
   * Forgets a holding whose session ZooKeeper ended (the client is connected in another session):
   * its node went with the session, so it is not held. Anything else, or a lost holding asked about
   * on another thread than the one that acquired (Curator's mutex keeps it per thread), is refused.
   */
  private void forgetLost(Holding h) {
    if (!h.dropped().get() && !sessionEnded(h)) {
      throw new IllegalStateException(
          "lock on " + resource + " is already held with token " + h.token());
    }
    if (!mutex.isOwnedByCurrentThread()) {
      throw new IllegalStateException(
          "lock on "
              + resource
              + ": the ZooKeeper session that held it with token "
              + h.token()
              + " ended, or its lock node was deleted; acquire again, or release(), on the thread"
              + " that acquired it (Curator's mutex is per thread)");
    }
    holding = null;
    clearRecord();
  }

  /** Curator's record of this thread's lost acquisition, cleared (its node is gone already). */
  private void clearRecord() {
    try {
      mutex.release();
    } catch (Exception e) {
      // the node was deleted (or its session ended) whatever this delete did
    }
  }

  /**
   * Whether the client left the session {@code h} was taken in: connected in another one, or
   * connecting anew after giving it up (Curator does so after a disconnection longer than the
   * session timeout).
   */
  private boolean sessionEnded(Holding h) {
    try {
      // a disconnected handle keeps its session's id (it may live on: cannot know); a handle of
      // another id (0: not connected yet) is one Curator made after giving that session up, which
      // the client never resumes
      return client.getZookeeperClient().getZooKeeper().getSessionId() != h.sessionId();
    } catch (Exception e) {
      return false;
    }
  }

  private boolean holds(Holding h) {
    if (h.dropped().get()) {
      return false;
    }
    CuratorZookeeperClient zk = client.getZookeeperClient();
    if (!zk.isConnected()) {
      return false;
    }
    try {
      return zk.getZooKeeper().getSessionId() == h.sessionId();
    } catch (Exception e) {
      return false;
    }
  }

  /** Runs {@code step} between reading the session id and reading the node back. For tests. */
  void afterSessionRead(Runnable step) {
    this.afterSessionRead = Objects.requireNonNull(step, "step");
  }

  private void releaseQuietly(Throwable failure) {
    try {
      mutex.release();
    } catch (Exception e) {
      failure.addSuppressed(e);
    }
  }

  private static long saturatedNanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE;
    }
  }

  /** Configuration of a {@link ZooKeeperFencedLock}; validated by {@link #build()}. */
  public static final class Builder {
    private final CuratorFramework client;
    private final String resource;
    private @Nullable String lockPath;

    private Builder(CuratorFramework client, String resource) {
      this.client = Objects.requireNonNull(client, "client");
      this.resource = Objects.requireNonNull(resource, "resource");
    }

    /**
     * The ZooKeeper path under which contenders create their lock nodes (default {@code
     * /fencing/locks/<resource>}, each {@code /} of the resource written {@code %2F}). Every client
     * locking the resource must use the same path. The path of one lock must not lie under
     * another's: Curator's mutex counts every child of its path as a contender.
     */
    public Builder lockPath(String lockPath) {
      this.lockPath = Objects.requireNonNull(lockPath, "lockPath");
      return this;
    }

    /**
     * Builds the lock (nothing is sent to ZooKeeper yet).
     *
     * @throws IllegalArgumentException if the resource name or the lock path is malformed, or the
     *     path is the root or, on the server (under the connect string's chroot and the client's
     *     Curator namespace), in ZooKeeper's reserved {@code /zookeeper} subtree
     * @throws IllegalStateException if the Curator client is not started
     */
    public ZooKeeperFencedLock build() {
      FencingToken.requireValidResource(resource);
      String path = lockPath != null ? lockPath : LockPaths.defaultLockPath(resource);
      try {
        PathUtils.validatePath(path);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "ZooKeeper lock path '"
                + path
                + "' is invalid: "
                + e.getMessage()
                + (lockPath == null ? " (set one with lockPath(...))" : ""),
            e);
      }
      LockPaths.requireOwnNode(
          path,
          LockPaths.chroot(client.getZookeeperClient().getCurrentConnectionString()),
          client.getNamespace());
      if (client.getState() != CuratorFrameworkState.STARTED) {
        throw new IllegalStateException(
            "the Curator client must be started, is " + client.getState());
      }
      return new ZooKeeperFencedLock(client, resource, path);
    }
  }
}
