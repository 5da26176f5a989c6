package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.STALE;
import static dev.fencing.migrations.Fence.assertFails;
import static dev.fencing.migrations.Interleaving.PATIENCE;
import static dev.fencing.migrations.Interleaving.SERIALIZATION_FAILURE;
import static dev.fencing.migrations.Interleaving.async;
import static dev.fencing.migrations.Interleaving.awaitBlockedBy;
import static dev.fencing.migrations.Interleaving.begin;
import static dev.fencing.migrations.Interleaving.join;
import static dev.fencing.migrations.Interleaving.reason;
import static dev.fencing.migrations.Interleaving.sqlState;
import static dev.fencing.migrations.Interleaving.write;
import static dev.fencing.migrations.Interleaving.writes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.fencing.migrations.Interleaving.Isolation;
import dev.fencing.migrations.Interleaving.Session;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Strict resources ({@code create_resource(name, false, true)}) with eager fencing: a token admits
 * exactly one committed write transaction.
 */
class StrictModeTest extends InterleavingTestBase {

  /** A strict, locally issued resource with a lease for holder-a; returns its token. */
  private static long strictResourceWithLease(Connection c, String res) throws SQLException {
    Interleaving.createResource(c, res, false, true);
    return Fence.acquire(c, res, "holder-a", LEASE);
  }

  /** Asserts a refusal of a used token: ZF001 with DETAIL reason token_used. */
  private static void assertTokenUsed(Connection observer, SQLException e) throws SQLException {
    assertThat(sqlState(e)).as(e.getMessage()).isEqualTo(STALE);
    assertThat(reason(observer, e)).as(e.getMessage()).isEqualTo("token_used");
  }

  /**
   * The holder's first write transaction after the acquisition passes; a second transaction with
   * the same token is refused (ZF001, token_used), and so recorded by record_rejection.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void tokenAdmitsOneCommittedTransaction(Isolation iso) throws SQLException {
    String res = "strict-once-" + iso.tag();
    try (Connection observer = db.connect();
        Session writer = Interleaving.writer(db, iso)) {
      long t = strictResourceWithLease(observer, res);

      begin(writer, iso);
      assertThat(Fence.check(writer.c(), res, t)).isEqualTo(t);
      write(writer, res, t, "first");
      writer.c().commit();

      begin(writer, iso);
      write(writer, res, t, "second");
      SQLException e = assertFails(STALE, () -> Fence.check(writer.c(), res, t));
      writer.c().rollback();
      assertTokenUsed(observer, e);
      assertThat(writes(observer, res, "first")).isOne();
      assertThat(writes(observer, res, "second")).isZero();

      long id = Fence.recordRejection(observer, e);
      assertThat(
              Fence.count(
                  observer,
                  "SELECT count(*) FROM fencing.rejection WHERE id = "
                      + id
                      + " AND reason = 'token_used' AND token = "
                      + t
                      + " AND holder = 'holder-a'"))
          .isOne();
    }
  }

  /** A transaction that rolled back did not use the token: the next one passes. */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void rolledBackTransactionDoesNotUseTheToken(Isolation iso) throws SQLException {
    String res = "strict-rollback-" + iso.tag();
    try (Connection observer = db.connect();
        Session writer = Interleaving.writer(db, iso)) {
      long t = strictResourceWithLease(observer, res);

      begin(writer, iso);
      assertThat(Fence.check(writer.c(), res, t)).isEqualTo(t);
      write(writer, res, t, "rolled-back");
      writer.c().rollback();

      begin(writer, iso);
      assertThat(Fence.check(writer.c(), res, t)).isEqualTo(t);
      write(writer, res, t, "committed");
      writer.c().commit();

      assertThat(writes(observer, res, "rolled-back")).isZero();
      assertThat(writes(observer, res, "committed")).isOne();
    }
  }

