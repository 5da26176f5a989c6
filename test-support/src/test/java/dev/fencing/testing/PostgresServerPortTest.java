package dev.fencing.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.Test;

/**
 * A port chosen free and taken by another process before the server binds it (a busy CI machine):
 * the server starts on another port, from its own refusal to bind, not from a probe or a sleep.
 */
class PostgresServerPortTest {
  @Test
  void aPortTakenBeforeTheServerBindsItIsReplacedByAnother() throws Exception {
    try (ServerSocket other = new ServerSocket()) {
      other.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      int taken = other.getLocalPort();
      AtomicInteger handedOut = new AtomicInteger();
      IntSupplier ports = () -> handedOut.getAndIncrement() == 0 ? taken : Processes.freePort();
      try (PostgresServer server = PostgresServer.create("port-taken", Map.of(), ports)) {
        assertThat(server.port()).isNotEqualTo(taken);
        assertThat(handedOut.get()).as("the taken port, then one more").isEqualTo(2);
        assertThat(server.query("SELECT current_setting('port')"))
            .isEqualTo(Integer.toString(server.port()));
      }
    }
  }
}
