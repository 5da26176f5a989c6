package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.MISSING;
import static dev.fencing.migrations.Fence.STALE;
import static dev.fencing.migrations.Fence.assertFails;
import static dev.fencing.migrations.Interleaving.PATIENCE;
import static dev.fencing.migrations.Interleaving.async;
import static dev.fencing.migrations.Interleaving.awaitBlockedBy;
import static dev.fencing.migrations.Interleaving.begin;
import static dev.fencing.migrations.Interleaving.join;
import static dev.fencing.migrations.Interleaving.write;
import static dev.fencing.migrations.Interleaving.writes;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.migrations.Interleaving.Isolation;
import dev.fencing.migrations.Interleaving.Session;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The keyed tag (V18) against a handover, forced: a transaction that passed on its tag keeps the
 * check's lock, so the next acquisition waits for it; once the token moved on, the old holder's
 * tag, check and carried token are all refused. The write table is protected by
 * protect_rows_per_row, one resource per row (its {@code resource} column).
 */
class KeyedTagInterleavingTest extends InterleavingTestBase {

  @BeforeAll
  static void protectTheWriteTable() throws SQLException {
    try (Connection c = db.connect()) {
      FenceSql.run(c, "SELECT fencing.protect_rows_per_row('public.fenced_write', 'resource', '')");
    }
  }

  private static String tags(Session s) throws SQLException {
    return String.valueOf(
        FenceSql.string(s.c(), "SELECT current_setting('fencing.row_tags', true)"));
  }

  @ParameterizedTest
  @EnumSource(Isolation.class)
  void aTaggedTransactionHoldsOffTheHandoverThenItsTagIsWorthless(Isolation iso)
      throws SQLException {
    String res = "keyed-" + iso.tag();
    try (Connection observer = db.connect();
        Session admin = Interleaving.session(db);
        Session writer = Interleaving.writer(db, iso);
        Session acquirer = Interleaving.session(db)) {
      long t1 = Fence.acquire(admin.c(), res, "holder-a", LEASE);
      assertThat(Fence.release(admin.c(), res, t1)).isTrue();

      begin(writer, iso);
      Fence.check(writer.c(), res, t1);
      write(writer, res, t1, "first"); // the full decision, then the tag
      String tag = tags(writer);
      assertThat(tag).startsWith("," + res + ":");

      CompletableFuture<Fence.Acquired> acquire =
          async(pool(), () -> Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, PATIENCE));
      awaitBlockedBy(observer, acquirer.pid(), writer.pid());
      write(writer, res, t1, "on the tag"); // still under the check's lock
      assertThat(tags(writer)).isEqualTo(tag);
      assertThat(acquire).isNotDone();
      writer.c().commit();

      Fence.Acquired acquired = join(acquire);
      assertThat(acquired.acquired()).isTrue();
      assertThat(acquired.token()).isNotNull().isGreaterThan(t1);
      assertThat(writes(observer, res, "first")).isOne();
      assertThat(writes(observer, res, "on the tag")).isOne();

      // the old holder: its tag replayed, its check, its carried token
      begin(writer, iso);
      FenceSql.run(writer.c(), "SELECT set_config('fencing.row_tags', ?, true)", tag);
      assertFails(MISSING, () -> write(writer, res, t1, "replayed"));
      Interleaving.tryCommit(writer);
      begin(writer, iso);
      assertFails(STALE, () -> Fence.check(writer.c(), res, t1));
      Interleaving.tryCommit(writer);
      begin(writer, iso);
      FenceSql.run(writer.c(), "SELECT fencing.carry(?, ?)", res, t1);
      assertFails(STALE, () -> write(writer, res, t1, "carried"));
      Interleaving.tryCommit(writer);
      assertThat(writes(observer, res, "replayed")).isZero();
      assertThat(writes(observer, res, "carried")).isZero();
    }
  }
}
