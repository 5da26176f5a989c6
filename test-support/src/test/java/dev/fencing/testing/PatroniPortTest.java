package dev.fencing.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.Test;

/**
 * A node's PostgreSQL port, chosen free and taken by another process before the server binds it (a
 * busy CI machine): the node is launched again on new ports, from its log's "Address already in
 * use", and the cluster comes up.
 */
class PatroniPortTest {
  @Test
  void aNodePortTakenBeforeItsServerBindsItIsReplaced() throws Exception {
    try (ServerSocket other = new ServerSocket()) {
      other.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      int taken = other.getLocalPort();
      AtomicInteger handedOut = new AtomicInteger();
      IntSupplier ports = () -> handedOut.getAndIncrement() == 0 ? taken : Processes.freePort();
      try (PatroniCluster cluster = PatroniCluster.start(PatroniConfig.defaults(), ports)) {
        List<PatroniCluster.Node> nodes = cluster.nodes();
        assertThat(nodes).hasSize(2).noneMatch(n -> n.port() == taken);
        assertThat(handedOut.get()).as("node0 twice (PostgreSQL, REST), node1 once").isEqualTo(6);
        assertThat(cluster.leader().name()).isEqualTo("node0");
      }
    }
  }
}
