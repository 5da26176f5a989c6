package dev.fencing.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The processes of one {@link PatroniCluster.Node}: its folder (Patroni's YAML and log, the data
 * directory), its Patroni process, run as the servers' OS user, and the PostgreSQL server that
 * Patroni starts. Started again after {@link #kill(Duration)}; {@link #stop(Duration)} ends both.
 */
final class PatroniProcess {
  private final String name;
  private final Path dir;
  private @Nullable Process process;

  private PatroniProcess(String name, Path dir) {
    this.name = name;
    this.dir = dir;
  }

  /**
   * Writes {@code yaml} to the node's folder {@code dir} (below the cluster's {@code directory}),
   * hands both to the servers' OS user and starts Patroni.
   */
  static PatroniProcess start(String name, Path directory, Path dir, String yaml) {
    PatroniProcess patroni = new PatroniProcess(name, dir);
    try {
      Files.createDirectories(dir);
      Path file = patroni.yaml();
      Files.writeString(file, yaml, StandardCharsets.UTF_8);
      for (Path p : List.of(directory, dir, file)) {
        Programs.handOver(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("could not prepare Patroni " + name, e);
    }
    patroni.start();
    return patroni;
  }

  /** Starts (or starts again, after {@link #kill(Duration)}) the node's Patroni. */
  void start() {
    List<String> command =
        List.of(Processes.onPath("patroni").orElseThrow().toString(), yaml().toString());
    try {
      process =
          Programs.serverProcess(command)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile().toFile()))
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException("could not start Patroni " + name, e);
    }
  }

  /** Whether Patroni was started and has died since (killed by {@link #kill(Duration)}). */
  boolean died() {
    Process p = process;
    return p != null && !p.isAlive();
  }

  /** SIGKILL to Patroni and every process it started. */
  void kill(Duration wait) {
    Process p = process;
    if (p != null) {
      Processes.killTree(p.pid(), wait);
    }
  }

  /** The pid of the PostgreSQL server's postmaster, from its {@code postmaster.pid}. */
  long postmasterPid() {
    try {
      return Long.parseLong(Files.readAllLines(dir.resolve("data/postmaster.pid")).get(0).trim());
    } catch (IOException e) {
      throw new UncheckedIOException(name + ": no postmaster.pid", e);
    }
  }

  /** Whether Patroni's log (PostgreSQL's output included) holds {@code text}. */
  boolean logContains(String text) {
    try {
      return Files.exists(logFile()) && Files.readString(logFile()).contains(text);
    } catch (IOException e) {
      throw new UncheckedIOException(name + ": cannot read " + logFile(), e);
    }
  }

  /** The tail of Patroni's log, for an error message. */
  String log() {
    return Processes.tail(logFile());
  }

  // Patroni stops its PostgreSQL on SIGTERM (signalled itself, not through runuser).
  void stop(Duration wait) {
    Process p = process;
    process = null;
    if (p == null) {
      return;
    }
    p.descendants()
        .filter(h -> h.info().command().orElse("").contains("python"))
        .forEach(h -> Processes.stop(h, wait));
    Processes.stop(p.toHandle(), wait);
    if (Files.exists(dir.resolve("data/postmaster.pid"))) {
      try {
        long pid = postmasterPid();
        if (ProcessHandle.of(pid).isPresent()) {
          Processes.killTree(pid, wait);
        }
      } catch (RuntimeException e) {
        // already gone
      }
    }
  }

  private Path yaml() {
    return dir.resolve("patroni.yml");
  }

  private Path logFile() {
    return dir.resolve("patroni.log");
  }
}
