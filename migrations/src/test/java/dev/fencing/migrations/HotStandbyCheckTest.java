package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.NEVER_ISSUED;
import static dev.fencing.migrations.Fence.STALE;
import static dev.fencing.migrations.Fence.assertFails;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.migrations.Interleaving.Isolation;
import dev.fencing.testing.PostgresServer;
import dev.fencing.testing.StreamingPair;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * V46 on a hot standby, where every transaction is READ ONLY: a check answers from the replayed
 * resource rows without a lock, under READ COMMITTED and REPEATABLE READ (a hot standby refuses
 * SERIALIZABLE). Before V46: 25006 "cannot execute SELECT FOR SHARE in a read-only transaction" on
 * every path but the fast one, and "cannot execute pg_current_xact_id() during recovery" for a
 * resource with protected tables on the fast path too (the marker).
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class HotStandbyCheckTest {
  private static final String DATABASE = "app";
  private static final String APP_USER = "app_user";
  private static final Duration TTL = Duration.ofMinutes(5);

  @Test
  void aCheckOnAHotStandbyGetsTheFencesAnswer() throws Exception {
    try (StreamingPair pair = StreamingPair.start()) {
      PostgresServer primary = pair.primary();
      primary.execute("CREATE DATABASE " + DATABASE);
      PGSimpleDataSource ds = new PGSimpleDataSource();
      ds.setUrl(primary.jdbcUrl(DATABASE));
      FencingMigrations.builder(ds).build().migrate();
      primary.execute(
          "CREATE ROLE "
              + APP_USER
              + " LOGIN IN ROLE "
              + FencingMigrations.DEFAULT_APPLICATION_ROLE);
      long local;
      long strict;
      try (Connection c = primary.connect(DATABASE, APP_USER)) {
        long stale = Fence.acquireAfterExpiry(c, "standby/local", "a", Duration.ofMillis(1));
        assertThat(stale).isPositive();
        local = Fence.acquireAfterExpiry(c, "standby/local", "b", TTL);
        Interleaving.createResource(c, "standby/strict", false, true);
        strict = Fence.acquire(c, "standby/strict", "a", TTL);
        Interleaving.createResource(c, "standby/external", true, false);
        assertThat(Fence.check(c, "standby/external", 10L)).isEqualTo(10L);
      }
      long guarded;
      try (Connection c = primary.connect(DATABASE)) {
        Fence.execute(c, "CREATE TABLE public.guarded (id int)");
        Fence.execute(c, "SELECT fencing.protect('public.guarded', 'standby/protected')");
        guarded = Fence.acquire(c, "standby/protected", "a", TTL);
      }
      pair.awaitReplayed();

      try (Connection c = pair.standby().connect(DATABASE, APP_USER)) {
        c.setAutoCommit(false);
        // (a hot standby refuses SERIALIZABLE: "cannot use serializable mode in a hot standby")
        for (Isolation iso : List.of(Isolation.READ_COMMITTED, Isolation.REPEATABLE_READ)) {
          c.setTransactionIsolation(iso.jdbcLevel);
          assertThat(Fence.check(c, "standby/local", local)).isEqualTo(local);
          assertThat(Fence.check(c, "standby/protected", guarded)).isEqualTo(guarded);
          assertThat(Fence.check(c, "standby/strict", strict)).isEqualTo(strict);
          assertThat(Fence.check(c, "standby/external", 10L)).isEqualTo(10L);
          assertThat(Fence.check(c, "standby/external", 12L)).isEqualTo(12L);
          c.commit();
          assertFails(STALE, () -> Fence.check(c, "standby/local", local - 1));
          c.rollback();
          assertFails(NEVER_ISSUED, () -> Fence.check(c, "standby/local", local + 1));
          c.rollback();
          assertFails(STALE, () -> Fence.check(c, "standby/external", 9L));
          c.rollback();
        }
      }
    }
  }
}
