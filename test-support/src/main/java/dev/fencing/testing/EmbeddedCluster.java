package dev.fencing.testing;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A dedicated embedded PostgreSQL (zonky) for fault-injection tests: it can be {@linkplain #crash()
 * killed hard} and {@linkplain #restart() restarted} on the same data directory, where crash
 * recovery replays the WAL. It is never the {@linkplain TestPostgres shared test server}.
 *
 * <p>The server runs with {@code fsync=on}, {@code synchronous_commit=on} and {@code
 * full_page_writes=on} (zonky's defaults turn the first two off), so a transaction whose commit
 * returned survives {@link #crash()}. Its data directory lives in a fresh temporary folder that
 * {@link #close()} deletes. Connect as user {@code postgres}, without a password; the database
 * {@code postgres} exists.
 *
 * <pre>{@code
 * try (EmbeddedCluster cluster = EmbeddedCluster.start()) {
 *   DataSource ds = cluster.dataSource("postgres");
 *   ... commit something ...
 *   cluster.crash();
 *   cluster.restart();
 *   ... it is still there ...
 * }
 * }</pre>
 */
public final class EmbeddedCluster implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedCluster.class);
  private static final String USER = "postgres";
  private static final Duration STARTUP_WAIT = Duration.ofSeconds(60);
  private static final Duration KILL_WAIT = Duration.ofSeconds(30);

  private final Path directory;
  private final Path dataDirectory;
  private final Thread shutdownHook;
  private @Nullable EmbeddedPostgres postgres;
  private int port;
  private boolean closed;

  private EmbeddedCluster(Path directory) {
    this.directory = directory;
    this.dataDirectory = directory.resolve("data");
    this.shutdownHook = new Thread(this::close, "fencing-embedded-cluster-stop");
  }

  /**
   * Initialises a new cluster in a fresh temporary folder and starts it on a free port.
   *
   * @throws IllegalStateException if it cannot be started
   */
  public static EmbeddedCluster start() {
    Path directory;
    try {
      directory = Files.createTempDirectory("fencing-cluster-");
    } catch (IOException e) {
      throw new UncheckedIOException("Could not create a directory for the cluster", e);
    }
    EmbeddedCluster cluster = new EmbeddedCluster(directory);
    try {
      cluster.launch(0);
    } catch (RuntimeException e) {
      Processes.deleteRecursively(directory);
      throw e;
    }
    Runtime.getRuntime().addShutdownHook(cluster.shutdownHook);
    return cluster;
  }

  /** The port the server listens on (the same across {@link #restart()} whenever it is free). */
  public synchronized int port() {
    return port;
  }

  /** JDBC URL of {@code database}, including {@code user=postgres}. */
  public synchronized String jdbcUrl(String database) {
    return "jdbc:postgresql://localhost:" + port + "/" + database + "?user=" + USER;
  }

  /**
   * A new, unpooled data source for {@code database} as user {@code postgres}. It is bound to the
   * current {@link #port()}; take a new one after {@link #restart()} if the port changed.
   */
  public synchronized DataSource dataSource(String database) {
    PGSimpleDataSource dataSource = new PGSimpleDataSource();
    dataSource.setServerNames(new String[] {"localhost"});
    dataSource.setPortNumbers(new int[] {port});
    dataSource.setDatabaseName(database);
    dataSource.setUser(USER);
    return dataSource;
  }

  /**
   * Kills the server hard, as a power cut would: {@code SIGKILL} to the postmaster and every
   * process it started, then waits until all of them are gone. Nothing is flushed or shut down
   * cleanly. Connections to it break. Call {@link #restart()} to bring it back.
   *
   * @throws IllegalStateException if it is not running or its processes do not go away
   */
  public synchronized void crash() {
    EmbeddedPostgres running = requireRunning();
    long postmasterPid = readPostmasterPid();
    ProcessHandle postmaster =
        ProcessHandle.of(postmasterPid)
            .orElseThrow(() -> new IllegalStateException("No postmaster process " + postmasterPid));
    // Frozen first, the postmaster forks nothing more: every process it started is listed below.
    Programs.freeze(postmasterPid);
    List<ProcessHandle> victims = new ArrayList<>();
    victims.add(postmaster);
    postmaster.descendants().forEach(victims::add);
    // The postmaster first, then its children.
    victims.forEach(ProcessHandle::destroyForcibly);
    awaitGone(victims);
    LOG.info(
        "Crashed the embedded cluster on port {}: killed postmaster {} and {} other processes",
        port,
        postmasterPid,
        victims.size() - 1);
    // All its processes are dead, so its lock files are stale. A killed process can linger a
    // while as a zombie until its new parent reaps it, and PostgreSQL takes a lock file naming
    // a zombie for a live server's: delete them rather than wait for the reaper.
    try {
      Files.deleteIfExists(dataDirectory.resolve("postmaster.pid"));
      Files.deleteIfExists(directory.resolve(".s.PGSQL." + port + ".lock"));
    } catch (IOException e) {
      throw new UncheckedIOException("Could not delete the stale lock files", e);
    }
    // Releases zonky's lock on the data directory; its "pg_ctl stop" fails, as there is no
    // server left to stop (zonky logs that as an error, which is expected here).
    LOG.info("Releasing the crashed instance; zonky's 'Could not stop postmaster' is expected");
    closeQuietly(running);
    postgres = null;
  }

  /**
   * Starts the server again on the same data directory, after {@link #crash()} (PostgreSQL then
   * runs crash recovery) or while running (then it is stopped cleanly first). It keeps the same
   * port if that is still free, else it takes another one (see {@link #port()}).
   *
   * @throws IllegalStateException if it cannot be started or the cluster is closed
   */
  public synchronized void restart() {
    if (closed) {
      throw new IllegalStateException("The cluster is closed");
    }
    EmbeddedPostgres running = postgres;
    if (running != null) {
      postgres = null;
      closeQuietly(running);
    }
    int previous = port;
    if (isFree(previous)) {
      launch(previous);
    } else {
      LOG.warn("Port {} is taken; restarting the embedded cluster on another port", previous);
      launch(0);
    }
  }

  /** Stops the server (if running) and deletes its data directory. Closing twice is harmless. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    EmbeddedPostgres running = postgres;
    postgres = null;
    if (running != null) {
      closeQuietly(running);
    }
    Processes.deleteRecursively(directory);
    try {
      Runtime.getRuntime().removeShutdownHook(shutdownHook);
    } catch (IllegalStateException e) {
      // the JVM is already shutting down (maybe this is the hook)
    }
  }

  @Override
  public synchronized String toString() {
    return "EmbeddedCluster[port " + port + ", " + dataDirectory + "]";
  }

  private void launch(int wantedPort) {
    try {
      EmbeddedPostgres started =
          EmbeddedPostgres.builder()
              .setDataDirectory(dataDirectory)
              .setCleanDataDirectory(false)
              .setPort(wantedPort)
              .setPGStartupWait(STARTUP_WAIT)
              .setRegisterShutdownHook(false)
              .setServerConfig("fsync", "on")
              .setServerConfig("synchronous_commit", "on")
              .setServerConfig("full_page_writes", "on")
              // our own socket directory: its lock file must not outlive a crash in /tmp
              .setServerConfig("unix_socket_directories", directory.toString())
              .start();
      postgres = started;
      port = started.getPort();
      LOG.info("Embedded cluster running on port {} with data in {}", port, dataDirectory);
    } catch (IOException e) {
      throw new IllegalStateException("Could not start the embedded cluster in " + directory, e);
    }
  }

  private EmbeddedPostgres requireRunning() {
    EmbeddedPostgres running = postgres;
    if (running == null) {
      throw new IllegalStateException(closed ? "The cluster is closed" : "The cluster is down");
    }
    return running;
  }

  private long readPostmasterPid() {
    Path pidFile = dataDirectory.resolve("postmaster.pid");
    try (Stream<String> lines = Files.lines(pidFile, StandardCharsets.US_ASCII)) {
      String first =
          lines.findFirst().orElseThrow(() -> new IllegalStateException("Empty " + pidFile)).trim();
      return Long.parseLong(first);
    } catch (IOException e) {
      throw new UncheckedIOException("Could not read " + pidFile, e);
    }
  }

  /** The fields of /proc/PID/stat after the command name, or none if unreadable. */
  private static String[] procStat(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      int end = stat.lastIndexOf(')');
      return end < 0 ? new String[0] : stat.substring(end + 1).trim().split(" ");
    } catch (IOException | RuntimeException e) {
      return new String[0];
    }
  }

  /**
   * Waits until every process has exited. A zombie (dead, not yet reaped by its new parent) counts
   * as gone: it holds no files, memory or ports.
   */
  private static void awaitGone(List<ProcessHandle> processes) {
    long deadline = System.nanoTime() + KILL_WAIT.toNanos();
    for (ProcessHandle process : processes) {
      while (true) {
        try {
          process.onExit().get(100, TimeUnit.MILLISECONDS);
          break;
        } catch (TimeoutException e) {
          String[] stat = procStat(process.pid());
          if (stat.length > 0 && stat[0].equals("Z")) {
            break;
          }
          if (System.nanoTime() > deadline) {
            throw new IllegalStateException(
                "Process " + process.pid() + " still alive " + KILL_WAIT + " after SIGKILL", e);
          }
        } catch (ExecutionException e) {
          throw new IllegalStateException("Waiting for process " + process.pid() + " failed", e);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("Interrupted waiting for the postgres processes", e);
        }
      }
    }
  }

  private static boolean isFree(int port) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static void closeQuietly(EmbeddedPostgres instance) {
    try {
      instance.close();
    } catch (IOException | RuntimeException e) {
      LOG.warn("Could not close the embedded PostgreSQL instance", e);
    }
  }
}
