package dev.fencing.zookeeper;

/** The lock path of a {@link ZooKeeperFencedLock}: the default one, and the paths refused. */
final class LockPaths {
  private LockPaths() {}

  /**
   * {@code /fencing/locks/<resource>} with each {@code /} of the resource written {@code %2F}
   * ({@code %} is not a resource character, so distinct resources get distinct paths): the lock of
   * {@code a/b} is a sibling of the lock of {@code a}, never a child of it, where Curator's mutex
   * would sort it among {@code a}'s lock nodes (a child {@code 0} before all of them).
   */
  static String defaultLockPath(String resource) {
    return "/fencing/locks/" + resource.replace("/", "%2F");
  }

  /**
   * Refuses paths that are valid but no lock's own node: the root (Curator's mutex counts every
   * child of its path as a contender, and the root holds {@code /zookeeper} and every other node)
   * and ZooKeeper's reserved {@code /zookeeper} subtree (refused under a namespace or chroot too,
   * where it would not be ZooKeeper's: the builder cannot tell a chroot).
   */
  static void requireOwnNode(String path) {
    if (path.equals("/")) {
      throw new IllegalArgumentException(
          "ZooKeeper lock path '/' is the root: Curator's mutex counts every child of its path as"
              + " a contender, and the root holds /zookeeper and every other node; give the lock a"
              + " node of its own");
    }
    if (path.equals("/zookeeper") || path.startsWith("/zookeeper/")) {
      throw new IllegalArgumentException(
          "ZooKeeper lock path '"
              + path
              + "' lies in ZooKeeper's reserved /zookeeper subtree (quotas, the ensemble's"
              + " configuration); give the lock a node of its own");
    }
  }
}
