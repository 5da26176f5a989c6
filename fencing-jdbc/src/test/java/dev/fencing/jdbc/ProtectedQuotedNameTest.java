package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.queryLong;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A bulk write to a per-row table passes only if that very table is protected: its name is asked as
 * it is stored, not folded again ({@code "Rows_Q"} is not {@code rows_q}).
 */
class ProtectedQuotedNameTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;

  @BeforeAll
  static void migrate() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    exec(plain, "CREATE TABLE rows_q (id int PRIMARY KEY)");
    exec(plain, "SELECT fencing.protect_rows('rows_q', 'id', 'q/')");
    exec(plain, "CREATE TABLE \"Rows_Q\" (id int PRIMARY KEY)");
    exec(plain, "INSERT INTO \"Rows_Q\" VALUES (1)");
    exec(plain, "CREATE TABLE \"Ärows\" (id int PRIMARY KEY)");
    exec(plain, "SELECT fencing.protect_rows('\"Ärows\"', 'id', 'a-umlaut/')");
    exec(plain, "CREATE TABLE \"ärows\" (id int PRIMARY KEY)");
    exec(plain, "INSERT INTO \"ärows\" VALUES (1)");
  }

  /**
   * Two declared tables whose names differ only in a non-ASCII letter's case share a match key: a
   * bulk write to the unprotected one is refused though the other, declared first, is protected.
   */
  @Test
  void tablesSharingAMatchKeyAreEachAskedWhetherProtected() throws SQLException {
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    FencedTables tables = FencedTables.of(fenced).orElseThrow();
    tables.requireRowResources("\"Ärows\"");
    tables.requireRowResources("\"ärows\"");
    try (Connection c = fenced.getConnection()) {
      assertThatThrownBy(() -> exec(c, "DELETE FROM \"ärows\""))
          .isInstanceOf(MissingFencingTokenException.class);
    }
    assertThat(queryLong(plain, "SELECT count(*) FROM \"ärows\"")).isEqualTo(1);
  }

  @Test
  void aBulkWriteToAnUnprotectedQuotedTableIsRefusedThoughItsFoldedNameIsProtected()
      throws SQLException {
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    FencedTables.of(fenced).orElseThrow().requireRowResources("\"Rows_Q\"");
    try (Connection c = fenced.getConnection()) {
      assertThatThrownBy(() -> exec(c, "DELETE FROM \"Rows_Q\""))
          .isInstanceOf(MissingFencingTokenException.class);
    }
    assertThat(queryLong(plain, "SELECT count(*) FROM \"Rows_Q\"")).isEqualTo(1);
  }

  @Test
  void aBulkWriteToTheProtectedTableIsLeftToTheDatabase() throws SQLException {
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    FencedTables.of(fenced).orElseThrow().requireRowResources("rows_q");
    try (Connection c = fenced.getConnection()) {
      exec(c, "DELETE FROM rows_q"); // no rows: nothing for the database to refuse
    }
  }
}
