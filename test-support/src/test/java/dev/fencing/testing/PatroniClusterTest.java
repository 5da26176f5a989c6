package dev.fencing.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The harness itself: a two-node Patroni cluster replicates, a cut-off replica misses what the
 * primary commits afterwards, and after the leader's postmaster is killed Patroni promotes the
 * replica, on a new timeline, without what it never received.
 */
class PatroniClusterTest {

  @Test
  void replicaPromotedAfterLeaderKilledLosesWhatItNeverReceived() throws Exception {
    try (PatroniCluster cluster = PatroniCluster.start()) {
      PatroniCluster.Node first = cluster.leader();
      assertThat(first.name()).isEqualTo("node0");
      DataSource primary = cluster.dataSource("postgres");
      execute(
          primary, "CREATE TABLE harness (id int PRIMARY KEY)", "INSERT INTO harness VALUES (1)");
      long timelineBefore = timeline(primary);
      PatroniCluster.Node replica = cluster.nodes().get(1);
      assertThat(
              Processes.poll(
                  Duration.ofSeconds(30),
                  () -> {
                    try {
                      return ids(replica.dataSource("postgres")).contains(1);
                    } catch (SQLException e) {
                      return false;
                    }
                  }))
          .as("row 1 replicated")
          .isTrue();

      cluster.cutReplication();
      execute(primary, "INSERT INTO harness VALUES (2)");
      PatroniCluster.Node killed = cluster.killLeader();
      PatroniCluster.Node promoted = cluster.awaitLeaderOtherThan(killed, Duration.ofSeconds(90));

      assertThat(promoted).isSameAs(replica);
      assertThat(ids(cluster.dataSource("postgres")))
          .as("row 2 was committed after the cut: asynchronous replication lost it")
          .containsExactly(1);
      assertThat(timeline(cluster.dataSource("postgres"))).isGreaterThan(timelineBefore);
    }
  }

  private static void execute(DataSource ds, String... sql) throws SQLException {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      for (String statement : sql) {
        s.execute(statement);
      }
    }
  }

  private static long timeline(DataSource ds) throws SQLException {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static List<Integer> ids(DataSource ds) throws SQLException {
    List<Integer> ids = new ArrayList<>();
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT id FROM harness ORDER BY id")) {
      while (rs.next()) {
        ids.add(rs.getInt(1));
      }
    }
    return ids;
  }
}
