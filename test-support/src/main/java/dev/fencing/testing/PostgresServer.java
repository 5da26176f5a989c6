package dev.fencing.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntSupplier;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A PostgreSQL server of the machine's own installation ({@code initdb}, {@code pg_ctl}, {@code
 * pg_basebackup} from {@code /usr/lib/postgresql/<major>/bin} or {@code pg_config --bindir}), for
 * tests of replication, failover and restores. It listens on 127.0.0.1 only, on a free port (if
 * another process takes the port between its choice and the server's start, a new server starts on
 * another: {@link #PORT_ATTEMPTS}), with its data, socket and log in a temporary folder of its own
 * that {@link #close()} deletes; trust authentication for the superuser {@code postgres}. When the
 * tests run as root, the server's programs run as the operating-system user {@code postgres}
 * (PostgreSQL refuses root).
 *
 * <p>Waits are bounded and poll observable state (the server's answer to a query, {@code pg_ctl
 * -w}); nothing sleeps for a guessed time. See {@link StreamingPair} for a primary with a standby.
 */
public final class PostgresServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PostgresServer.class);

  /** The superuser of every server. */
  public static final String USER = "postgres";

  /** The longest any wait of these servers takes before it fails. */
  public static final Duration WAIT = Duration.ofSeconds(90);

  /** How many ports a new server tries when the one chosen was taken before it could bind it. */
  static final int PORT_ATTEMPTS = 5;

  private final String name;
  private final Path root;
  private final Path data;
  private final IntSupplier ports;
  private int port;
  private boolean running;
  private boolean closed;

  private PostgresServer(String name, Path root, IntSupplier ports) {
    this.name = name;
    this.root = root;
    this.data = root.resolve("data");
    this.ports = ports;
    this.port = ports.getAsInt();
  }

  /**
   * Initialises a new cluster ({@code initdb}) and starts it. {@code settings} go to its {@code
   * postgresql.conf} after the defaults of these servers (streaming replication enabled, small
   * memory).
   */
  public static PostgresServer create(String name, Map<String, String> settings) {
    return create(name, settings, Processes::freePort);
  }

  /** {@link #create(String, Map)} on the ports {@code ports} hands out (tests). */
  static PostgresServer create(String name, Map<String, String> settings, IntSupplier ports) {
    return new PostgresServer(name, Programs.newRoot(name), ports).init(settings);
  }

  private PostgresServer init(Map<String, String> settings) {
    PostgresServer server = this;
    try {
      server.exec(PostgresCommands.initdb(server.data));
      Map<String, String> all = PostgresCommands.defaults();
      all.putAll(settings);
      server.configure(all);
      server.startNew();
      return server;
    } catch (RuntimeException e) {
      server.close();
      throw e;
    }
  }

  /**
   * {@link #create} with WAL archiving on: every completed WAL segment is copied to {@link
   * #archive()}, from where a {@linkplain #fromBackup restored backup} recovers to a point in time.
   */
  public static PostgresServer createArchiving(String name) {
    PostgresServer server = new PostgresServer(name, Programs.newRoot(name), Processes::freePort);
    try {
      Files.createDirectory(server.archive());
      Programs.handOver(server.archive());
    } catch (IOException e) {
      server.close();
      throw new UncheckedIOException(e);
    }
    return server.init(
        Map.of("archive_mode", "on", "archive_command", "'cp %p " + server.archive() + "/%f'"));
  }

  /** Where {@link #createArchiving} archives WAL. */
  public Path archive() {
    return root.resolve("archive");
  }

  /**
   * A server on a copy of {@code backup} (a base backup's data directory, which is copied, so the
   * backup can serve again). {@code settings} are appended to its configuration; with {@code
   * recovery}, a {@code recovery.signal} makes it run archive recovery (PITR) before it opens.
   */
  public static PostgresServer fromBackup(
      String name, Path backup, Map<String, String> settings, boolean recovery) {
    PostgresServer server = new PostgresServer(name, Programs.newRoot(name), Processes::freePort);
    try {
      server.exec(List.of("cp", "-a", backup.toString(), server.data.toString()));
      if (recovery) {
        server.exec(List.of("touch", server.data.resolve("recovery.signal").toString()));
      }
      server.configure(settings);
      server.startNew();
      return server;
    } catch (RuntimeException e) {
      server.close();
      throw e;
    }
  }

  /**
   * A base backup of this server ({@code pg_basebackup}, WAL streamed, fast checkpoint) in a new
   * folder of this server's; with {@code standby}, it is set up to stream from this server ({@code
   * -R}). Returns the backup's data directory.
   */
  public Path baseBackup(String backupName, boolean standby) {
    Path target = root.resolve(backupName);
    baseBackupInto(target, standby);
    return target;
  }

  /**
   * A standby of this server, started: a base backup streaming from it ({@code pg_basebackup -R}),
   * in a folder of its own. It is in hot standby, connected for streaming, when this returns.
   */
  public PostgresServer standby(String standbyName, Map<String, String> settings) {
    PostgresServer standby =
        new PostgresServer(standbyName, Programs.newRoot(standbyName), Processes::freePort);
    try {
      baseBackupInto(standby.data, true);
      standby.configure(settings);
      standby.startNew();
      return standby;
    } catch (RuntimeException e) {
      standby.close();
      throw e;
    }
  }

  private void baseBackupInto(Path target, boolean standby) {
    exec(PostgresCommands.baseBackup(port, target, standby));
  }

  /** The server's name (for logs and errors). */
  public String name() {
    return name;
  }

  /** The port it listens on, at 127.0.0.1. */
  public int port() {
    return port;
  }

  /** Its folder: data directory {@code data}, socket, log, backups. */
  public Path root() {
    return root;
  }

  /** JDBC URL of {@code database} as the superuser. */
  public String jdbcUrl(String database) {
    return "jdbc:postgresql://127.0.0.1:" + port + "/" + database + "?user=" + USER;
  }

  /** A new connection to {@code database} as {@code user} (trust: no password). */
  public Connection connect(String database, String user) throws SQLException {
    return DriverManager.getConnection(
        "jdbc:postgresql://127.0.0.1:" + port + "/" + database + "?user=" + user);
  }

  /** A new connection to {@code database} as the superuser. */
  public Connection connect(String database) throws SQLException {
    return connect(database, USER);
  }

  /** Starts it ({@code pg_ctl start -w}): returns once it accepts connections. */
  public synchronized void start() {
    requireOpen();
    exec(PostgresCommands.start(data, root.resolve("server.log"), WAIT));
    running = true;
  }

  /**
   * Starts a new server: if its port was taken (by another process, since it was chosen free) it
   * starts on the next one {@link #ports} hands out, up to {@link #PORT_ATTEMPTS} ports. The
   * server's refusal to bind says so, no probing. A restart keeps the port: standbys follow it.
   */
  private void startNew() {
    for (int attempt = 1; ; attempt++) {
      try {
        start();
        return;
      } catch (IllegalStateException e) {
        if (attempt == PORT_ATTEMPTS || !portTaken()) {
          throw e;
        }
        int taken = port;
        port = ports.getAsInt();
        configure(Map.of()); // the last port line of postgresql.conf wins
        LOG.warn(
            "{}: port {} was taken before the server could bind it; trying {}", name, taken, port);
      }
    }
  }

  /** Whether the failed start's log says its port is in use; keeps that log aside. */
  private boolean portTaken() {
    Path log = root.resolve("server.log");
    try {
      if (!Files.exists(log)) {
        return false;
      }
      boolean taken = Files.readString(log).contains("Address already in use");
      Files.move(log, root.resolve("server.log.port-" + port));
      return taken;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Stops it cleanly ({@code pg_ctl stop -m fast}). */
  public synchronized void stop() {
    if (running) {
      exec(PostgresCommands.stop(data, "fast"));
      running = false;
    }
  }

  /**
   * Kills it hard, as a power cut would: {@code SIGKILL} to the postmaster and all its processes.
   * {@link #start()} then runs crash recovery.
   */
  public synchronized void crash() {
    long pid = postmasterPid();
    ProcessHandle postmaster =
        ProcessHandle.of(pid).orElseThrow(() -> new IllegalStateException("no postmaster " + pid));
    Programs.killAll(postmaster, WAIT);
    try {
      // its owner is dead; a lingering zombie would make PostgreSQL take them for a live server's
      Files.deleteIfExists(data.resolve("postmaster.pid"));
      Files.deleteIfExists(root.resolve(".s.PGSQL." + port + ".lock"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    running = false;
    LOG.info("crashed {} (postmaster {})", name, pid);
  }

  /** Runs {@code sql} as the superuser in database {@code postgres}. */
  public void execute(String sql) {
    try (Connection c = connect("postgres");
        Statement s = c.createStatement()) {
      s.execute(sql);
    } catch (SQLException e) {
      throw new IllegalStateException(name + ": " + sql + ": " + e.getMessage(), e);
    }
  }

  /** The first column of the first row of {@code sql} (database {@code postgres}), as text. */
  public @Nullable String query(String sql) {
    try (Connection c = connect("postgres");
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      return rs.next() ? rs.getString(1) : null;
    } catch (SQLException e) {
      throw new IllegalStateException(name + ": " + sql + ": " + e.getMessage(), e);
    }
  }

  /**
   * Polls {@code sql} (database {@code postgres}) until it returns {@code true}, for at most {@link
   * #WAIT}.
   *
   * @throws IllegalStateException naming {@code what} if it never does
   */
  public void awaitTrue(String sql, String what) {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (!"t".equals(query(sql))) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(name + ": " + what + " did not happen within " + WAIT);
      }
      Thread.onSpinWait();
    }
  }

  /**
   * Runs one of PostgreSQL's client programs (e.g. {@code pg_dump}) with {@code arguments} as the
   * server's operating-system user; fails with its output unless it exits with 0. Returns its
   * standard output.
   */
  public String runTool(String tool, List<String> arguments) {
    List<String> command = new ArrayList<>();
    command.add(Programs.tool(tool).toString());
    command.addAll(arguments);
    return exec(command);
  }

  /** Stops it (if running) and deletes its folder. Closing twice is harmless. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    try {
      if (running) {
        try {
          exec(PostgresCommands.stop(data, "immediate"));
        } catch (RuntimeException e) {
          LOG.warn("could not stop {}: {}", name, e.getMessage());
        }
        running = false;
      }
    } finally {
      closed = true;
      Processes.deleteRecursively(root);
    }
  }

  @Override
  public String toString() {
    return "PostgresServer[" + name + ", port " + port + ", " + root + "]";
  }

  private void configure(Map<String, String> settings) {
    try {
      PostgresCommands.configure(data, root, port, settings);
    } catch (IOException e) {
      throw new UncheckedIOException("could not configure " + name, e);
    }
  }

  private long postmasterPid() {
    try (Stream<String> lines = Files.lines(data.resolve("postmaster.pid"))) {
      return Long.parseLong(lines.findFirst().orElseThrow().trim());
    } catch (IOException e) {
      throw new UncheckedIOException(name + " has no postmaster.pid", e);
    }
  }

  private void requireOpen() {
    if (closed) {
      throw new IllegalStateException(name + " is closed");
    }
  }

  /** Runs {@code command} as the server's OS user; returns its standard output. */
  private String exec(List<String> command) {
    return Programs.run(name, root, command, WAIT);
  }
}
