package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.postgresql.jdbc.AutoSave;
import org.postgresql.jdbc.PreferQueryMode;

/**
 * Commands that PostgreSQL refuses inside a transaction block (SQLState 25001: {@code VACUUM},
 * {@code CREATE/DROP/REINDEX ... CONCURRENTLY}, ...) run in autocommit with a token bound, under
 * every {@code preferQueryMode}, from a {@code Statement} and a {@code PreparedStatement}: the
 * check in a round trip of its own just before the command (which cannot share its transaction), so
 * a zombie's is refused and does nothing.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class NoTransactionBlockTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;

  /** Each command of the test, in an order that leaves the table as it found it. */
  private static final List<String> COMMANDS =
      List.of(
          "VACUUM ntb_rows",
          "CREATE INDEX CONCURRENTLY ntb_index ON ntb_rows (v)",
          "REINDEX INDEX CONCURRENTLY ntb_index",
          "DROP INDEX CONCURRENTLY ntb_index");

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    exec(plain, "CREATE TABLE ntb_rows (id serial PRIMARY KEY, v int NOT NULL)");
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
