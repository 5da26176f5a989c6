package dev.fencing.testing;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The machine's PostgreSQL programs and the processes and folders of {@link PostgresServer}: where
 * the programs are, running one (as the OS user {@code postgres} when the tests run as root),
 * folders the servers' user owns, killing a server's processes.
 */
final class Programs {
  private static final String OS_USER = "postgres";
  private static @Nullable Path binaries;

  private Programs() {}

  /**
   * Runs {@code command} as the servers' OS user, its output in temporary files of {@code root};
   * returns its standard output, or fails naming {@code server} with its output and the tail of the
   * server's log.
   */
  static String run(String server, Path root, List<String> command, Duration wait) {
    try {
      Path out = Files.createTempFile(root, "out-", ".txt");
      Path err = Files.createTempFile(root, "err-", ".txt");
      handOver(out);
      handOver(err);
      Process process =
          serverProcess(command)
              .redirectOutput(out.toFile())
              .redirectError(err.toFile())
              .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
              .start();
      if (!process.waitFor(wait.toSeconds(), TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException(server + ": " + command + " did not end within " + wait);
      }
      String output = Files.readString(out, StandardCharsets.UTF_8);
      String errors = Files.readString(err, StandardCharsets.UTF_8);
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
      if (process.exitValue() != 0) {
        throw new IllegalStateException(
            server
                + ": "
                + String.join(" ", command)
                + " exited with "
                + process.exitValue()
                + ": "
                + errors
                + output
                + logTail(root.resolve("server.log")));
      }
      return output;
    } catch (IOException e) {
      throw new UncheckedIOException(server + ": could not run " + command, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(server + ": interrupted running " + command, e);
    }
  }

  /**
   * SIGSTOP to {@code pid}: a stopped postmaster forks nothing more, so the children listed after
   * this are all it has. (Listing them first and killing the postmaster then lets a backend forked
   * in between escape; orphaned, it keeps the shared memory attached and the next start fails.)
   */
  static void freeze(long pid) {
    try {
      Process kill = new ProcessBuilder("kill", "-STOP", Long.toString(pid)).start();
      if (!kill.waitFor(10, TimeUnit.SECONDS)) {
        kill.destroyForcibly();
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Could not run kill -STOP " + pid, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** SIGKILL to {@code postmaster}, frozen first, and every process it started; waits. */
  static void killAll(ProcessHandle postmaster, Duration wait) {
    freeze(postmaster.pid());
    List<ProcessHandle> victims = new ArrayList<>();
    victims.add(postmaster);
    postmaster.descendants().forEach(victims::add);
    victims.forEach(ProcessHandle::destroyForcibly);
    long deadline = System.nanoTime() + wait.toNanos();
    for (ProcessHandle victim : victims) {
      while (victim.isAlive() && !isZombie(victim.pid())) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("process " + victim.pid() + " survived SIGKILL");
        }
        try {
          victim.onExit().get(50, TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
          // poll again
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
      }
    }
  }

  private static String logTail(Path log) {
    try {
      if (!Files.exists(log)) {
        return "";
      }
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      return "\nserver log:\n"
          + String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    } catch (IOException e) {
      return "";
    }
  }

  /** The directory of PostgreSQL's programs: the newest /usr/lib/postgresql/N/bin, or pg_config. */
  static synchronized Path binaries() {
    if (binaries != null) {
      return binaries;
    }
    Path found = null;
    Path debian = Path.of("/usr/lib/postgresql");
    if (Files.isDirectory(debian)) {
      try (Stream<Path> versions = Files.list(debian)) {
        found =
            versions
                .map(v -> v.resolve("bin"))
                .filter(b -> Files.isExecutable(b.resolve("initdb")))
                .max(Comparator.comparingInt(Programs::major))
                .orElse(null);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    if (found == null) {
      try {
        Process p = new ProcessBuilder("pg_config", "--bindir").start();
        String dir = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (p.waitFor() == 0 && Files.isExecutable(Path.of(dir, "initdb"))) {
          found = Path.of(dir);
        }
      } catch (IOException e) {
        // no pg_config on the PATH
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (found == null) {
      throw new IllegalStateException(
          "no PostgreSQL server programs: neither /usr/lib/postgresql/<major>/bin/initdb nor"
              + " pg_config --bindir (install postgresql, e.g. apt-get install postgresql-15)");
    }
    binaries = found;
    return found;
  }

  private static int major(Path bin) {
    try {
      return Integer.parseInt(bin.getParent().getFileName().toString());
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  static Path tool(String name) {
    return binaries().resolve(name);
  }

  /**
   * A process of {@code command} as the servers' OS user ({@link #asServerUser}), started in the
   * root directory: the test's own working directory (a checkout under a private temporary
   * directory, say) may be closed to that user, and Patroni, for one, changes back into it.
   */
  static ProcessBuilder serverProcess(List<String> command) {
    return new ProcessBuilder(asServerUser(command)).directory(new File("/"));
  }

  /** {@code command}, run as the servers' OS user when running as root (through runuser). */
  static List<String> asServerUser(List<String> command) {
    List<String> full = new ArrayList<>();
    if (isRoot()) {
      full.addAll(List.of("runuser", "-u", OS_USER, "--"));
    }
    full.addAll(command);
    return full;
  }

  static boolean isRoot() {
    return "root".equals(System.getProperty("user.name"));
  }

  static Path newRoot(String name) {
    try {
      Path root =
          Files.createTempDirectory(
              "fencing-" + name.replaceAll("[^A-Za-z0-9_-]", "_") + "-",
              PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      handOver(root);
      return root;
    } catch (IOException e) {
      throw new UncheckedIOException("could not create a folder for " + name, e);
    }
  }

  /** Gives {@code path} to the servers' OS user when running as root. */
  static void handOver(Path path) throws IOException {
    if (isRoot()) {
      UserPrincipal owner =
          path.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(OS_USER);
      Files.setOwner(path, owner);
    }
  }

  static boolean isZombie(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      String[] fields = stat.substring(stat.lastIndexOf(')') + 1).trim().split(" ");
      return fields.length > 0 && fields[0].equals("Z");
    } catch (IOException | RuntimeException e) {
      return true; // gone
    }
  }
}
