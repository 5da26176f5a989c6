package dev.fencing.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.function.IntSupplier;
import java.util.function.Predicate;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A two-node Patroni cluster on loopback for failover tests: one etcd ({@link EtcdServer}), two
 * Patroni processes (Debian package {@code patroni}) managing PostgreSQL servers from {@link
 * PatroniConfig#binDirectory()} with asynchronous streaming replication, free ports, and a
 * temporary folder that {@link #close()} deletes. Node 0 bootstraps and leads; node 1 is its
 * replica.
 *
 * <p>Faults: {@link #cutReplication()} stops the replica's WAL receiver (SIGSTOP), so the primary
 * goes on committing what the replica never receives; {@link #killLeader()} kills the leader's
 * postmaster and every server process hard (SIGKILL), and the WAL receiver with it if it was cut
 * off; Patroni then promotes the replica ({@link #awaitLeaderOtherThan(Node, Duration)}).
 * PostgreSQL refuses to run as root: a root JVM runs Patroni as user {@code postgres} (through
 * {@code runuser}).
 *
 * <pre>{@code
 * try (PatroniCluster cluster = PatroniCluster.start()) {
 *   DataSource primary = cluster.dataSource("postgres"); // targetServerType=primary
 *   PatroniCluster.Node old = cluster.killLeader();
 *   PatroniCluster.Node promoted = cluster.awaitLeaderOtherThan(old, Duration.ofSeconds(60));
 * }
 * }</pre>
 */
public final class PatroniCluster implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PatroniCluster.class);
  private static final Duration PATIENCE = Duration.ofSeconds(90);

  /** How many times a node is launched on new ports when one it was given was taken meanwhile. */
  static final int PORT_ATTEMPTS = 5;

  private final PatroniConfig config;
  private final IntSupplier ports;
  private final EtcdServer etcd;
  private final Path directory;
  private final List<Node> nodes = new ArrayList<>();
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private final Thread shutdownHook = new Thread(this::close, "fencing-patroni-cluster-stop");
  private @Nullable Long cutReceiver;
  private boolean closed;

  private PatroniCluster(PatroniConfig config, EtcdServer etcd, Path directory, IntSupplier ports) {
    this.config = config;
    this.ports = ports;
    this.etcd = etcd;
    this.directory = directory;
  }

  /** {@link #start(PatroniConfig)} with {@link PatroniConfig#defaults()}. */
  public static PatroniCluster start() {
    return start(PatroniConfig.defaults());
  }

  /**
   * Starts etcd, node 0 (waits until it is the primary), node 1 (waits until it streams from node
   * 0).
   *
   * @throws IllegalStateException if Patroni, etcd or PostgreSQL is missing or does not come up
   */
  public static PatroniCluster start(PatroniConfig config) {
    return start(config, Processes::freePort);
  }

  /** {@link #start(PatroniConfig)} with the nodes' ports from {@code ports} (tests). */
  static PatroniCluster start(PatroniConfig config, IntSupplier ports) {
    String missing = missing(config);
    if (missing != null) {
      throw new IllegalStateException(missing);
    }
    PatroniCluster cluster;
    try {
      Path directory = Files.createTempDirectory("fencing-patroni-");
      cluster = new PatroniCluster(config, EtcdServer.start(), directory, ports);
    } catch (IOException e) {
      throw new UncheckedIOException("could not prepare the Patroni cluster", e);
    }
    // Patroni and PostgreSQL outlive a JVM that ends without close()
    Runtime.getRuntime().addShutdownHook(cluster.shutdownHook);
    try {
      cluster.launch("node0", n -> n.answers("/primary") && !n.inRecovery(), "become primary");
      cluster.launch(
          "node1", n -> n.answers("/replica") && n.streams(), "become a streaming replica");
    } catch (RuntimeException e) {
      cluster.close();
      throw e;
    }
    return cluster;
  }

  /** Why a cluster cannot start here ({@code patroni}, etcd or PostgreSQL missing), or null. */
  public static @Nullable String missing(PatroniConfig config) {
    if (Processes.onPath("patroni").isEmpty()) {
      return "no patroni on the PATH: install the Debian package patroni (.ci/run does)";
    }
    if (!EtcdServer.available()) {
      return "no etcd: install the Debian package etcd-server (.ci/run does)";
    }
    if (!Files.isExecutable(config.binDirectory().resolve("postgres"))) {
      return "no PostgreSQL programs in "
          + config.binDirectory()
          + " (set FENCING_TEST_PG_BIN to a PostgreSQL bin directory)";
    }
    return null;
  }

  /** Both nodes, node 0 first. */
  public List<Node> nodes() {
    return List.copyOf(nodes);
  }

  /**
   * A multi-host JDBC URL of {@code database} naming both nodes, with {@code
   * targetServerType=primary}: pgjdbc connects to whichever is the primary now.
   */
  public String jdbcUrl(String database) {
    StringBuilder hosts = new StringBuilder();
    for (Node n : nodes) {
      hosts.append(hosts.length() == 0 ? "" : ",").append("127.0.0.1:").append(n.port);
    }
    return "jdbc:postgresql://"
        + hosts
        + "/"
        + database
        + "?user=postgres&targetServerType=primary&connectTimeout=5&hostRecheckSeconds=2";
  }

  /** An unpooled data source of {@link #jdbcUrl(String)}. */
  public DataSource dataSource(String database) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(jdbcUrl(database));
    return ds;
  }

  /** The node whose Patroni says it is the primary; waits for one. */
  public Node leader() {
    return awaitLeaderOtherThan(null, PATIENCE);
  }

  /**
   * Waits until a node other than {@code old} is the primary, by its Patroni's REST API ({@code
   * /primary} answers 200) and by PostgreSQL ({@code pg_is_in_recovery()} is false).
   *
   * @throws IllegalStateException if none is within {@code wait}
   */
  public Node awaitLeaderOtherThan(@Nullable Node old, Duration wait) {
    Node[] found = {null};
    boolean ok =
        Processes.poll(
            wait,
            () -> {
              for (Node n : nodes) {
                if (n != old && n.answers("/primary") && !n.inRecovery()) {
                  found[0] = n;
                  return true;
                }
              }
              return false;
            });
    if (!ok || found[0] == null) {
      StringBuilder logs = new StringBuilder();
      nodes.forEach(n -> logs.append("\n--- ").append(n.name).append(":\n").append(n.log()));
      throw new IllegalStateException(
          "no primary" + (old == null ? "" : " other than " + old.name) + " within " + wait + logs);
    }
    for (Node n : nodes) {
      if (n.patroni.died() && !closed) {
        n.patroni.start(); // killed by killLeader(): rejoins as a replica of the new leader
      }
    }
    return found[0];
  }

  /**
   * Stops (SIGSTOP) the WAL receiver of the replica: from now on it receives nothing, and what the
   * primary commits is lost if it fails now. {@link #killLeader()} ends the stopped receiver.
   */
  public void cutReplication() {
    Node leader = leader();
    Node replica = nodes.stream().filter(n -> n != leader).findFirst().orElseThrow();
    // after a failover the old primary rejoins (pg_rewind) before it streams again
    if (!Processes.poll(PATIENCE, replica::streams)) {
      throw new IllegalStateException(replica.name + " does not stream:\n" + replica.log());
    }
    long pid = replica.queryLong("SELECT pid FROM pg_stat_wal_receiver");
    Processes.signal(pid, "STOP");
    cutReceiver = pid;
  }

  /**
   * Kills the leader's machine, as far as the cluster can tell: its postmaster and every process it
   * started, then its Patroni, with SIGKILL. A Patroni left running would restart its server, and
   * with more WAL than the cut-off replica it could win the leader race again (the failover this
   * fault is for would then not happen). A WAL receiver stopped by {@link #cutReplication()} is
   * then killed too (it must not read what is left in its socket): the replica's server restarts
   * it, finds no primary, and once the leader key expires Patroni promotes it. {@link
   * #awaitLeaderOtherThan} starts the killed node's Patroni again once another node leads, so it
   * rejoins as a replica (pg_rewind).
   *
   * @return the node that was the leader
   */
  public Node killLeader() {
    Node leader = leader();
    Processes.killTree(leader.patroni.postmasterPid(), PATIENCE);
    leader.patroni.kill(PATIENCE);
    Long receiver = cutReceiver;
    cutReceiver = null;
    if (receiver != null && ProcessHandle.of(receiver).isPresent()) {
      Processes.signal(receiver, "KILL");
    }
    return leader;
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      Runtime.getRuntime().removeShutdownHook(shutdownHook);
    } catch (IllegalStateException e) {
      // the JVM is shutting down (maybe this is the hook)
    }
    Long receiver = cutReceiver;
    if (receiver != null && ProcessHandle.of(receiver).isPresent()) {
      Processes.signal(receiver, "CONT");
    }
    for (Node n : nodes) {
      n.patroni.stop(PATIENCE);
    }
    etcd.close();
    Processes.deleteRecursively(directory);
  }

  /**
   * Launches node {@code name} and waits until it is {@code ready}. A port chosen free can be taken
   * by another process before PostgreSQL or Patroni's REST API binds it: the node's log then says
   * "Address already in use", and the node is launched afresh on new ports, up to {@link
   * #PORT_ATTEMPTS} times.
   */
  private Node launch(String name, Predicate<Node> ready, String what) {
    for (int attempt = 1; ; attempt++) {
      Path dir = directory.resolve(name);
      int port = ports.getAsInt();
      int restPort = ports.getAsInt();
      String yaml = config.yaml(name, port, restPort, etcd.hostAndPort(), dir);
      Node node = new Node(name, port, restPort, PatroniProcess.start(name, directory, dir, yaml));
      nodes.add(node);
      boolean[] portTaken = {false};
      boolean up =
          Processes.poll(
              PATIENCE,
              () ->
                  (portTaken[0] = node.patroni.logContains("Address already in use"))
                      || ready.test(node));
      if (up && !portTaken[0]) {
        return node;
      }
      if (!portTaken[0] || attempt == PORT_ATTEMPTS) {
        throw new IllegalStateException(name + " did not " + what + ":\n" + node.log());
      }
      LOG.warn("{}: a port was taken before it could bind it; launching it on new ports", node);
      nodes.remove(node);
      node.patroni.stop(PATIENCE);
      Processes.deleteRecursively(dir);
      if (nodes.isEmpty()) {
        forgetInEtcd();
      }
    }
  }

  /**
   * Deletes the cluster's keys in etcd (Patroni's, under {@code /service/<scope>/}) after a first
   * node's failed bootstrap: the initialize key it left would make the next one wait for a leader
   * that never comes.
   */
  private void forgetInEtcd() {
    String prefix = "/service/" + config.scope() + "/";
    String end = "/service/" + config.scope() + "0"; // '/' + 1: the end of the prefix's range
    Base64.Encoder b64 = Base64.getEncoder();
    String body =
        "{\"key\":\""
            + b64.encodeToString(prefix.getBytes(StandardCharsets.UTF_8))
            + "\",\"range_end\":\""
            + b64.encodeToString(end.getBytes(StandardCharsets.UTF_8))
            + "\"}";
    try {
      HttpResponse<String> response =
          http.send(
              HttpRequest.newBuilder(URI.create(etcd.endpoint() + "/v3/kv/deleterange"))
                  .timeout(Duration.ofSeconds(10))
                  .POST(HttpRequest.BodyPublishers.ofString(body))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        throw new IllegalStateException(
            "etcd refused to delete "
                + prefix
                + ": "
                + response.statusCode()
                + " "
                + response.body());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("could not delete " + prefix + " in etcd", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted deleting " + prefix + " in etcd", e);
    }
  }

  /** One node: a Patroni process and the PostgreSQL server it manages. */
  public final class Node {
    private final String name;
    private final int port;
    private final int restPort;
    private final PatroniProcess patroni;

    private Node(String name, int port, int restPort, PatroniProcess patroni) {
      this.name = name;
      this.port = port;
      this.restPort = restPort;
      this.patroni = patroni;
    }

    /** {@code node0} or {@code node1}. */
    public String name() {
      return name;
    }

    /** PostgreSQL's port. */
    public int port() {
      return port;
    }

    /** JDBC URL of {@code database} on this node only, as user {@code postgres}. */
    public String jdbcUrl(String database) {
      return "jdbc:postgresql://127.0.0.1:" + port + "/" + database + "?user=postgres";
    }

    /** An unpooled data source of this node only. */
    public DataSource dataSource(String database) {
      PGSimpleDataSource ds = new PGSimpleDataSource();
      ds.setURL(jdbcUrl(database));
      ds.setConnectTimeout(5);
      return ds;
    }

    /** Whether the server answers and is in recovery (a standby); false if it does not answer. */
    public boolean inRecovery() {
      try {
        return queryLong("SELECT pg_is_in_recovery()::int") == 1;
      } catch (IllegalStateException e) {
        return true;
      }
    }

    private boolean streams() {
      try {
        return queryLong("SELECT count(*) FROM pg_stat_wal_receiver WHERE status = 'streaming'")
            == 1;
      } catch (IllegalStateException e) {
        return false;
      }
    }

    private long queryLong(String sql) {
      try (Connection c = dataSource("postgres").getConnection();
          Statement s = c.createStatement();
          ResultSet rs = s.executeQuery(sql)) {
        if (!rs.next()) {
          throw new IllegalStateException(name + ": no row for " + sql);
        }
        return rs.getLong(1);
      } catch (SQLException e) {
        throw new IllegalStateException(name + ": " + sql + ": " + e.getMessage(), e);
      }
    }

    private boolean answers(String path) {
      HttpRequest request =
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + restPort + path))
              .timeout(Duration.ofSeconds(2))
              .build();
      try {
        return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
      } catch (IOException e) {
        return false;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }

    String log() {
      return patroni.log();
    }

    @Override
    public String toString() {
      return name + " (PostgreSQL 127.0.0.1:" + port + ", REST 127.0.0.1:" + restPort + ")";
    }
  }
}
