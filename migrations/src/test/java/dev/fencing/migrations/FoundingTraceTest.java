package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.assertFails;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The founding document's trace, step by step, through the SQL API over plain JDBC. */
class FoundingTraceTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  @BeforeAll
  static void migrate() throws SQLException {
    Fence.migrate(db);
    try (Connection c = db.connect()) {
      Fence.execute(c, "CREATE TABLE ledger (entry text, token bigint)");
    }
  }

  @Test
  void zombieWriteIsRefusedAfterTheNextHolderWrote() throws Exception {
    try (Connection client1 = db.connect();
        Connection client2 = db.connect()) {
      // t0: client 1 acquires; max_seen is its token at once (eager fencing). 5 s: still valid at
      // client 2's first attempt even on a machine at load 40 (CI), where 300 ms were not
      long t33 = Fence.acquire(client1, "res", "client-1", Duration.ofSeconds(5));
      assertThat(Fence.maxSeen(client1, "res")).isEqualTo(t33);
      // t1..t2: client 1 pauses; its lease expires on the database clock
      assertThat(Fence.tryAcquire(client2, "res", "client-2", Duration.ofSeconds(30)).acquired())
          .as("lease still valid before expiry")
          .isFalse();
      Awaitility.await()
          .atMost(Interleaving.PATIENCE) // a hang guard: the lease expires 5 s after t0
          .until(
              () ->
                  Fence.tryAcquire(client2, "res", "client-2", Duration.ofSeconds(30)).acquired());
      // t3: client 2 holds the next token; acquiring already fenced client 1 off
      long t34 = Fence.maxSeen(client2, "res");
      assertThat(t34).isGreaterThan(t33);
      // t4: client 2 writes with its token: accepted
      assertThat(write(client2, t34, "X")).isTrue();
      assertThat(Fence.maxSeen(client2, "res")).isEqualTo(t34);
      // t5..t6: client 1 wakes and writes with its old token: refused, nothing written
      assertThat(write(client1, t33, "Y")).isFalse();
      assertThat(Fence.count(client1, "SELECT count(*) FROM ledger WHERE entry = 'Y'")).isZero();
      assertThat(Fence.count(client1, "SELECT count(*) FROM ledger WHERE entry = 'X'")).isOne();
      assertThat(Fence.maxSeen(client1, "res")).isEqualTo(t34);
      // a token once refused stays dead
      assertThat(write(client1, t33, "Y")).isFalse();
    }
  }

  @Test
  void zombieIsRefusedEvenBeforeTheNextHolderWrites() throws Exception {
    try (Connection client1 = db.connect();
        Connection client2 = db.connect()) {
      long old = Fence.acquire(client1, "early", "client-1", Duration.ofMillis(1));
      Awaitility.await()
          .atMost(Interleaving.PATIENCE) // a hang guard: the lease expires after 1 ms
          .until(
              () ->
                  Fence.tryAcquire(client2, "early", "client-2", Duration.ofSeconds(30))
                      .acquired());
      assertThat(write(client1, old, "zombie")).isFalse();
      assertThat(Fence.count(client1, "SELECT count(*) FROM ledger WHERE entry = 'zombie'"))
          .isZero();
    }
  }

  private static boolean write(Connection c, long token, String entry) throws SQLException {
    String resource = entry.equals("zombie") ? "early" : "res";
    c.setAutoCommit(false);
    try {
      Fence.check(c, resource, token);
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO ledger VALUES (?, ?)")) {
        ps.setString(1, entry);
        ps.setLong(2, token);
        ps.executeUpdate();
      }
      c.commit();
      return true;
    } catch (SQLException e) {
      c.rollback();
      assertThat(e.getSQLState()).as(e.getMessage()).isEqualTo(Fence.STALE);
      assertFails(Fence.STALE, () -> Fence.check(c, resource, token));
      return false;
    } finally {
      c.setAutoCommit(true);
    }
  }
}
