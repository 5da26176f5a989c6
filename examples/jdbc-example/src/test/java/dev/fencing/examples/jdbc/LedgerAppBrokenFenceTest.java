package dev.fencing.examples.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The example is a demonstration that checks itself: on a database whose fence lets the zombie's
 * write through, {@code run} fails (exit 1) instead of printing its trace and exiting 0.
 */
class LedgerAppBrokenFenceTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  @Test
  void runFailsWhenTheZombiesWriteCommits() throws SQLException {
    String login = db.role("login");
    assertThat(
            LedgerApp.main(
                new String[] {
                  "setup",
                  "--url",
                  db.jdbcUrl(),
                  "--user",
                  db.migrationUser(),
                  "--owner-role",
                  db.ownerRole(),
                  "--app-role",
                  db.appRole(),
                  "--login",
                  login
                },
                password(),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                System.err))
        .isZero();
    // a broken fence: the check accepts every token, the table's triggers are off
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      s.execute("ALTER TABLE ledger_entry DISABLE TRIGGER USER");
      s.execute(
          "CREATE OR REPLACE FUNCTION fencing.check_one(p_resource text, p_token bigint)"
              + " RETURNS integer LANGUAGE sql AS 'SELECT 0'");
    }

    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status =
        LedgerApp.main(
            new String[] {"run", "--url", db.jdbcUrl(), "--user", login},
            password(),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));

    assertThat(out.toString(StandardCharsets.UTF_8))
        .contains("zombie wrote: THE FENCE DID NOT HOLD");
    assertThat(status).as(out.toString(StandardCharsets.UTF_8)).isEqualTo(1);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .startsWith("run failed: the zombie's write committed: the fence did not hold");
  }

  private static String password() {
    return db.password().isEmpty() ? null : db.password();
  }
}
