package dev.fencing.zookeeper;

import org.apache.zookeeper.client.ConnectStringParser;
import org.jspecify.annotations.Nullable;

/** The lock path of a {@link ZooKeeperFencedLock}: the default one, and the paths refused. */
final class LockPaths {
  private static final String RESERVED = "/zookeeper";

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
   * child of its path as a contender, and the root holds {@code /zookeeper} and every other node;
   * under a namespace or chroot, every other node of it) and a path that is on the server in
   * ZooKeeper's reserved {@code /zookeeper} subtree. The server's path is the client's chroot (the
   * connect string's, which ZooKeeper takes its chroot from), then its Curator namespace, then the
   * lock path: under a chroot {@code /app}, {@code /zookeeper/x} is the ordinary node {@code
   * /app/zookeeper/x}, and under the namespace {@code zookeeper}, {@code /locks} is {@code
   * /zookeeper/locks}.
   *
   * @param chroot the connect string's chroot, null if none
   * @param namespace the Curator namespace, empty if none
   */
  static void requireOwnNode(String path, @Nullable String chroot, String namespace) {
    if (path.equals("/")) {
      throw new IllegalArgumentException(
          "ZooKeeper lock path '/' is the root: Curator's mutex counts every child of its path as"
              + " a contender, and the root holds /zookeeper and every other node; give the lock a"
              + " node of its own");
    }
    String prefix = (chroot == null ? "" : chroot) + (namespace.isEmpty() ? "" : "/" + namespace);
    String onServer = prefix + path;
    if (onServer.equals(RESERVED) || onServer.startsWith(RESERVED + "/")) {
      throw new IllegalArgumentException(
          "ZooKeeper lock path '"
              + path
              + "' "
              + (prefix.isEmpty()
                  ? "lies"
                  : "is '"
                      + onServer
                      + "' on the server ("
                      + (chroot == null ? "" : "the connect string's chroot '" + chroot + "'")
                      + (chroot != null && !namespace.isEmpty() ? ", " : "")
                      + (namespace.isEmpty() ? "" : "the Curator namespace '" + namespace + "'")
                      + "), which lies")
              + " in ZooKeeper's reserved /zookeeper subtree (quotas, the ensemble's"
              + " configuration); give the lock a node of its own"
              + (prefix.isEmpty() ? "" : ", or the client another chroot or namespace"));
    }
  }

  /**
   * The chroot of a connect string as ZooKeeper reads it (from its first {@code /} on; none if that
   * is just {@code /}); null if none.
   *
   * @throws IllegalArgumentException if the chroot is no valid path
   */
  static @Nullable String chroot(String connectString) {
    return new ConnectStringParser(connectString).getChrootPath();
  }
}
