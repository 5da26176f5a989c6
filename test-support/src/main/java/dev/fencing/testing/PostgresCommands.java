package dev.fencing.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a {@link PostgresServer} tells PostgreSQL: the command lines of {@code initdb}, {@code
 * pg_ctl} and {@code pg_basebackup} (programs of {@link Programs#binaries()}), the settings every
 * server starts from, and the lines appended to a server's {@code postgresql.conf}.
 */
final class PostgresCommands {
  private PostgresCommands() {}

  /** A new cluster in {@code data}: superuser {@link PostgresServer#USER}, trust, UTF-8, C. */
  static List<String> initdb(Path data) {
    return List.of(
        Programs.tool("initdb").toString(),
        "-D",
        data.toString(),
        "-U",
        PostgresServer.USER,
        "--auth=trust",
        "--no-sync",
        "--encoding=UTF8",
        "--locale=C");
  }

  /** The settings of a new server before its own: streaming replication enabled, small memory. */
  static Map<String, String> defaults() {
    Map<String, String> all = new LinkedHashMap<>();
    all.put("wal_level", "replica");
    all.put("max_wal_senders", "10");
    all.put("max_replication_slots", "10");
    all.put("wal_keep_size", "256MB");
    all.put("hot_standby", "on");
    all.put("shared_buffers", "16MB");
    all.put("max_connections", "40");
    all.put("fsync", "on");
    all.put("synchronous_commit", "on");
    all.put("full_page_writes", "on");
    return all;
  }

  /**
   * {@code pg_ctl start -w}: returns once the server accepts connections, or after {@code wait}.
   */
  static List<String> start(Path data, Path log, Duration wait) {
    return List.of(
        Programs.tool("pg_ctl").toString(),
        "start",
        "-w",
        "-t",
        Long.toString(wait.toSeconds()),
        "-D",
        data.toString(),
        "-l",
        log.toString());
  }

  /** {@code pg_ctl stop -w -m mode}: {@code fast} or {@code immediate}. */
  static List<String> stop(Path data, String mode) {
    return List.of(
        Programs.tool("pg_ctl").toString(), "stop", "-w", "-m", mode, "-D", data.toString());
  }

  /**
   * {@code pg_basebackup} of the server on {@code port} into {@code target} (WAL streamed, fast
   * checkpoint); with {@code standby}, set up to stream from it ({@code -R}).
   */
  static List<String> baseBackup(int port, Path target, boolean standby) {
    List<String> command =
        new ArrayList<>(
            List.of(
                Programs.tool("pg_basebackup").toString(),
                "-h",
                "127.0.0.1",
                "-p",
                Integer.toString(port),
                "-U",
                PostgresServer.USER,
                "-D",
                target.toString(),
                "-X",
                "stream",
                "-c",
                "fast",
                "--no-sync"));
    if (standby) {
      command.add("-R");
    }
    return command;
  }

  /**
   * Appends {@code settings} to {@code data}'s {@code postgresql.conf}, then the server's address:
   * 127.0.0.1 and {@code port}, its socket in {@code socketDirectory}.
   */
  static void configure(Path data, Path socketDirectory, int port, Map<String, String> settings)
      throws IOException {
    Map<String, String> all = new LinkedHashMap<>(settings);
    all.put("listen_addresses", "'127.0.0.1'");
    all.put("port", Integer.toString(port));
    all.put("unix_socket_directories", "'" + socketDirectory + "'");
    StringBuilder conf = new StringBuilder("\n# dev.fencing.testing.PostgresServer\n");
    all.forEach((key, value) -> conf.append(key).append(" = ").append(value).append('\n'));
    Files.writeString(
        data.resolve("postgresql.conf"),
        conf.toString(),
        StandardCharsets.UTF_8,
        StandardOpenOption.APPEND);
  }
}
