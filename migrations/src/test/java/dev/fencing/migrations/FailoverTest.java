package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.NEVER_ISSUED;
import static dev.fencing.migrations.Fence.STALE;
import static dev.fencing.migrations.Fence.assertFails;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.PostgresServer;
import dev.fencing.testing.StreamingPair;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Issue 16, on real servers: tokens stay monotonic across an asynchronous failover that loses
 * issuances, split brain, point-in-time recovery and a logical dump restored into a new cluster,
 * with no operator step. A client presenting a token the new primary never saw is refused there.
 * Each test builds its own servers (loopback, temporary folders; see {@link StreamingPair}).
 */
class FailoverTest {
  private static final String DATABASE = "app";
  private static final String APP_USER = "app_user";
  private static final Duration TTL = Duration.ofMinutes(5);
  private static final Duration WAIT = Duration.ofSeconds(60);

  @Test
  void aPromotedStandbyIssuesAboveEveryTokenTheOldPrimaryHandedOutAndRefusesTheLostOnes()
      throws Exception {
    try (StreamingPair pair = StreamingPair.start()) {
      install(pair.primary());
      long replicated;
      List<Long> handedOut = new ArrayList<>();
      try (Connection old = app(pair.primary())) {
        replicated = issue(old, "jobs", "holder-a");
        handedOut.add(replicated);
        handedOut.add(issue(old, "reports", "holder-a"));
      }
      pair.awaitReplayed();
      pair.cutOff();

      long lost;
      try (Connection old = app(pair.primary())) {
        // issued and committed on the primary, never received by the standby
        lost = Fence.acquire(old, "jobs", "zombie", TTL);
        handedOut.add(lost);
        for (int i = 0; i < 40; i++) { // more than the 32 values nextval pre-logs
          handedOut.add(issue(old, "reports", "holder-b"));
        }
        assertThat(lost >> 43).as("the old timeline's epoch").isZero();
      }
      pair.primary().crash();

      PostgresServer promoted = pair.promote();
      // right after promotion (no checkpoint forced): the WAL's timeline is the new one
      try (Connection c = promoted.connect(DATABASE)) {
        assertThat(FenceSql.longValue(c, "SELECT timeline FROM fencing.epoch_status()"))
            .as("timeline read right after promotion")
            .isEqualTo(2);
      }
      try (Connection c = app(promoted)) {
        // the zombie's lost token: above anything the new primary issued, so never issued here
        assertFails(NEVER_ISSUED, () -> Fence.check(c, "jobs", lost));
        assertThat(Fence.maxSeen(c, "jobs")).isEqualTo(replicated);

        long next = Fence.acquire(c, "jobs", "holder-new", TTL);
        assertThat(next).isGreaterThan(Collections.max(handedOut));
        assertThat(next >> 43).as("the new timeline's epoch").isEqualTo(1);
        assertFails(STALE, () -> Fence.check(c, "jobs", lost));
        assertFails(STALE, () -> Fence.check(c, "jobs", replicated));
        assertThat(issue(c, "reports", "holder-new")).isGreaterThan(Collections.max(handedOut));
      }

      // the crash guarantee holds on the new primary: a committed issuance survives kill -9
      long beforeCrash;
      try (Connection c = app(promoted)) {
        beforeCrash = issue(c, "reports", "holder-new");
      }
      promoted.crash();
      promoted.start();
      try (Connection c = app(promoted)) {
        assertThat(Fence.acquire(c, "reports", "holder-after-crash", TTL))
            .isGreaterThan(beforeCrash);
      }

      // and the handover interleaving: the old holder's open fenced transaction is waited for,
      // then its token is stale, under every isolation level
      for (String isolation : List.of("READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE")) {
        assertHandoverWaitsForTheFencedTransaction(
            promoted, "handover/" + isolation.replace(' ', '-'), isolation);
      }
    }
  }

