package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.postgresql.ds.PGSimpleDataSource;
import org.postgresql.jdbc.PreferQueryMode;

/**
 * The check's literal form ({@link CheckLiteral}) is injection-proof: any text quoted by it reaches
 * the server as exactly that text, through pgjdbc's own parsing of a plain statement (escapes,
 * statement splitting) and the server's, with {@code standard_conforming_strings} on and off, under
 * every query mode.
 */
class CheckLiteralTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final List<String> NASTY =
      List.of(
          "plain",
          "'",
          "''",
          "\\",
          "\\'",
          "'\\",
          "a'; DROP TABLE x; --",
          "\\'); SELECT 1; --",
          "{fn now()}",
          "{call x}",
          "?",
          "$1",
          "$$",
          "$a$",
          "--",
          "/*",
          "*/",
          "\"",
          ";",
          "E'",
          "\n\r\t",
          "é 日本 \uD83D\uDE00");

  @ParameterizedTest(name = "standard_conforming_strings={0} {1}")
  @CsvSource({
    "on, EXTENDED",
    "off, EXTENDED",
    "on, EXTENDED_FOR_PREPARED",
    "off, EXTENDED_FOR_PREPARED",
    "on, SIMPLE",
    "off, SIMPLE"
  })
  void anyTextReachesTheServerUnchanged(String scs, PreferQueryMode mode) throws SQLException {
    PGSimpleDataSource ds =
        FencingTestSupport.plain(
            db,
            d -> {
              d.setPreferQueryMode(mode);
              return d;
            });
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      s.execute("SET standard_conforming_strings = " + scs);
      for (String text : NASTY) {
        StringBuilder literal = new StringBuilder("SELECT ");
        CheckLiteral.quote(literal, text);
        // also behind another statement, as the check runs before the caller's
        s.execute(literal + ";SELECT 1");
        try (ResultSet rs = s.getResultSet()) {
          assertThat(rs.next()).isTrue();
          assertThat(rs.getString(1)).as("%s sent as %s", text, literal).isEqualTo(text);
        }
        assertThat(s.getMoreResults()).isTrue();
        assertThat(s.getMoreResults()).isFalse();
        assertThat(s.getUpdateCount()).isEqualTo(-1);
      }
    }
  }

  @ParameterizedTest
  @CsvSource({"a\u0000b"})
  void aNulCharacterIsRefusedBeforeAnythingIsSent(String text) {
    assertThatThrownBy(() -> CheckLiteral.quote(new StringBuilder(), text))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("NUL");
  }
}
