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
 * Writes the server executes although no single token names their table: a literal continued on the
 * next line, and a name past the server's 63 bytes (truncated, with a notice). Each is first shown
 * to write on the server, then shown to need the declared table's token through the product.
 */
class HiddenTargetTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final String LONG = "l".repeat(63); // NAMEDATALEN - 1 bytes

  private static DataSource plain;

  @BeforeAll
  static void migrate() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    exec(plain, "CREATE TABLE hidden_account (v int)");
    exec(plain, "INSERT INTO hidden_account VALUES (0)");
    exec(plain, "CREATE TABLE " + LONG + " (v int)");
  }

  private static long value() throws SQLException {
    return queryLong(plain, "SELECT v FROM hidden_account");
  }

  /**
   * {@code 'a'\n'b'} is the one literal {@code 'ab'} (SQL's continuation, at every depth): the
   * {@code DO} body is {@code UPDATE hidden_account ...} though no part of it names the table.
   */
  @Test
  void aLiteralContinuedOnTheNextLineIsReadWhole() throws SQLException {
    String split = "DO 'BEGIN UPDATE hidden_acc'\n'ount SET v = %d; END'";
    String splitKeyword =
        "DO 'BEGIN EXECUTE ''UPD'\n -- a comment\n'ATE hidden_account SET v = %d''; END'";
    exec(plain, split.formatted(1));
    assertThat(value()).isEqualTo(1);
    exec(plain, splitKeyword.formatted(2));
    assertThat(value()).isEqualTo(2);

    FencedDataSource fenced = FencedDataSource.wrap(plain);
    FencedTables.of(fenced).orElseThrow().requireToken("hidden_account", "accounts");
    try (Connection c = fenced.getConnection()) {
      assertThatThrownBy(() -> exec(c, split.formatted(3)))
          .isInstanceOf(MissingFencingTokenException.class);
      assertThatThrownBy(() -> exec(c, splitKeyword.formatted(4)))
          .isInstanceOf(MissingFencingTokenException.class);
    }
    assertThat(value()).isEqualTo(2);
  }

  /** The server truncates a name to 63 bytes: a longer name writes the declared table. */
  @Test
  void aNamePastSixtyThreeBytesWritesTheTableItIsTruncatedTo() throws SQLException {
    exec(plain, "INSERT INTO " + LONG + "_more VALUES (1)");
    assertThat(queryLong(plain, "SELECT count(*) FROM " + LONG + " WHERE v = 1")).isEqualTo(1);

    FencedDataSource fenced = FencedDataSource.wrap(plain);
    FencedTables.of(fenced).orElseThrow().requireToken(LONG, "long");
    try (Connection c = fenced.getConnection()) {
      assertThatThrownBy(() -> exec(c, "INSERT INTO " + LONG + "_more VALUES (2)"))
          .isInstanceOf(MissingFencingTokenException.class);
      assertThatThrownBy(() -> exec(c, "UPDATE \"" + LONG + "X\" SET v = 3"))
          .isInstanceOf(MissingFencingTokenException.class);
    }
    assertThat(queryLong(plain, "SELECT count(*) FROM " + LONG + " WHERE v > 1")).isZero();
  }

  /** Declared by a name past 63 bytes (the entity's): the table is written by its stored name. */
  @Test
  void aDeclaredNamePastSixtyThreeBytesIsTheTableItIsTruncatedTo() throws SQLException {
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    FencedTables.of(fenced).orElseThrow().requireToken(LONG + "_entity", "long");
    try (Connection c = fenced.getConnection()) {
      assertThatThrownBy(() -> exec(c, "INSERT INTO " + LONG + " VALUES (4)"))
          .isInstanceOf(MissingFencingTokenException.class);
    }
    assertThat(queryLong(plain, "SELECT count(*) FROM " + LONG + " WHERE v = 4")).isZero();
  }
}
