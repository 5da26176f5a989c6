package dev.fencing.etcd;

import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * A real etcd server for the tests: the {@code etcd} binary (Debian package {@code etcd-server};
 * {@code FENCING_TEST_ETCD} names another one) started on loopback with free ports and a temporary
 * data directory, health-checked, stopped and deleted by {@link #close()}. Test code only.
 */
final class EtcdProcess implements AutoCloseable {
  private static final Duration PATIENCE = Duration.ofSeconds(60);

  private final String binary;
  private final Path dir;
  private final int clientPort;
  private final int peerPort;
  private @Nullable Process process;

  private EtcdProcess(String binary, Path dir, int clientPort, int peerPort) {
    this.binary = binary;
    this.dir = dir;
    this.clientPort = clientPort;
    this.peerPort = peerPort;
  }

  /** Starts a single-member etcd; tries again on other ports if one was taken meanwhile. */
  static EtcdProcess start() throws IOException {
    String binary = findBinary();
    IllegalStateException failure = null;
    for (int attempt = 0; attempt < 3; attempt++) {
      Path dir = Files.createTempDirectory("fencing-etcd-");
      EtcdProcess etcd = new EtcdProcess(binary, dir, freePort(), freePort());
      try {
        etcd.launch();
        return etcd;
      } catch (IllegalStateException e) {
        etcd.close();
        failure = e;
      }
    }
    throw failure;
  }

  /** The client URL, e.g. {@code http://127.0.0.1:41234}. */
  String endpoint() {
    return "http://127.0.0.1:" + clientPort;
  }

  /** Stops etcd (SIGTERM) and starts it again on the same ports and data: leases survive. */
  void restart() {
    stopProcess();
    launch();
  }

  @Override
  public void close() {
    stopProcess();
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void launch() {
    String peer = "http://127.0.0.1:" + peerPort;
    ProcessBuilder builder =
        new ProcessBuilder(
                binary,
                "--name=fencing-test",
                "--data-dir=" + dir.resolve("data"),
                "--listen-client-urls=" + endpoint(),
                "--advertise-client-urls=" + endpoint(),
                "--listen-peer-urls=" + peer,
                "--initial-advertise-peer-urls=" + peer,
                "--initial-cluster=fencing-test=" + peer,
                "--initial-cluster-state=new")
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("etcd.log").toFile()));
    try {
      process = builder.start();
    } catch (IOException e) {
      throw new IllegalStateException("could not start " + binary, e);
    }
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    HttpRequest health =
        HttpRequest.newBuilder(URI.create(endpoint() + "/health"))
            .timeout(Duration.ofSeconds(2))
            .build();
    try {
      await("etcd healthy on " + endpoint())
          .atMost(PATIENCE)
          .pollInterval(Duration.ofMillis(100))
          .ignoreExceptionsInstanceOf(IOException.class)
          .until(
              () -> {
                Process p = process;
                if (p == null || !p.isAlive()) {
                  throw new IllegalStateException("etcd exited:\n" + log());
                }
                HttpResponse<String> response =
                    http.send(health, HttpResponse.BodyHandlers.ofString());
                return response.statusCode() == 200
                    && response.body().replace(" ", "").contains("\"health\":\"true\"");
              });
    } catch (RuntimeException e) {
      stopProcess();
      throw new IllegalStateException("etcd did not become healthy:\n" + log(), e);
    }
  }

  private void stopProcess() {
    Process p = process;
    process = null;
    if (p == null) {
      return;
    }
    p.destroy();
    try {
      if (!p.waitFor(PATIENCE.toSeconds(), TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor();
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  private String log() {
    try {
      List<String> lines = Files.readAllLines(dir.resolve("etcd.log"), StandardCharsets.UTF_8);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  private static String findBinary() {
    String configured = System.getenv("FENCING_TEST_ETCD");
    if (configured != null && !configured.isBlank()) {
      return configured;
    }
    Optional<Path> onPath =
        Stream.of(Optional.ofNullable(System.getenv("PATH")).orElse("").split(File.pathSeparator))
            .map(d -> Path.of(d, "etcd"))
            .filter(Files::isExecutable)
            .findFirst();
    return onPath
        .map(Path::toString)
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "no etcd binary: install the Debian package etcd-server (.ci/run does),"
                        + " or set FENCING_TEST_ETCD to an etcd 3.4+ binary"));
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
