package dev.fencing.testing;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the server harnesses share: free ports, signals, bounded polls, temporary folders. Only
 * {@link #poll} is public, for harnesses in other modules (the torture run's fault injector).
 */
public final class Processes {
  private static final Logger LOG = LoggerFactory.getLogger(Processes.class);
  private static final long POLL_MILLIS = 50;

  private Processes() {}

  /** The executable {@code program} in a folder of the {@code PATH}, the first one found. */
  static Optional<Path> onPath(String program) {
    return Stream.of(
            Optional.ofNullable(System.getenv("PATH")).orElse("").split(File.pathSeparator))
        .map(d -> Path.of(d, program))
        .filter(Files::isExecutable)
        .findFirst();
  }

  /** A port free on the loopback address, where the servers of these harnesses listen. */
  static int freePort() {
    try (ServerSocket socket = new ServerSocket()) {
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("no free port", e);
    }
  }

  /**
   * Polls {@code condition} until it is true (then true) or {@code wait} has passed (then false).
   * The condition may throw to end the wait early.
   */
  public static boolean poll(Duration wait, BooleanSupplier condition) {
    long deadline = System.nanoTime() + wait.toNanos();
    while (true) {
      if (condition.getAsBoolean()) {
        return true;
      }
      if (System.nanoTime() - deadline > 0) {
        return false;
      }
      try {
        TimeUnit.MILLISECONDS.sleep(POLL_MILLIS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
  }

  /**
   * Whether every thread of {@code pid} is stopped (state {@code T} in {@code
   * /proc/<pid>/task/<tid>/stat}, the character after the command's closing parenthesis).
   */
  static boolean stopped(long pid) {
    try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
      for (Path task : (Iterable<Path>) tasks::iterator) {
        String stat;
        try {
          stat = Files.readString(task.resolve("stat"), StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
          continue; // the thread ended
        }
        int end = stat.lastIndexOf(')');
        if (end < 0 || end + 2 >= stat.length() || stat.charAt(end + 2) != 'T') {
          return false;
        }
      }
      return true;
    } catch (IOException e) {
      throw new UncheckedIOException("reading the threads of process " + pid, e);
    }
  }

  /** Sends signal {@code name} (e.g. {@code STOP}, {@code CONT}, {@code TERM}) to {@code pid}. */
  static void signal(long pid, String name) {
    try {
      Process kill =
          new ProcessBuilder("kill", "-" + name, Long.toString(pid))
              .redirectErrorStream(true)
              .start();
      if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new IllegalStateException(
            "kill -"
                + name
                + " "
                + pid
                + " failed: "
                + new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("kill -" + name + " " + pid, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  /**
   * SIGKILL to {@code pid} and every process it started (taken before the kill, so orphans are not
   * missed), then waits until all of them are gone.
   */
  static void killTree(long pid, Duration wait) {
    ProcessHandle root =
        ProcessHandle.of(pid).orElseThrow(() -> new IllegalStateException("no process " + pid));
    List<ProcessHandle> all = Stream.concat(Stream.of(root), root.descendants()).toList();
    all.forEach(ProcessHandle::destroyForcibly);
    if (!poll(wait, () -> all.stream().noneMatch(ProcessHandle::isAlive))) {
      throw new IllegalStateException("processes of " + pid + " still alive after SIGKILL");
    }
  }

  /** SIGTERM, then SIGKILL if {@code p} has not ended within {@code wait}. */
  static void stop(ProcessHandle p, Duration wait) {
    if (!p.isAlive()) {
      return;
    }
    p.destroy();
    if (!poll(wait, () -> !p.isAlive())) {
      p.destroyForcibly();
      poll(wait, () -> !p.isAlive());
    }
  }

  /** The last 30 lines of {@code log}, for an error message. */
  static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    } catch (IOException | UncheckedIOException e) {
      return "(no log: " + e + ")";
    }
  }

  /**
   * Deletes a temporary folder, best effort: every file and folder is tried, one that cannot be
   * deleted does not stop the others, and what is left is logged once (WARN), not thrown.
   */
  static void deleteRecursively(Path root) {
    deleteRecursively(root, Files::deleteIfExists);
  }

  /** One path deleted (a folder once empty), for {@link #deleteRecursively(Path, Deletion)}. */
  @FunctionalInterface
  interface Deletion {
    void delete(Path path) throws IOException;
  }

  /**
   * {@link #deleteRecursively(Path)} with {@code deletion} deleting each path (tests make it fail).
   *
   * @return what could not be deleted (or read), each with why; empty if {@code root} is gone
   */
  static List<String> deleteRecursively(Path root, Deletion deletion) {
    List<String> failures = new ArrayList<>();
    List<Path> failed = new ArrayList<>();
    try {
      Files.walkFileTree(
          root,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) {
              delete(file);
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) {
              if (!(e instanceof NoSuchFileException)) { // gone already: nothing to delete
                fail(file, e);
              }
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path directory, @Nullable IOException e) {
              if (e != null) {
                fail(directory, e); // not all of it was listed; try to delete it all the same
              }
              delete(directory);
              return FileVisitResult.CONTINUE;
            }

            private void delete(Path path) {
              try {
                deletion.delete(path);
              } catch (DirectoryNotEmptyException e) {
                // what is left in it is reported already, unless something appeared meanwhile
                if (failed.stream().noneMatch(f -> f.startsWith(path))) {
                  fail(path, e);
                }
              } catch (IOException | RuntimeException e) {
                fail(path, e);
              }
            }

            private void fail(Path path, Exception e) {
              failed.add(path);
              failures.add(path + " (" + e + ")");
            }
          });
    } catch (IOException | RuntimeException e) {
      failures.add(root + " (" + e + ")");
    }
    if (!failures.isEmpty()) {
      LOG.warn(
          "could not delete {} completely; {} left: {}",
          root,
          failures.size(),
          String.join(", ", failures));
    }
    return failures;
  }
}