  @Test
  void inSplitBrainNothingTheOldPrimaryIssuesIsAcceptedByTheNewOne() throws Exception {
    try (StreamingPair pair = StreamingPair.start()) {
      install(pair.primary());
      try (Connection old = app(pair.primary())) {
        issue(old, "ledger", "before");
      }
      pair.awaitReplayed();
      pair.cutOff();
      PostgresServer promoted = pair.promote();

      long onNew;
      try (Connection c = app(promoted)) {
        onNew = issue(c, "ledger", "new-side");
      }
      // the old primary still runs, on its old timeline, and keeps issuing
      List<Long> oldSide = new ArrayList<>();
      try (Connection old = pair.primary().connect(DATABASE)) {
        assertThat(FenceSql.longValue(old, "SELECT timeline FROM fencing.epoch_status()"))
            .as("the old primary's timeline during split brain")
            .isEqualTo(1);
      }
      try (Connection old = app(pair.primary())) {
        for (int i = 0; i < 50; i++) {
          oldSide.add(issue(old, "ledger", "old-side-" + i));
        }
        oldSide.add(Fence.acquire(old, "split/only-old", "old-side", TTL));
      }
      assertThat(Collections.max(oldSide)).isLessThan(onNew);
      try (Connection c = app(promoted)) {
        for (long token : oldSide.subList(0, 50)) {
          assertFails(STALE, () -> Fence.check(c, "ledger", token));
        }
        assertFails(
            Fence.INVALID_RESOURCE,
            () -> Fence.check(c, "split/only-old", oldSide.get(oldSide.size() - 1)));
        assertThat(Fence.acquire(c, "ledger", "new-side", TTL)).isGreaterThan(onNew);
      }
    }
  }

  @Test
  void aPointInTimeRecoveryIssuesAboveTheTokensItRolledBack() throws Exception {
    try (PostgresServer primary = PostgresServer.createArchiving("pitr-primary")) {
      install(primary);
      Path backup = primary.baseBackup("base", false);
      List<Long> handedOut = new ArrayList<>();
      long kept;
      try (Connection c = app(primary)) {
        kept = issue(c, "pitr", "kept");
        handedOut.add(kept);
      }
      primary.execute("SELECT pg_create_restore_point('before_loss')");
      try (Connection c = app(primary)) {
        for (int i = 0; i < 40; i++) { // rolled back by the recovery below
          handedOut.add(issue(c, "pitr", "lost-" + i));
        }
      }
      String segment = primary.query("SELECT pg_walfile_name(pg_current_wal_lsn())");
      primary.execute("SELECT pg_switch_wal()");
      primary.awaitTrue(
          "SELECT coalesce(last_archived_wal >= '" + segment + "', false) FROM pg_stat_archiver",
          "archiving of " + segment);

      try (PostgresServer restored =
          PostgresServer.fromBackup(
              "pitr-restored",
              backup,
              Map.of(
                  "archive_mode", "off",
                  "restore_command", "'cp " + primary.archive() + "/%f %p'",
                  "recovery_target_name", "'before_loss'",
                  "recovery_target_action", "'promote'"),
              true)) {
        restored.awaitTrue("SELECT NOT pg_is_in_recovery()", "the end of the recovery");
        try (Connection c = app(restored)) {
          assertThat(FenceSql.status(c, "pitr").lastIssued()).as("recovered up to").isEqualTo(kept);
          assertFails(NEVER_ISSUED, () -> Fence.check(c, "pitr", Collections.max(handedOut)));
          long next = Fence.acquire(c, "pitr", "after-recovery", TTL);
          assertThat(next).isGreaterThan(Collections.max(handedOut));
        }
        try (Connection c = restored.connect(DATABASE)) {
          assertThat(FenceSql.longValue(c, "SELECT timeline FROM fencing.epoch_status()"))
              .isEqualTo(2);
        }
      }
    }
  }

