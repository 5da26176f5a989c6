package dev.fencing.testing;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * A real, single-member etcd for tests: the {@code etcd} binary (Debian package {@code
 * etcd-server}; {@code FENCING_TEST_ETCD} names another one) started on loopback with free ports
 * and a temporary data directory, health-checked, stopped and deleted by {@link #close()}.
 *
 * <pre>{@code
 * try (EtcdServer etcd = EtcdServer.start()) {
 *   Client client = Client.builder().endpoints(etcd.endpoint()).build();
 *   ...
 * }
 * }</pre>
 */
public final class EtcdServer implements AutoCloseable {
  private static final Duration PATIENCE = Duration.ofSeconds(60);

  private final String binary;
  private final Path dir;
  private final int clientPort;
  private final int peerPort;
  private @Nullable Process process;

  private EtcdServer(String binary, Path dir, int clientPort, int peerPort) {
    this.binary = binary;
    this.dir = dir;
    this.clientPort = clientPort;
    this.peerPort = peerPort;
  }

  /**
   * Starts a single-member etcd; tries again on other ports if one was taken meanwhile.
   *
   * @throws IllegalStateException if there is no etcd binary or it does not become healthy
   */
  public static EtcdServer start() throws IOException {
    String binary = findBinary();
    IllegalStateException failure = null;
    for (int attempt = 0; attempt < 3; attempt++) {
      Path dir = Files.createTempDirectory("fencing-etcd-");
      EtcdServer etcd = new EtcdServer(binary, dir, Processes.freePort(), Processes.freePort());
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

  /** Whether an etcd binary can be found (on the {@code PATH} or by {@code FENCING_TEST_ETCD}). */
  public static boolean available() {
    try {
      findBinary();
      return true;
    } catch (IllegalStateException e) {
      return false;
    }
  }

  /** The client URL, e.g. {@code http://127.0.0.1:41234}. */
  public String endpoint() {
    return "http://127.0.0.1:" + clientPort;
  }

  /** The client address without scheme, e.g. {@code 127.0.0.1:41234}. */
  public String hostAndPort() {
    return "127.0.0.1:" + clientPort;
  }

  /** Stops etcd (SIGTERM) and starts it again on the same ports and data: leases survive. */
  public void restart() {
    stopProcess();
    launch();
  }

  /**
   * Stops etcd with SIGSTOP: its connections stay open and its requests unanswered (a hung server,
   * not a closed one) until {@link #resume()}. Returns once every thread of etcd is stopped: kill
   * returns when the signal is queued, and etcd's threads that are running go on (answering
   * requests) until the stop reaches each of them.
   */
  public void pause() {
    long pid = running().pid();
    Processes.signal(pid, "STOP");
    if (!Processes.poll(Duration.ofSeconds(10), () -> Processes.stopped(pid))) {
      throw new IllegalStateException("etcd (pid " + pid + ") did not stop within 10 s");
    }
  }

  /** SIGCONT after {@link #pause()}: etcd answers again. */
  public void resume() {
    Processes.signal(running().pid(), "CONT");
  }

  private Process running() {
    Process p = process;
    if (p == null || !p.isAlive()) {
      throw new IllegalStateException("etcd is not running");
    }
    return p;
  }

  @Override
  public void close() {
    stopProcess();
    Processes.deleteRecursively(dir);
  }

  private void launch() {
    String peer = "http://127.0.0.1:" + peerPort;
    Path log = dir.resolve("etcd.log");
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
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
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
    boolean healthy =
        Processes.poll(
            PATIENCE,
            () -> {
              Process p = process;
              if (p == null || !p.isAlive()) {
                throw new IllegalStateException("etcd exited:\n" + Processes.tail(log));
              }
              try {
                HttpResponse<String> response =
                    http.send(health, HttpResponse.BodyHandlers.ofString());
                return response.statusCode() == 200
                    && response.body().replace(" ", "").contains("\"health\":\"true\"");
              } catch (IOException e) {
                return false;
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
              }
            });
    if (!healthy) {
      stopProcess();
      throw new IllegalStateException(
          "etcd did not become healthy within " + PATIENCE + ":\n" + Processes.tail(log));
    }
  }

  private void stopProcess() {
    Process p = process;
    process = null;
    if (p != null) {
      Processes.stop(p.toHandle(), PATIENCE);
    }
  }

  private static String findBinary() {
    String configured = System.getenv("FENCING_TEST_ETCD");
    if (configured != null && !configured.isBlank()) {
      return configured;
    }
    return Processes.onPath("etcd")
        .map(Path::toString)
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "no etcd binary: install the Debian package etcd-server (.ci/run does),"
                        + " or set FENCING_TEST_ETCD to an etcd 3.4+ binary"));
  }
}
