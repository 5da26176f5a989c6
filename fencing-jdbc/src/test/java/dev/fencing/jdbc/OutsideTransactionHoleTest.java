package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.PATIENCE;
import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.FencingTestSupport.queryLong;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.postgresql.jdbc.AutoSave;
import org.postgresql.jdbc.PreferQueryMode;

/**
 * Two ways a write ran apart from its check through {@code FencedConnection.checkedFirst}, the path
 * for a command that PostgreSQL refuses inside a transaction block and that runs no user code (the
 * check in an implicit transaction of its own, then the command alone): a handover while the write
 * waits is not held off, and the zombie's write lands after the new holder's. Both are now refused
 * before anything is written. The interleaving is forced: the write waits on an advisory lock the
 * test holds (seen in pg_locks), the new holder fences, then the lock is let go.
 *
 * <ul>
 *   <li>A plain {@code VACUUM} runs user code: it summarizes the block ranges of a BRIN index, and
 *       evaluates the index's expressions (declared {@code IMMUTABLE}, calling a {@code VOLATILE}
 *       function that inserts) for every row of each range. It fails with 25001 like {@code VACUUM
 *       FULL}.
 *   <li>A string that is one such command under one reading of a backslash ({@code
 *       standard_conforming_strings} on) and the command followed by a write under the other (off,
 *       the server's setting here). The classifier combines the two readings; being such a command
 *       relaxes the fence, so it now takes both readings to agree.
 * </ul>
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class OutsideTransactionHoleTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    exec(plain, "CREATE TABLE oth_log (v int)");
    exec(
        plain,
        "CREATE FUNCTION oth_write(v int) RETURNS int LANGUAGE plpgsql VOLATILE"
            + " SET search_path FROM CURRENT AS $$ BEGIN PERFORM pg_advisory_xact_lock(4712);"
            + " INSERT INTO oth_log VALUES (v); RETURN v; END $$");
    exec(
        plain,
        "CREATE FUNCTION oth_writes(v int) RETURNS int LANGUAGE plpgsql IMMUTABLE"
            + " SET search_path FROM CURRENT AS $$ BEGIN RETURN oth_write(v); END $$");
  }

  @AfterAll
  static void resetSystem() throws SQLException {
    exec(plain, "ALTER SYSTEM RESET application_name");
  }

  @ParameterizedTest
  @EnumSource(
      value = PreferQueryMode.class,
      names = {"SIMPLE", "EXTENDED", "EXTENDED_FOR_PREPARED"})
  void aPlainVacuumSummarizingABrinExpressionIndexNeverWritesAfterAHandover(PreferQueryMode mode)
      throws Exception {
    String table = "oth_brin_" + mode.name().toLowerCase(Locale.ROOT);
    exec(plain, "CREATE TABLE " + table + " (v int NOT NULL) WITH (autovacuum_enabled = false)");
    exec(
        plain,
        "CREATE INDEX ON " + table + " USING brin (oth_writes(v)) WITH (pages_per_range = 1)");
    // several pages of rows in ranges not summarized yet (the insert evaluated the expression)
    exec(plain, "INSERT INTO " + table + " SELECT generate_series(1, 1000)");
    exec(plain, "TRUNCATE oth_log");
    assertNoWriteAfterAHandover(mode, "VACUUM " + table, false, "oth-brin-" + mode);
  }

  @ParameterizedTest
  @EnumSource(
      value = PreferQueryMode.class,
      names = {"SIMPLE", "EXTENDED", "EXTENDED_FOR_PREPARED"})
  void aWriteHiddenFromOneReadingOfABackslashNeverRunsApartFromItsCheck(PreferQueryMode mode)
      throws Exception {
    exec(plain, "TRUNCATE oth_log");
    // standard_conforming_strings on: ALTER SYSTEM alone, the rest a comment; off: then an INSERT
    assertNoWriteAfterAHandover(
        mode,
        "ALTER SYSTEM SET application_name = 'a\\' -- '; INSERT INTO oth_log VALUES (oth_write(1))",
        true,
        "oth-scs-" + mode);
  }

  private static void assertNoWriteAfterAHandover(
      PreferQueryMode mode, String sql, boolean backslashEscapes, String name) throws Exception {
    String resource = externalResource(plain, name, 5);
    FencedDataSource fenced = FencedDataSource.wrap(MatrixFixture.driver(db, mode, AutoSave.NEVER));
    try (Connection blocker = plain.getConnection()) {
      exec(blocker, "SELECT pg_advisory_lock(4712)");
      CompletableFuture<Void> zombie =
          CompletableFuture.runAsync(
              () -> {
                try (Connection c = fenced.getConnection()) {
                  if (backslashEscapes) {
                    exec(c, "SET standard_conforming_strings = off");
                  }
                  try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 5));
                      Statement s = c.createStatement()) {
                    s.execute(sql);
                  }
                } catch (SQLException e) {
                  throw new CompletionException(e);
                }
              });
      await()
          .atMost(PATIENCE)
          .until(
              () ->
                  zombie.isDone()
                      || queryLong(
                              plain,
                              "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
                                  + " AND objid = 4712 AND NOT granted")
                          > 0);
      fenced.fence(FencingToken.of(resource, 6)); // the handover: a later holder
      exec(blocker, "SELECT pg_advisory_unlock(4712)");
      Throwable failure = zombie.handle((done, e) -> e).get(1, TimeUnit.MINUTES);
      assertThat(queryLong(plain, "SELECT count(*) FROM oth_log"))
          .as("the zombie's write, after the handover")
          .isZero();
      assertThat(failure).isNotNull().rootCause().isInstanceOf(SQLException.class);
    }
    assertThat(FencingTestSupport.maxSeen(plain, resource)).isEqualTo(6);
  }
}
