package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.EmbeddedCluster;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 14: one hot resource, many open READ COMMITTED transactions with the same token. The accept
 * path locks no tuple: the resource row is never locked or rewritten by a check, no multixact is
 * created, and a check alone assigns no transaction id. A private cluster, so that its multixact
 * counter counts this test's transactions only.
 */
// A hang guard, on @BeforeAll too (initdb, start and migrate a cluster: minutes at load 40 on 2
// cores, as in CI), not a performance bound.
@Timeout(value = 10, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class HotResourceTest {
  private static final int WRITERS = 8;
  private static final int ROUNDS = 125; // 1,000 fenced transactions

  private static EmbeddedCluster cluster;

  @BeforeAll
  static void startCluster() throws SQLException {
    cluster = EmbeddedCluster.start();
    assertThat(FencingMigrations.migrate(cluster.dataSource("postgres")))
        .isEqualTo(Fence.MIGRATIONS);
    try (Connection c = cluster.dataSource("postgres").getConnection()) {
      Interleaving.createWriteTable(c);
    }
  }

  @AfterAll
  static void closeCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void thousandSameTokenTransactionsLockNoTupleAndCreateNoMultixact() throws SQLException {
    String res = "hot-resource";
    DataSource ds = cluster.dataSource("postgres");
    List<Connection> writers = new ArrayList<>();
    try (Connection observer = ds.getConnection()) {
      for (int i = 0; i < WRITERS; i++) {
        Connection w = ds.getConnection();
        writers.add(w);
        w.setAutoCommit(false);
        w.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
      }
      long token = Fence.acquire(observer, res, "holder-a", Duration.ofMinutes(5));
      String row = rowState(observer, res);
      long multixactsBefore = nextMultixact(observer);

      for (int round = 0; round < ROUNDS; round++) {
        // every writer of the round holds its accepted check at the same time
        for (Connection w : writers) {
          assertThat(Fence.check(w, res, token)).isEqualTo(token);
        }
        // a share-locked row would carry its lockers in xmax (a multixact from the second one)
        assertThat(rowState(observer, res))
            .as("resource row (xmax, ctid) while %s checks are open, round %s", WRITERS, round)
            .isEqualTo(row);
        assertThat(xidAssigned(writers.get(round % WRITERS)))
            .as("a check alone assigns no transaction id")
            .isFalse();
        for (Connection w : writers) {
          FenceSql.run(
              w,
              "INSERT INTO public.fenced_write (resource, token, note) VALUES (?, ?, 'hot')",
              res,
              token);
          w.commit();
        }
      }

      assertThat(nextMultixact(observer) - multixactsBefore)
          .as("multixacts created by %s fenced transactions", WRITERS * ROUNDS)
          .isLessThanOrEqualTo(10);
      assertThat(rowState(observer, res)).isEqualTo(row);
      assertThat(
              FenceSql.longValue(
                  observer, "SELECT count(*) FROM public.fenced_write WHERE note = 'hot'"))
          .isEqualTo((long) WRITERS * ROUNDS);
    } finally {
      for (Connection w : writers) {
        w.close();
      }
    }
  }

  /** The resource row's xmax and ctid: a FOR SHARE lock or an update would change them. */
  private static String rowState(Connection c, String resource) throws SQLException {
    String state =
        FenceSql.string(
            c,
            "SELECT xmax::text || ' ' || ctid::text FROM fencing.resource WHERE name = ?",
            resource);
    assertThat(state).isNotNull();
    return state;
  }

  /** The cluster's next multixact id (mxid_age is measured from it). */
  private static long nextMultixact(Connection c) throws SQLException {
    return FenceSql.longValue(
        c,
        "SELECT mxid_age(datminmxid)::bigint + datminmxid::text::bigint"
            + " FROM pg_database WHERE datname = current_database()");
  }

  private static boolean xidAssigned(Connection w) throws SQLException {
    return FenceSql.string(w, "SELECT pg_current_xact_id_if_assigned()::text") != null;
  }
}