  @Test
  void aDumpRestoredIntoANewClusterIssuesAboveEverythingIssuedBeforeByItself() throws Exception {
    try (PostgresServer source = PostgresServer.create("dump-source", Map.of());
        PostgresServer target = PostgresServer.create("dump-target", Map.of())) {
      install(source);
      List<Long> handedOut = new ArrayList<>();
      try (Connection c = app(source)) {
        for (int i = 0; i < 5; i++) {
          handedOut.add(issue(c, "restore/" + (i % 2), "source"));
        }
      }
      Path globals = target.root().resolve("globals.sql");
      Path dump = target.root().resolve("app.sql");
      source.runTool(
          "pg_dumpall",
          List.of(
              "-h",
              "127.0.0.1",
              "-p",
              "" + source.port(),
              "-U",
              "postgres",
              "-g",
              "--no-role-passwords",
              "-f",
              globals.toString()));
      source.runTool(
          "pg_dump",
          List.of(
              "-h",
              "127.0.0.1",
              "-p",
              "" + source.port(),
              "-U",
              "postgres",
              "-f",
              dump.toString(),
              DATABASE));
      // the source goes on issuing after the dump: these tokens are not in it
      try (Connection c = app(source)) {
        for (int i = 0; i < 40; i++) {
          handedOut.add(issue(c, "restore/0", "source-after-dump"));
        }
      }
      String roles =
          Files.readString(globals)
              .replaceAll("(?m)^(CREATE ROLE postgres;|ALTER ROLE postgres .*)$", "");
      Files.writeString(globals, roles);
      target.execute("CREATE DATABASE " + DATABASE);
      target.runTool(
          "psql",
          List.of(
              "-h",
              "127.0.0.1",
              "-p",
              "" + target.port(),
              "-U",
              "postgres",
              "-v",
              "ON_ERROR_STOP=1",
              "-q",
              "-d",
              "postgres",
              "-f",
              globals.toString()));
      target.runTool(
          "psql",
          List.of(
              "-h",
              "127.0.0.1",
              "-p",
              "" + target.port(),
              "-U",
              "postgres",
              "-v",
              "ON_ERROR_STOP=1",
              "-q",
              "-d",
              DATABASE,
              "-f",
              dump.toString()));

      assertThat(migrations(target).validate())
          .singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
          .contains("restored into a cluster or database it has not seen", "adopts epoch 1024");
      try (Connection c = app(target)) {
        long next = Fence.acquire(c, "restore/0", "target", TTL);
        assertThat(next).isGreaterThan(Collections.max(handedOut));
        assertThat(next >> 43).isEqualTo(1024);
        assertFails(STALE, () -> Fence.check(c, "restore/0", Collections.max(handedOut)));
        assertThat(Fence.acquire(c, "restore/1", "target", TTL)).isEqualTo(next + 1);
      }
      assertThat(migrations(target).validate()).isEmpty();
    }
  }

  /**
   * The holder's transaction checked its token and is open; an acquisition of the released lease
   * waits for it (the handover); once it commits, the holder's token is stale.
   */
  private static void assertHandoverWaitsForTheFencedTransaction(
      PostgresServer server, String resource, String isolation) throws Exception {
    try (Connection holder = app(server);
        Connection acquirer = app(server);
        Connection observer = server.connect(DATABASE)) {
      long token = issue(holder, resource, "holder");
      holder.setAutoCommit(false);
      FenceSql.run(holder, "SET TRANSACTION ISOLATION LEVEL " + isolation);
      assertThat(Fence.check(holder, resource, token)).isEqualTo(token);
      int acquirerPid = (int) FenceSql.longValue(acquirer, "SELECT pg_backend_pid()");
      CompletableFuture<Fence.Acquired> next =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return Fence.tryAcquire(acquirer, resource, "acquirer", TTL, WAIT);
                } catch (SQLException e) {
                  throw new IllegalStateException(e);
                }
              });
      long deadline = System.nanoTime() + WAIT.toNanos();
      while (FenceSql.longValue(
              observer, "SELECT count(*) FROM pg_locks WHERE pid = ? AND NOT granted", acquirerPid)
          == 0) {
        assertThat(System.nanoTime()).as("the acquirer waits for the holder").isLessThan(deadline);
        Thread.onSpinWait();
      }
      assertThat(next).isNotDone();
      holder.commit();
      Fence.Acquired acquired = next.get(WAIT.toSeconds(), TimeUnit.SECONDS);
      assertThat(acquired.acquired()).isTrue();
      assertThat(acquired.token()).isGreaterThan(token);
      holder.setAutoCommit(true);
      assertFails(STALE, () -> Fence.check(holder, resource, token));
    }
  }

  /** Acquires a lease and releases it: the token is handed out, the lease free for the next. */
  private static long issue(Connection c, String resource, String holder) throws SQLException {
    long token = Fence.acquire(c, resource, holder, TTL);
    assertThat(Fence.release(c, resource, token)).isTrue();
    return token;
  }

  /** Creates the database, migrates the fence into it, and a login role of the application. */
  private static void install(PostgresServer server) {
    server.execute("CREATE DATABASE " + DATABASE);
    assertThat(migrations(server).migrate()).isEqualTo(Fence.MIGRATIONS);
    server.execute(
        "CREATE ROLE " + APP_USER + " LOGIN IN ROLE " + FencingMigrations.DEFAULT_APPLICATION_ROLE);
  }

  private static FencingMigrations migrations(PostgresServer server) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setUrl(server.jdbcUrl(DATABASE));
    return FencingMigrations.builder(ds).build();
  }

  private static Connection app(PostgresServer server) throws SQLException {
    return server.connect(DATABASE, APP_USER);
  }
}
