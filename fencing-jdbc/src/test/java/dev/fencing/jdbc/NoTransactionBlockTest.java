package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.postgresql.jdbc.AutoSave;
import org.postgresql.jdbc.PreferQueryMode;

/**
 * Commands that PostgreSQL refuses inside a transaction block (SQLState 25001) and that run no user
 * code ({@code CREATE/DROP DATABASE}, tablespaces, ...) run in autocommit with a token bound, under
 * every {@code preferQueryMode}, from a {@code Statement} and a {@code PreparedStatement}: the
 * check in a round trip of its own just before the command (which cannot share its transaction), so
 * a zombie's is refused and does nothing. Those that can run user code ({@code VACUUM} in every
 * form, {@code CREATE/DROP/REINDEX ... CONCURRENTLY}, ...) fail as in a transaction block.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class NoTransactionBlockTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;

  /** Each command of the test that runs apart from its check (no user code). */
  private static final List<String> COMMANDS =
      List.of("DROP DATABASE IF EXISTS ntb_none", "DROP TABLESPACE IF EXISTS ntb_none");

  /**
   * Commands PostgreSQL refuses in a transaction block that can run user code: with a token bound
   * they fail as they do in a transaction block (25001), whatever the token.
   */
  private static final List<String> USER_CODE =
      List.of(
          "CREATE INDEX CONCURRENTLY ntb_index ON ntb_rows (v)",
          "REINDEX TABLE CONCURRENTLY ntb_rows",
          "DROP INDEX CONCURRENTLY IF EXISTS ntb_none",
          "VACUUM ntb_rows",
          "VACUUM (VERBOSE) ntb_rows",
          "VACUUM",
          "VACUUM FULL ntb_rows",
          "VACUUM (ANALYZE) ntb_rows",
          "CLUSTER");

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    exec(plain, "CREATE TABLE ntb_rows (id serial PRIMARY KEY, v int NOT NULL)");
    // an index expression that writes: IMMUTABLE as declared, but it calls a VOLATILE function
    exec(plain, "CREATE TABLE ntb_hidden_log (v int)");
    exec(
        plain,
        "CREATE FUNCTION ntb_write(v int) RETURNS int LANGUAGE plpgsql VOLATILE"
            + " SET search_path FROM CURRENT AS $$ BEGIN PERFORM pg_advisory_xact_lock(4711);"
            + " INSERT INTO ntb_hidden_log VALUES (v); RETURN v; END $$");
    exec(
        plain,
        "CREATE FUNCTION ntb_writes(v int) RETURNS int LANGUAGE plpgsql IMMUTABLE"
            + " SET search_path FROM CURRENT AS $$ BEGIN RETURN ntb_write(v); END $$");
  }

  @ParameterizedTest
  @EnumSource(
      value = PreferQueryMode.class,
      names = {"SIMPLE", "EXTENDED", "EXTENDED_FOR_PREPARED"})
  void theHoldersCommandsRunAfterTheirCheck(PreferQueryMode mode) throws Exception {
    String holder = externalResource(plain, "ntb-holder-" + mode, 5);
    DataSource fenced = FencedDataSource.wrap(MatrixFixture.driver(db, mode, AutoSave.NEVER));
    for (boolean prepared : new boolean[] {false, true}) {
      try (FencingScope scope = Fencing.bind(FencingToken.of(holder, 7));
          Connection c = fenced.getConnection()) {
        for (String sql : COMMANDS) {
          run(c, sql, prepared);
          assertThat(c.getAutoCommit()).isTrue();
        }
      }
      assertThat(FencingTestSupport.maxSeen(plain, holder)).as("checked").isEqualTo(7);
    }
  }

  @ParameterizedTest
  @EnumSource(
      value = PreferQueryMode.class,
      names = {"SIMPLE", "EXTENDED", "EXTENDED_FOR_PREPARED"})
  void theHoldersCommandsThatRunUserCodeFailAsInATransactionBlock(PreferQueryMode mode)
      throws Exception {
    String holder = externalResource(plain, "ntb-user-code-" + mode, 5);
    DataSource fenced = FencedDataSource.wrap(MatrixFixture.driver(db, mode, AutoSave.NEVER));
    for (boolean prepared : new boolean[] {false, true}) {
      try (FencingScope scope = Fencing.bind(FencingToken.of(holder, 7));
          Connection c = fenced.getConnection()) {
        for (String sql : USER_CODE) {
          assertThatThrownBy(() -> run(c, sql, prepared))
              .as(sql)
              .isInstanceOf(SQLException.class)
              .extracting(e -> ((SQLException) e).getSQLState())
              .isEqualTo("25001");
          assertThat(c.getAutoCommit()).isTrue();
        }
      }
    }
    assertThat(
            FencingTestSupport.queryLong(
                plain, "SELECT count(*) FROM pg_class WHERE relname = 'ntb_index'"))
        .isZero();
  }

  @ParameterizedTest
  @EnumSource(
      value = PreferQueryMode.class,
      names = {"SIMPLE", "EXTENDED", "EXTENDED_FOR_PREPARED"})
  void aZombiesCommandIsRefusedAndDoesNothing(PreferQueryMode mode) throws Exception {
    String zombie = externalResource(plain, "ntb-zombie-" + mode, 6);
    DataSource fenced = FencedDataSource.wrap(MatrixFixture.driver(db, mode, AutoSave.NEVER));
    for (boolean prepared : new boolean[] {false, true}) {
      try (FencingScope scope = Fencing.bind(FencingToken.of(zombie, 5));
          Connection c = fenced.getConnection()) {
        MatrixFixture.assertRefusedAsStale(
            () -> run(c, "CREATE INDEX CONCURRENTLY ntb_zombie ON ntb_rows (v)", prepared));
        assertThat(c.getAutoCommit()).isTrue();
      }
      assertThat(
              FencingTestSupport.queryLong(
                  plain, "SELECT count(*) FROM pg_class WHERE relname = 'ntb_zombie'"))
          .as("no index, not even an invalid one")
          .isZero();
    }
    assertThat(FencingTestSupport.rejections(plain, zombie, "stale_token")).isEqualTo(2);
  }

  /**
   * A command that runs user code (here an index expression; event triggers, {@code ANALYZE},
   * {@code VACUUM FULL}, {@code REINDEX}, {@code CLUSTER} too) can write table rows. Run outside a
   * transaction block, its check's lock would end before it: a handover while it runs would not
   * wait, and the write would land after the new holder's. So such a command is not run apart from
   * its check, whatever it is: it fails as PostgreSQL fails it in a transaction block (25001), and
   * writes nothing. The interleaving is forced: the expression waits on an advisory lock the test
   * holds (seen in pg_locks), the new holder fences, then the lock is let go.
   */
  @ParameterizedTest
  @EnumSource(
      value = PreferQueryMode.class,
      names = {"SIMPLE", "EXTENDED", "EXTENDED_FOR_PREPARED"})
  void aCommandRunningUserCodeNeverWritesAfterAHandover(PreferQueryMode mode) throws Exception {
    String resource = externalResource(plain, "ntb-hidden-" + mode, 5);
    String table = "ntb_hidden_" + mode.name().toLowerCase(java.util.Locale.ROOT);
    exec(plain, "CREATE TABLE " + table + " (v int NOT NULL)");
    exec(plain, "INSERT INTO " + table + " VALUES (1)");
    FencedDataSource fenced = FencedDataSource.wrap(MatrixFixture.driver(db, mode, AutoSave.NEVER));
    try (Connection blocker = plain.getConnection()) {
      exec(blocker, "SELECT pg_advisory_lock(4711)");
      java.util.concurrent.CompletableFuture<Void> command =
          java.util.concurrent.CompletableFuture.runAsync(
              () -> {
                try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 5));
                    Connection c = fenced.getConnection()) {
                  run(c, "CREATE INDEX CONCURRENTLY ON " + table + " (ntb_writes(v))", false);
                } catch (SQLException e) {
                  throw new java.util.concurrent.CompletionException(e);
                }
              });
      while (!command.isDone()
          && FencingTestSupport.queryLong(
                  plain,
                  "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 4711"
                      + " AND NOT granted")
              == 0) {
        Thread.onSpinWait();
      }
      fenced.fence(FencingToken.of(resource, 6)); // the handover: a later holder
      exec(blocker, "SELECT pg_advisory_unlock(4711)");
      Throwable failure = command.handle((done, e) -> e).get(1, TimeUnit.MINUTES);
      assertThat(FencingTestSupport.queryLong(plain, "SELECT count(*) FROM ntb_hidden_log"))
          .as("the zombie's hidden write, after the handover")
          .isZero();
      assertThat(failure).isNotNull().rootCause().isInstanceOf(SQLException.class);
    }
    assertThat(FencingTestSupport.maxSeen(plain, resource)).isEqualTo(6);
  }

  private static void run(Connection c, String sql, boolean prepared) throws SQLException {
    if (prepared) {
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        ps.execute();
      }
    } else {
      try (Statement s = c.createStatement()) {
        s.execute(sql);
      }
    }
  }
}
