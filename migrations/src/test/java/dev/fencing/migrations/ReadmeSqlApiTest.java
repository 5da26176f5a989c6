package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * README.md's "SQL API" table against the migrated fence: each function it names exists in the
 * schema with as many arguments and defaults as the README writes, returns what the README's {@code
 * →} says (nothing written: {@code void}), and is executable by the application role exactly when
 * the README does not call it "Operator only".
 */
class ReadmeSqlApiTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final Path README = Path.of("..", "README.md").toAbsolutePath().normalize();

  /** {@code `name(args)`}, then optionally {@code → `result`}. */
  private static final Pattern SIGNATURE =
      Pattern.compile("`([a-z_]+)\\(([^)`]*)\\)`(?: → `([^`]+)`)?");

  record Documented(String name, int args, int defaults, String result, boolean operatorOnly) {}

  @BeforeAll
  static void migrate() {
    assertThat(Fence.migrate(db)).isEqualTo(Fence.MIGRATIONS);
  }

  @Test
  void everyFunctionOfTheReadmesTableIsTheMigratedOne() throws IOException, SQLException {
    List<Documented> documented = documented();
    assertThat(documented).as("functions in README.md's SQL API table").hasSizeGreaterThan(15);
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT p.pronargs, p.pronargdefaults, pg_get_function_result(p.oid),"
                    + " has_function_privilege(?, p.oid, 'EXECUTE')"
                    + " FROM pg_proc p WHERE p.pronamespace = 'fencing'::regnamespace"
                    + " AND p.proname = ?")) {
      for (Documented f : documented) {
        ps.setString(1, db.appRole());
        ps.setString(2, f.name());
        try (ResultSet rs = ps.executeQuery()) {
          assertThat(rs.next()).as("fencing.%s exists", f.name()).isTrue();
          assertThat(rs.getInt(1)).as("arguments of %s", f.name()).isEqualTo(f.args());
          assertThat(rs.getInt(2))
              .as("defaulted arguments of %s", f.name())
              .isEqualTo(f.defaults());
          assertThat(result(rs.getString(3))).as("result of %s", f.name()).isEqualTo(f.result());
          assertThat(rs.getBoolean(4))
              .as(
                  "the application role may execute %s (README: operator only = %s)",
                  f.name(), f.operatorOnly())
              .isEqualTo(!f.operatorOnly());
          assertThat(rs.next()).as("one fencing.%s", f.name()).isFalse();
        }
      }
    }
  }

  /** The table's signatures; a row's second cell saying "Operator only" covers all of the row's. */
  private static List<Documented> documented() throws IOException {
    String readme = Files.readString(README, StandardCharsets.UTF_8);
    int start = readme.indexOf("### SQL API");
    assertThat(start).as("README.md has the SQL API section").isPositive();
    String section = readme.substring(start, readme.indexOf("\n\n", readme.indexOf("\n|", start)));
    List<Documented> functions = new ArrayList<>();
    for (String line : section.split("\n")) {
      if (!line.startsWith("| `")) {
        continue;
      }
      String[] cells = line.split(" \\| ", 2);
      boolean operatorOnly = cells[1].startsWith("Operator only");
      Matcher m = SIGNATURE.matcher(cells[0]);
      while (m.find()) {
        String args = m.group(2).strip();
        int count = args.isEmpty() ? 0 : args.split(",").length;
        int defaults = args.split("=", -1).length - 1;
        String result = m.group(3) == null ? "void" : m.group(3);
        functions.add(new Documented(m.group(1), count, defaults, result, operatorOnly));
      }
    }
    return functions;
  }

  /** PostgreSQL's result as the README writes it: a table by its columns, short type names. */
  private static String result(String pg) {
    if (pg.startsWith("TABLE(")) {
      List<String> columns = new ArrayList<>();
      for (String column : pg.substring(6, pg.length() - 1).split(", ")) {
        columns.add(column.substring(0, column.indexOf(' ')));
      }
      return "(" + String.join(", ", columns) + ")";
    }
    return pg.equals("timestamp with time zone") ? "timestamptz" : pg;
  }
}