  /**
   * Two concurrent transactions with the same token: the second waits for the first; after the
   * first commits it is refused (READ COMMITTED), or gets 40001 (REPEATABLE READ / SERIALIZABLE)
   * and is refused on retry.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void concurrentSameTokenTransactionWaitsThenIsRefused(Isolation iso) throws SQLException {
    String res = "strict-concurrent-" + iso.tag();
    try (Connection observer = db.connect();
        Session t1 = Interleaving.writer(db, iso);
        Session t2 = Interleaving.writer(db, iso)) {
      long t = strictResourceWithLease(observer, res);

      begin(t1, iso);
      assertThat(Fence.check(t1.c(), res, t)).isEqualTo(t);
      write(t1, res, t, "t1");

      begin(t2, iso);
      CompletableFuture<Long> second =
          async(
              pool(),
              () -> {
                write(t2, res, t, "t2");
                return Fence.check(t2.c(), res, t);
              });
      awaitBlockedBy(observer, t2.pid(), t1.pid());
      assertThat(second).isNotDone();
      t1.c().commit();

      SQLException first = catchThrowableOfType(SQLException.class, () -> join(second));
      assertThat((Throwable) first).as("second transaction with a used token passed").isNotNull();
      if (sqlState(first).equals(SERIALIZATION_FAILURE)) {
        assertThat(iso.snapshotPerTransaction())
            .as("only REPEATABLE READ / SERIALIZABLE may answer 40001: %s", first.getMessage())
            .isTrue();
        t2.c().rollback();
        begin(t2, iso);
        write(t2, res, t, "t2");
        assertTokenUsed(observer, assertFails(STALE, () -> Fence.check(t2.c(), res, t)));
      } else {
        assertTokenUsed(observer, first);
      }
      Interleaving.tryCommit(t2);

      assertThat(writes(observer, res, "t1")).isOne();
      assertThat(writes(observer, res, "t2")).isZero();
    }
  }

  /**
   * Two concurrent transactions with the same token: if the first rolls back, the waiter passes.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void concurrentSameTokenTransactionPassesWhenTheFirstRollsBack(Isolation iso)
      throws SQLException {
    String res = "strict-concurrent-rollback-" + iso.tag();
    try (Connection observer = db.connect();
        Session t1 = Interleaving.writer(db, iso);
        Session t2 = Interleaving.writer(db, iso)) {
      long t = strictResourceWithLease(observer, res);

      begin(t1, iso);
      assertThat(Fence.check(t1.c(), res, t)).isEqualTo(t);
      write(t1, res, t, "t1");

      begin(t2, iso);
      CompletableFuture<Long> second = async(pool(), () -> Fence.check(t2.c(), res, t));
      awaitBlockedBy(observer, t2.pid(), t1.pid());
      assertThat(second).isNotDone();
      t1.c().rollback();

      assertThat(join(second)).isEqualTo(t);
      write(t2, res, t, "t2");
      t2.c().commit();

      assertThat(writes(observer, res, "t1")).isZero();
      assertThat(writes(observer, res, "t2")).isOne();
    }
  }

  /** Within the transaction that uses the token, every further check passes. */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void repeatedChecksWithinOneTransactionPass(Isolation iso) throws SQLException {
    String res = "strict-repeat-" + iso.tag();
    try (Connection observer = db.connect();
        Session writer = Interleaving.writer(db, iso)) {
      long t = strictResourceWithLease(observer, res);

      begin(writer, iso);
      for (int i = 0; i < 3; i++) {
        assertThat(Fence.check(writer.c(), res, t)).as("check #%s", i + 1).isEqualTo(t);
        write(writer, res, t, "write-" + i);
      }
      writer.c().commit();

      for (int i = 0; i < 3; i++) {
        assertThat(writes(observer, res, "write-" + i)).isOne();
      }
      begin(writer, iso);
      assertTokenUsed(observer, assertFails(STALE, () -> Fence.check(writer.c(), res, t)));
      writer.c().rollback();
    }
  }

  /**
   * Eager fencing on a strict resource: an acquisition waits for the open transaction that uses the
   * current token; the new token's first transaction passes; the old token is stale.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void newAcquisitionWaitsForTheUserAndItsTokenAdmitsItsFirstTransaction(Isolation iso)
      throws SQLException {
    String res = "strict-handover-" + iso.tag();
    try (Connection observer = db.connect();
        Session writer = Interleaving.writer(db, iso);
        Session acquirer = Interleaving.session(db)) {
      long t1 = strictResourceWithLease(observer, res);
      assertThat(Fence.release(observer, res, t1)).isTrue();

      begin(writer, iso);
      assertThat(Fence.check(writer.c(), res, t1)).isEqualTo(t1);
      write(writer, res, t1, "old-holder");

      CompletableFuture<Fence.Acquired> acquire =
          async(pool(), () -> Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, PATIENCE));
      awaitBlockedBy(observer, acquirer.pid(), writer.pid());
      assertThat(acquire).isNotDone();
      writer.c().commit();

      Fence.Acquired acquired = join(acquire);
      assertThat(acquired.acquired()).isTrue();
      assertThat(acquired.token()).isNotNull().isGreaterThan(t1);
      long t2 = acquired.token();
      assertThat(writes(observer, res, "old-holder")).isOne();
      // eager: the acquisition itself fenced the old token off (stale, not merely used)
      assertThat(Fence.maxSeen(observer, res)).isEqualTo(t2);
      begin(writer, iso);
      SQLException stale = assertFails(STALE, () -> Fence.check(writer.c(), res, t1));
      writer.c().rollback();
      assertThat(reason(observer, stale)).isEqualTo("stale_token");

      begin(writer, iso);
      assertThat(Fence.check(writer.c(), res, t2))
          .as("first transaction of the new token")
          .isEqualTo(t2);
      write(writer, res, t2, "new-holder");
      writer.c().commit();
      assertThat(writes(observer, res, "new-holder")).isOne();

      begin(writer, iso);
      assertTokenUsed(observer, assertFails(STALE, () -> Fence.check(writer.c(), res, t2)));
      writer.c().rollback();
    }
  }
}
