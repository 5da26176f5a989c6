package dev.fencing.zookeeper;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;

/** Curator's lock recipe, with the path of the lock node it holds made visible. */
final class TokenMutex extends InterProcessMutex {
  TokenMutex(CuratorFramework client, String path) {
    super(client, path);
  }

  /** The ephemeral sequential node through which the calling thread holds the lock. */
  String node() {
    String node = getLockPath();
    if (node == null) {
      throw new IllegalStateException("the calling thread does not hold the lock");
    }
    return node;
  }
}
