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
 * An unquoted name is folded by the server as {@code downcase_identifier} folds it: ASCII letters
 * always; a non-ASCII letter not at all in a UTF-8 database ({@code ÄCCOUNT} names {@code
 * "Äccount"}), by the locale's {@code tolower()} in a single-byte one ({@code "äccount"}). A
 * declared table is a target under either folding, so that it is never missed.
 */
class NonAsciiTableNameTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;

  @BeforeAll
  static void migrate() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    exec(plain, "CREATE TABLE \"Äccount\" (id int)");
    exec(plain, "CREATE TABLE \"äccount\" (id int)");
  }

  private static long rows(String quotedTable, int id) throws SQLException {
    return queryLong(plain, "SELECT count(*) FROM " + quotedTable + " WHERE id = ?", id);
  }

  @Test
  void theServerFoldsOnlyTheAsciiLettersOfAnUnquotedName() throws SQLException {
    assertThat(
            queryLong(plain, "SELECT count(*) WHERE current_setting('server_encoding') = 'UTF8'"))
        .as("a UTF-8 database")
        .isEqualTo(1);
    exec(plain, "INSERT INTO ÄCCOUNT VALUES (1)");
    assertThat(rows("\"Äccount\"", 1)).isEqualTo(1);
    assertThat(rows("\"äccount\"", 1)).isZero();
  }

  /** The entity's table is declared by the name the server gives it; the SQL names it unquoted. */
  @Test
  void anUnquotedNameWritingTheDeclaredTableNeedsItsToken() throws SQLException {
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    FencedTables.of(fenced).orElseThrow().requireToken("\"Äccount\"", "accounts");
    try (Connection c = fenced.getConnection()) {
      assertThatThrownBy(() -> exec(c, "INSERT INTO ÄCCOUNT VALUES (2)"))
          .isInstanceOfSatisfying(
              MissingFencingTokenException.class,
              e -> assertThat(e.resource()).isEqualTo("accounts"));
      assertThatThrownBy(() -> exec(c, "UPDATE ÄcCoUnT SET id = 3"))
          .isInstanceOf(MissingFencingTokenException.class);
    }
    assertThat(rows("\"Äccount\"", 2)).isZero();
  }

  /** Declared unquoted: in a UTF-8 database that is {@code "Äccount"}, which the SQL quotes. */
  @Test
  void aQuotedNameWritingATableDeclaredUnquotedNeedsItsToken() throws SQLException {
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    FencedTables.of(fenced).orElseThrow().requireToken("ÄCCOUNT", "accounts");
    try (Connection c = fenced.getConnection()) {
      assertThatThrownBy(() -> exec(c, "INSERT INTO \"Äccount\" VALUES (4)"))
          .isInstanceOf(MissingFencingTokenException.class);
      // a single-byte database's folding names this one: a target too
      assertThatThrownBy(() -> exec(c, "DELETE FROM \"äccount\""))
          .isInstanceOf(MissingFencingTokenException.class);
    }
    assertThat(rows("\"Äccount\"", 4)).isZero();
  }

  /**
   * Declared {@code "äccount"}: the single-byte folding of {@code ÄCCOUNT}. Here the statement
   * writes {@code "Äccount"}, in a LATIN1 database {@code "äccount"}: it needs the token (a false
   * refusal here at worst, never a pass there).
   */
  @Test
  void anUnquotedNameIsATargetUnderTheSingleByteFoldingToo() throws SQLException {
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    FencedTables.of(fenced).orElseThrow().requireToken("\"äccount\"", "small");
    try (Connection c = fenced.getConnection()) {
      assertThatThrownBy(() -> exec(c, "INSERT INTO ÄCCOUNT VALUES (5)"))
          .isInstanceOfSatisfying(
              MissingFencingTokenException.class, e -> assertThat(e.resource()).isEqualTo("small"));
    }
    assertThat(rows("\"Äccount\"", 5)).isZero();
  }
}
