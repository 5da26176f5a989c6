package dev.fencing.benchmark.compare;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A single-member etcd started for one run, on loopback ports, with a throw-away data directory;
 * {@link #close()} stops it and deletes the directory. Its election timeout is short (100 ms) so
 * that etcd accepts one-second lease TTLs.
 */
final class EtcdProcess implements AutoCloseable {
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

  private final Process process;
  private final Path dataDir;
  private final String endpoint;

  private EtcdProcess(Process process, Path dataDir, String endpoint) {
    this.process = process;
    this.dataDir = dataDir;
    this.endpoint = endpoint;
  }

  /** The {@code etcd} executable on the PATH, if any. */
  static Optional<Path> findExecutable() {
    String path = System.getenv("PATH");
    if (path == null) {
      return Optional.empty();
    }
    return Stream.of(path.split(File.pathSeparator))
        .filter(dir -> !dir.isEmpty())
        .map(dir -> Path.of(dir, "etcd"))
        .filter(Files::isExecutable)
        .findFirst();
  }

  /** Starts etcd and returns once it answers a read. */
  static EtcdProcess start(Path executable) throws Exception {
    int client = freePort();
    int peer = freePort();
    Path dataDir = Files.createTempDirectory("fencing-compare-etcd");
    String endpoint = "http://127.0.0.1:" + client;
    String peerUrl = "http://127.0.0.1:" + peer;
    Process process =
        new ProcessBuilder(
                List.of(
                    executable.toString(),
                    "--name=compare",
                    "--data-dir=" + dataDir.resolve("data"),
                    "--listen-client-urls=" + endpoint,
                    "--advertise-client-urls=" + endpoint,
                    "--listen-peer-urls=" + peerUrl,
                    "--initial-advertise-peer-urls=" + peerUrl,
                    "--initial-cluster=compare=" + peerUrl,
                    "--heartbeat-interval=10",
                    "--election-timeout=100"))
            .redirectErrorStream(true)
            .redirectOutput(dataDir.resolve("etcd.log").toFile())
            .start();
    EtcdProcess etcd = new EtcdProcess(process, dataDir, endpoint);
    try (Client probe = Client.builder().endpoints(endpoint).build()) {
      ByteSequence key = ByteSequence.from("fencing-compare-probe", StandardCharsets.UTF_8);
      Poll.until(
          "etcd answering at " + endpoint + " (log: " + dataDir.resolve("etcd.log") + ")",
          START_TIMEOUT,
          () -> {
            if (!process.isAlive()) {
              throw new IllegalStateException(
                  "etcd exited with status "
                      + process.exitValue()
                      + ": "
                      + Files.readString(dataDir.resolve("etcd.log"), StandardCharsets.UTF_8));
            }
            try {
              probe.getKVClient().get(key).get(1, TimeUnit.SECONDS);
              return true;
            } catch (java.util.concurrent.ExecutionException
                | java.util.concurrent.TimeoutException e) {
              return false;
            }
          });
    } catch (Exception | Error e) {
      etcd.close();
      throw e;
    }
    return etcd;
  }

  String endpoint() {
    return endpoint;
  }

  @Override
  public void close() throws IOException {
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try (Stream<Path> files = Files.walk(dataDir)) {
      for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }
}
