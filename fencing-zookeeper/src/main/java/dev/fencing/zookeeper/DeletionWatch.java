package dev.fencing.zookeeper;

import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.Watcher.Event.EventType;

/**
 * A watch on a held lock node: its deletion by anyone but its holder (an operator kicking a stuck
 * holder) drops the holding, as the next contender then holds the lock. Other node events re-arm it
 * (a watch fires once); connection events leave it (ZooKeeper sets it again on reconnecting).
 */
final class DeletionWatch implements Watcher {
  private final CuratorFramework client;
  private final String node;
  private final AtomicBoolean dropped;

  DeletionWatch(CuratorFramework client, String node, AtomicBoolean dropped) {
    this.client = client;
    this.node = node;
    this.dropped = dropped;
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
                  if (e.getResultCode() == KeeperException.Code.NONODE.intValue()) {
                    dropped.set(true);
                  }
                })
            .forPath(node);
      } catch (Exception e) {
        // not re-armed: isHeld() then relies on the session alone
      }
    }
  }
}
