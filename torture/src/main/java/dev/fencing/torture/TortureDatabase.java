package dev.fencing.torture;

import dev.fencing.testing.EmbeddedCluster;
import dev.fencing.testing.PatroniCluster;
import java.time.Duration;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The PostgreSQL a torture run uses: an {@link EmbeddedCluster} it may crash and restart, a {@link
 * PatroniCluster} whose primary it may kill and fail over to the asynchronous replica, or a server
 * given by URL, which it never crashes.
 */
abstract sealed class TortureDatabase {
  private TortureDatabase() {}

  /** A cluster of this run's own, which the run may kill and restart. */
  static TortureDatabase embedded(EmbeddedCluster cluster) {
    return new Embedded(cluster);
  }

  /** A server given by URL; the password, if any, comes from {@code FENCING_DB_PASSWORD}. */
  static TortureDatabase external(String url) {
    return new External(url);
  }

  /**
   * A two-node Patroni cluster: the workers connect with a multi-host URL ({@code
   * targetServerType=primary}); a crash is a failover.
   */
  static TortureDatabase patroni(PatroniCluster cluster) {
    return new Patroni(cluster);
  }

  /** Whether {@link #cutReplication()} and {@link #killPrimaryAndAwaitPromotion()} are allowed. */
  boolean canFailOver() {
    return false;
  }

  /** Cuts the replica off: what the primary commits from now on never reaches it. */
  void cutReplication() {
    throw new UnsupportedOperationException("no replica to cut off: " + describe());
  }

  /**
   * Kills the primary's server processes hard (SIGKILL) and waits until the replica is promoted.
   *
   * @return what happened, in words
   */
  String killPrimaryAndAwaitPromotion() {
    throw new UnsupportedOperationException("no replica to promote: " + describe());
  }

  /** The JDBC URL the workers connect to. */
  abstract String url();

  /** A fresh data source for the harness itself. */
  abstract DataSource dataSource();

  /** Whether {@link #crashAndRestart()} is allowed. */
  abstract boolean canCrash();

  /** Kills PostgreSQL hard and starts it again on the same data and port. */
  abstract void crashAndRestart();

  abstract String describe();

  private static final class Embedded extends TortureDatabase {
    private final EmbeddedCluster cluster;

    Embedded(EmbeddedCluster cluster) {
      this.cluster = cluster;
    }

    @Override
    String url() {
      return cluster.jdbcUrl("postgres");
    }

    @Override
    DataSource dataSource() {
      return cluster.dataSource("postgres");
    }

    @Override
    boolean canCrash() {
      return true;
    }

    @Override
    void crashAndRestart() {
      int port = cluster.port();
      cluster.crash();
      cluster.restart();
      if (cluster.port() != port) {
        // The workers know only the old URL.
        throw new IllegalStateException(
            "the embedded PostgreSQL came back on port " + cluster.port() + " instead of " + port);
      }
    }

    @Override
    String describe() {
      return "embedded PostgreSQL (zonky) on port " + cluster.port() + ", killed and restarted";
    }
  }

  private static final class External extends TortureDatabase {
    private final String url;
    private final @Nullable String password = System.getenv("FENCING_DB_PASSWORD");

    External(String url) {
      this.url = url;
    }

    @Override
    String url() {
      return url;
    }

    @Override
    DataSource dataSource() {
      PGSimpleDataSource ds = new PGSimpleDataSource();
      ds.setURL(url);
      if (password != null) {
        ds.setPassword(password);
      }
      return ds;
    }

    @Override
    boolean canCrash() {
      return false;
    }

    @Override
    void crashAndRestart() {
      throw new UnsupportedOperationException("a server given by --url is never crashed");
    }

    @Override
    String describe() {
      return url.replaceAll("password=[^&]*", "password=***")
          + " (given by --url: PostgreSQL is never killed, that fault is skipped)";
    }
  }

  private static final class Patroni extends TortureDatabase {
    private static final Duration PROMOTION_WAIT = Duration.ofSeconds(90);
    private final PatroniCluster cluster;

    Patroni(PatroniCluster cluster) {
      this.cluster = cluster;
    }

    @Override
    String url() {
      return cluster.jdbcUrl("postgres");
    }

    @Override
    DataSource dataSource() {
      return cluster.dataSource("postgres");
    }

    @Override
    boolean canCrash() {
      return false;
    }

    @Override
    void crashAndRestart() {
      throw new UnsupportedOperationException("a Patroni cluster fails over instead");
    }

    @Override
    boolean canFailOver() {
      return true;
    }

    @Override
    void cutReplication() {
      cluster.cutReplication();
    }

    @Override
    String killPrimaryAndAwaitPromotion() {
      long start = System.nanoTime();
      PatroniCluster.Node killed = cluster.killLeader();
      PatroniCluster.Node promoted = cluster.awaitLeaderOtherThan(killed, PROMOTION_WAIT);
      return "killed "
          + killed.name()
          + "'s postmaster, "
          + promoted.name()
          + " promoted after "
          + (System.nanoTime() - start) / 1_000_000
          + " ms";
    }

    @Override
    String describe() {
      return "Patroni cluster of two nodes ("
          + cluster.nodes()
          + "), asynchronous replication, reached by "
          + cluster.jdbcUrl("postgres");
    }
  }
}
