package dev.fencing.torture;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import org.jspecify.annotations.Nullable;

/**
 * A {@link Worker} running in a JVM of its own (same {@code java}, same classes), with the means to
 * pause it for real ({@code SIGSTOP}/{@code SIGCONT}), command it through its standard input and
 * read what it reports on its standard output.
 */
final class WorkerProcess {
  /** What a held write reported when it was let go. */
  record Held(String resource, long token, long seq) {}

  private final int id;
  private final Process process;
  private final Path log;
  private final Writer commands;
  private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
  private boolean paused;

  private WorkerProcess(int id, Process process, Path log) {
    this.id = id;
    this.process = process;
    this.log = log;
    this.commands = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    Thread reader = new Thread(this::readLines, "torture-worker-" + id + "-stdout");
    reader.setDaemon(true);
    reader.start();
  }

  /** Starts worker {@code id}; {@link #awaitReady} waits until it is ready. */
  static WorkerProcess start(
      int id,
      String url,
      List<String> resources,
      boolean fenced,
      Duration ttl,
      long seed,
      Path directory) {
    Path log = directory.resolve("worker-" + id + ".log");
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx96m");
    command.add("-XX:+UseSerialGC");
    command.add("-XX:TieredStopAtLevel=1");
    command.add("-cp");
    command.add(classPath());
    command.add(Worker.class.getName());
    command.add(url);
    command.add(Integer.toString(id));
    command.add(String.join(",", resources));
    command.add(fenced ? "fenced" : "unfenced");
    // Half the workers bind the lease (the client may refuse by itself once it knows the lease is
    // lost), half bind only its token (every refusal is the database's).
    command.add(id % 2 == 0 ? "lease" : "token");
    command.add(Long.toString(ttl.toMillis()));
    command.add(Long.toString(seed));
    command.add(log.toString());
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .redirectError(
                ProcessBuilder.Redirect.appendTo(
                    directory.resolve("worker-" + id + ".err").toFile()));
    Process process;
    try {
      process = builder.start();
    } catch (IOException e) {
      throw new UncheckedIOException("Could not start worker " + id, e);
    }
    return new WorkerProcess(id, process, log);
  }

  /** Waits until the worker is connected and about to work. */
  void awaitReady(Duration wait) {
    expect(System.nanoTime() + wait.toNanos(), "READY");
  }

  /**
   * The class path of this JVM, for the workers. Surefire may run tests from a manifest-only jar
   * whose {@code Class-Path} names the real entries: those are expanded.
   */
  static String classPath() {
    String classPath = System.getProperty("java.class.path");
    String[] entries = classPath.split(File.pathSeparator);
    if (entries.length != 1 || !entries[0].endsWith(".jar")) {
      return classPath;
    }
    Path jar = Path.of(entries[0]).toAbsolutePath();
    try (JarFile file = new JarFile(jar.toFile())) {
      Manifest manifest = file.getManifest();
      String listed =
          manifest == null
              ? null
              : manifest.getMainAttributes().getValue(Attributes.Name.CLASS_PATH);
      if (listed == null || listed.isBlank()) {
        return classPath;
      }
      List<String> expanded = new ArrayList<>();
      expanded.add(jar.toString());
      URI base = jar.toUri();
      for (String entry : listed.trim().split("\\s+")) {
        Path path = Path.of(base.resolve(entry));
        if (Files.exists(path)) {
          expanded.add(path.toString());
        }
      }
      return String.join(File.pathSeparator, expanded);
    } catch (IOException | RuntimeException e) {
      return classPath;
    }
  }

  int id() {
    return id;
  }

  long pid() {
    return process.pid();
  }

  Path log() {
    return log;
  }

  boolean isPaused() {
    return paused;
  }

  /** The real GC pause: the whole JVM stops, its keep-alive threads included. */
  void pause() {
    signal("STOP");
    paused = true;
  }

  void resume() {
    signal("CONT");
    paused = false;
  }

  private void signal(String name) {
    try {
      Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(pid())).start();
      if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new IllegalStateException("kill -" + name + " " + pid() + " failed");
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Could not signal worker " + id, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted signalling worker " + id, e);
    }
  }

  void send(String command) {
    try {
      commands.write(command + "\n");
      commands.flush();
    } catch (IOException e) {
      throw new UncheckedIOException("Worker " + id + " does not take commands", e);
    }
  }

  /**
   * Sends {@code command} ({@code HOLD ...}) and waits for the worker's {@code HELD} report. A held
   * write that fails before its hold point (its lease lost under load, say: refused at its first
   * statement) reports its {@code RESULT} without {@code HELD}; then the command is sent again, for
   * the next write. If no write is held in time, sends {@code GO} (so that the hold, whenever it
   * happens, does not wait) and returns null.
   */
  @Nullable Held hold(String command, Duration wait) {
    long deadline = System.nanoTime() + wait.toNanos();
    send(command);
    while (true) {
      String line;
      try {
        line = expect(deadline, "HELD ", "RESULT ");
      } catch (IllegalStateException e) {
        send("GO");
        return null;
      }
      if (line.startsWith("HELD ")) {
        String[] f = line.split(" ");
        return new Held(f[1], Long.parseLong(f[2]), Long.parseLong(f[3]));
      }
      send(command); // the write failed before its hold point
    }
  }

  /** Whether the worker has reported a line starting with {@code prefix} not yet consumed. */
  boolean hasReported(String prefix) {
    return lines.stream().anyMatch(line -> line.startsWith(prefix));
  }

  /** Waits for the outcome of the held write: {@code ACK}, {@code REFUSED} or {@code ERROR}. */
  String awaitResult(Duration wait) {
    return expect(System.nanoTime() + wait.toNanos(), "RESULT ").split(" ")[2];
  }

  /** The worker's next line starting with one of {@code prefixes}, by {@code deadline} (nanos). */
  private String expect(long deadline, String... prefixes) {
    try {
      while (true) {
        long left = deadline - System.nanoTime();
        String line = left <= 0 ? null : lines.poll(left, TimeUnit.NANOSECONDS);
        if (line == null) {
          throw new IllegalStateException(
              "worker " + id + " did not report '" + prefixes[0].trim() + "' in time");
        }
        for (String prefix : prefixes) {
          if (line.startsWith(prefix)) {
            return line;
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted waiting for worker " + id, e);
    }
  }

  private void readLines() {
    try (BufferedReader in =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        lines.add(line);
      }
    } catch (IOException e) {
      // the worker is gone
    }
  }

  /** Asks the worker to stop and waits; kills it if it does not. True if it stopped by itself. */
  boolean stop(Duration wait) {
    if (paused) {
      resume();
    }
    if (process.isAlive()) {
      try {
        send("STOP");
      } catch (UncheckedIOException e) {
        // already going away
      }
    }
    try {
      if (process.waitFor(wait.toMillis(), TimeUnit.MILLISECONDS)) {
        return process.exitValue() == 0;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    process.destroyForcibly();
    return false;
  }
}
