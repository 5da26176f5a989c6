package dev.fencing.zookeeper;

import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.Watcher.Event.EventType;
import org.apache.zookeeper.data.Stat;

/**
 * A watch on a held lock node: its deletion by anyone but its holder (an operator kicking a stuck
 * holder) drops the holding, as the next contender then holds the lock. Other node events re-arm it
 * (a watch fires once) and drop the holding if the node found is gone or another node under the
 * same name (another czxid: deleted and created again before the event was handled, or while the
 * client was disconnected, which ZooKeeper reports as a change, not a deletion); connection events
 * leave it (ZooKeeper sets it again on reconnecting).
 */
final class DeletionWatch implements Watcher {
  private final CuratorFramework client;
  private final String node;
  private final AtomicBoolean dropped;
  private volatile long czxid; // the held node's, once read back; 0 until then

  DeletionWatch(CuratorFramework client, String node, AtomicBoolean dropped) {
    this.client = client;
    this.node = node;
    this.dropped = dropped;
  }

  /** The czxid of the node the holding acquired: a node of another czxid is not it. */
  void heldNode(long czxid) {
    this.czxid = czxid;
  }

  @Override
  public void process(WatchedEvent event) {
    if (event.getType() == EventType.NodeDeleted) {
      dropped.set(true);
    } else if (event.getType() != EventType.None && !dropped.get()) {
      try {
        client
            .checkExists()
            .usingWatcher(this)
            .inBackground(
                (c, e) -> {
                  if (e.getResultCode() == KeeperException.Code.NONODE.intValue()
                      || notTheHeldNode(e.getStat())) {
                    dropped.set(true);
                  }
                })
            .forPath(node);
      } catch (Exception e) {
        // not re-armed: isHeld() then relies on the session alone
      }
    }
  }

  private boolean notTheHeldNode(Stat stat) {
    long held = czxid;
    return stat != null && held != 0 && stat.getCzxid() != held;
  }
}
