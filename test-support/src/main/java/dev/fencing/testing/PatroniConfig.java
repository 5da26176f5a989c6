package dev.fencing.testing;

import java.nio.file.Path;

/**
 * The settings of a {@link PatroniCluster} and the YAML Patroni reads for each node.
 *
 * <p>The defaults make failover fast and certain on loopback: a leader key of 10 s ({@code ttl}), a
 * 1 s HA loop, {@code primary_start_timeout: 0} (a crashed primary's Patroni fails over at once
 * instead of restarting it in place) and a {@code maximum_lag_on_failover} of 1 GiB (the replica is
 * promoted however far behind it is: asynchronous replication, losses included).
 *
 * @param scope the cluster's name in etcd (unique per cluster: several may share one etcd)
 * @param ttlSeconds the leader key's time to live
 * @param loopWaitSeconds the HA loop's period
 * @param retryTimeoutSeconds how long Patroni retries etcd and PostgreSQL operations
 * @param maximumLagOnFailover bytes a replica may lag and still be promoted
 * @param primaryStartTimeoutSeconds how long a crashed primary may recover before failover
 * @param binDirectory PostgreSQL's programs ({@code initdb}, {@code postgres}, {@code pg_rewind})
 */
public record PatroniConfig(
    String scope,
    int ttlSeconds,
    int loopWaitSeconds,
    int retryTimeoutSeconds,
    long maximumLagOnFailover,
    int primaryStartTimeoutSeconds,
    Path binDirectory) {

  /** Debian's PostgreSQL 15 programs; {@code FENCING_TEST_PG_BIN} names another directory. */
  public static final Path DEFAULT_BIN =
      Path.of(System.getenv().getOrDefault("FENCING_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"));

  public PatroniConfig {
    if (!scope.matches("[a-z0-9-]{1,40}")) {
      throw new IllegalArgumentException(
          "scope must be 1 to 40 of a-z, 0-9 and -, was '" + scope + "'");
    }
    if (loopWaitSeconds < 1 || retryTimeoutSeconds < 1) {
      throw new IllegalArgumentException("loopWait and retryTimeout must be at least 1 s");
    }
    if (loopWaitSeconds + 2 * retryTimeoutSeconds > ttlSeconds) {
      throw new IllegalArgumentException(
          "Patroni needs loop_wait + 2 * retry_timeout <= ttl, was "
              + loopWaitSeconds
              + " + 2 * "
              + retryTimeoutSeconds
              + " > "
              + ttlSeconds);
    }
    if (maximumLagOnFailover < 0 || primaryStartTimeoutSeconds < 0) {
      throw new IllegalArgumentException(
          "maximumLagOnFailover and primaryStartTimeout must not be negative");
    }
  }

  /** The defaults described above, with scope {@code fencing-<random>}. */
  public static PatroniConfig defaults() {
    return new PatroniConfig(
        "fencing-" + Long.toString(System.nanoTime() & 0xffffffffL, 36),
        10,
        1,
        4,
        1L << 30,
        0,
        DEFAULT_BIN);
  }

  /** This configuration with another PostgreSQL program directory. */
  public PatroniConfig withBinDirectory(Path directory) {
    return new PatroniConfig(
        scope,
        ttlSeconds,
        loopWaitSeconds,
        retryTimeoutSeconds,
        maximumLagOnFailover,
        primaryStartTimeoutSeconds,
        directory);
  }

  /** Patroni's YAML for one node. */
  String yaml(String name, int pgPort, int restPort, String etcd, Path nodeDirectory) {
    return """
        scope: %1$s
        name: %2$s
        log:
          level: WARNING
        restapi:
          listen: 127.0.0.1:%4$d
          connect_address: 127.0.0.1:%4$d
        etcd3:
          hosts: %5$s
        bootstrap:
          dcs:
            ttl: %6$d
            loop_wait: %7$d
            retry_timeout: %8$d
            maximum_lag_on_failover: %9$d
            primary_start_timeout: %10$d
            postgresql:
              use_pg_rewind: true
              use_slots: true
              parameters:
                wal_level: replica
                hot_standby: 'on'
                wal_log_hints: 'on'
                max_wal_senders: 5
                max_replication_slots: 5
                synchronous_commit: 'on'
          initdb:
          - encoding: UTF8
          - auth: trust
          pg_hba:
          - host replication replicator 127.0.0.1/32 trust
          - host all all 127.0.0.1/32 trust
          - local all all trust
        postgresql:
          listen: 127.0.0.1:%3$d
          connect_address: 127.0.0.1:%3$d
          data_dir: %11$s/data
          bin_dir: %12$s
          pgpass: %11$s/pgpass
          authentication:
            replication: {username: replicator, password: replicator}
            superuser: {username: postgres, password: postgres}
            rewind: {username: postgres, password: postgres}
          parameters:
            unix_socket_directories: '%11$s'
            fsync: 'on'
        """
        .formatted(
            scope,
            name,
            pgPort,
            restPort,
            etcd,
            ttlSeconds,
            loopWaitSeconds,
            retryTimeoutSeconds,
            maximumLagOnFailover,
            primaryStartTimeoutSeconds,
            nodeDirectory,
            binDirectory);
  }
}
