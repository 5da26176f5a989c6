package dev.fencing.examples.jpa;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Runs the example as a team would: {@code setup} as the deployer (the test database's migration
 * user: a superuser, or with {@code fencing.test.migrateAs=deployer} a non-superuser that owns the
 * database), then {@code run} as the application's login.
 */
class LedgerJpaAppTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  @Test
  void setUpThenWorkerAndZombie() throws SQLException {
    String login = db.role("login");
    Run setup =
        run(
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
            login);
    assertThat(setup.status()).as(setup.err()).isZero();
    assertThat(setup.out()).contains("fence migrations applied: ").contains("login " + login);

    Run run = run("run", "--url", db.jdbcUrl(), "--user", login);
    assertThat(run.status()).as(run.err()).isZero();
    assertThat(run.out().lines())
        .anyMatch(l -> l.startsWith("zombie acquired ledger, token "))
        .anyMatch(l -> l.startsWith("worker acquired ledger, token ") && l.endsWith(", wrote"))
        .anyMatch(l -> l.startsWith("zombie: refused, StaleFencingTokenException ZF001"))
        .contains("ledger: [deposit by the worker]")
        .noneMatch(l -> l.contains("DID NOT HOLD"));

    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*), sum(amount) FROM ledger_entry")) {
      rs.next();
      assertThat(rs.getLong(1)).isEqualTo(1);
      assertThat(rs.getLong(2)).isEqualTo(50);
    }
    // the login is what the role setup says: no superuser, owns nothing, not the fence's owner
    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT rolsuper, pg_has_role('"
                    + login
                    + "', '"
                    + db.ownerRole()
                    + "', 'MEMBER'), (SELECT count(*) FROM pg_class WHERE relowner = r.oid)"
                    + " FROM pg_roles r WHERE rolname = '"
                    + login
                    + "'")) {
      rs.next();
      assertThat(rs.getBoolean(1)).isFalse();
      assertThat(rs.getBoolean(2)).isFalse();
      assertThat(rs.getLong(3)).isZero();
    }
  }

  @Test
  void helpAndBadUsage() {
    Run help = run("--help");
    assertThat(help.status()).isZero();
    assertThat(help.out()).startsWith("usage: LedgerJpaApp setup").endsWith("\n");
    Run bad = run("frobnicate");
    assertThat(bad.status()).isEqualTo(2);
    assertThat(bad.err()).startsWith("unknown command frobnicate\nusage:").endsWith("\n");
    Run missing = run("run", "--url", db.jdbcUrl());
    assertThat(missing.status()).isEqualTo(2);
    assertThat(missing.err()).contains("--url and --user are required");
  }

  private record Run(int status, String out, String err) {}

  private static Run run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status =
        LedgerJpaApp.main(
            args,
            db.password().isEmpty() ? null : db.password(),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(
        status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }
}
