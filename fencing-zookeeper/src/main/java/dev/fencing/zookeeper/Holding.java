package dev.fencing.zookeeper;

import dev.fencing.jdbc.FencedLockException;
import dev.fencing.jdbc.FencingToken;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.Stat;

/**
 * One acquisition of a {@link ZooKeeperFencedLock}: its token, the session it was taken in, its
 * node. {@code dropped}: ZooKeeper told the watch on the node that it was deleted.
 */
record Holding(FencingToken token, long sessionId, String node, AtomicBoolean dropped) {

  /**
   * The node just acquired, read back in one session: its czxid is the token. The session is read
   * before and after the read-back and must be the same, and the node's: the client may have given
   * its session up meanwhile (Curator does so after a disconnection longer than the session
   * timeout) and be connected in a new one while ZooKeeper still keeps the old session and its node
   * (until it times the session out): a node of a session the client has left is not held, whatever
   * session it matches. {@code afterSessionRead} runs between the first session read and the
   * read-back (tests).
   *
   * @throws FencedLockException if the node is gone, not this session's, or the session changed
   */
  static Holding readBack(
      CuratorFramework client, String resource, String node, Runnable afterSessionRead)
      throws InterruptedException {
    try {
      long session = client.getZookeeperClient().getZooKeeper().getSessionId();
      afterSessionRead.run();
      AtomicBoolean dropped = new AtomicBoolean();
      DeletionWatch watch = new DeletionWatch(client, node, dropped);
      Stat stat = client.checkExists().usingWatcher(watch).forPath(node);
      long after = client.getZookeeperClient().getZooKeeper().getSessionId();
      if (stat == null) {
        throw new FencedLockException(
            "lock node "
                + node
                + " is gone right after acquisition: the ZooKeeper session ended; not held");
      }
      if (stat.getEphemeralOwner() != session) {
        throw new FencedLockException(
            "lock node "
                + node
                + " belongs to ZooKeeper session 0x"
                + Long.toHexString(stat.getEphemeralOwner())
                + ", not to the client's session 0x"
                + Long.toHexString(session)
                + " (the client left the session that created it); not held");
      }
      if (after != session) {
        throw new FencedLockException(
            "the ZooKeeper session changed (from 0x"
                + Long.toHexString(session)
                + " to 0x"
                + Long.toHexString(after)
                + ") while the lock node "
                + node
                + " was read back: the node belongs to a session the client has left; not held");
      }
      watch.heldNode(stat.getCzxid());
      return new Holding(FencingToken.of(resource, stat.getCzxid()), session, node, dropped);
    } catch (InterruptedException | FencedLockException e) {
      throw e;
    } catch (Exception e) {
      throw new FencedLockException("could not read back the lock node " + node, e);
    }
  }
}
