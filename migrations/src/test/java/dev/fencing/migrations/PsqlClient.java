package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real psql process, as any non-Java client would talk to the fence: {@code $FENCING_TEST_PSQL},
 * else the first psql on the PATH. Test code only.
 */
final class PsqlClient {
  private static final String PSQL = binary();

  /** What psql printed (stdout and stderr) and its exit code. */
  record Result(int exitCode, String output) {}

  private PsqlClient() {}

  /**
   * Runs {@code script} as {@code role} with {@code ON_ERROR_STOP=1} and verbose errors (so a
   * refusal's DETAIL is printed); {@code variables} are name, value pairs for {@code -v}.
   */
  static Result run(TestDatabaseExtension db, String role, String script, String... variables)
      throws IOException, InterruptedException {
    return start(db, role, script, List.of("-f", "-"), variables);
  }

  /**
   * Sends {@code sql} as one simple-query message ({@code psql -c}): several statements, even
   * several transactions, in one string, as a client library may send them.
   */
  static Result command(TestDatabaseExtension db, String role, String sql)
      throws IOException, InterruptedException {
    return start(db, role, "", List.of("-c", sql));
  }

  private static Result start(
      TestDatabaseExtension db, String role, String script, List<String> input, String... variables)
      throws IOException, InterruptedException {
    File binary = new File(PSQL);
    assertThat(binary.canExecute())
        .as(
            "psql must be on the PATH or in $FENCING_TEST_PSQL for this test (install"
                + " postgresql-client); found: %s",
            PSQL)
        .isTrue();
    URI uri = URI.create(db.jdbcUrl().substring("jdbc:".length()));
    List<String> command =
        new ArrayList<>(List.of(PSQL, "-X", "-v", "ON_ERROR_STOP=1", "-v", "VERBOSITY=verbose"));
    for (int i = 0; i + 1 < variables.length; i += 2) {
      command.add("-v");
      command.add(variables[i] + "=" + variables[i + 1]);
    }
    command.addAll(input);
    ProcessBuilder pb = new ProcessBuilder(command);
    Map<String, String> env = pb.environment();
    env.put("PGHOST", uri.getHost());
    env.put("PGPORT", String.valueOf(uri.getPort() < 0 ? 5432 : uri.getPort()));
    env.put("PGDATABASE", uri.getPath().substring(1));
    env.put("PGUSER", role);
    if (!db.password().isEmpty()) {
      env.put("PGPASSWORD", db.password());
    }
    pb.redirectErrorStream(true);
    Process p = pb.start();
    p.getOutputStream().write(script.getBytes(StandardCharsets.UTF_8));
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("psql finished").isTrue();
    return new Result(p.exitValue(), out);
  }

  private static String binary() {
    String configured = System.getenv("FENCING_TEST_PSQL");
    if (configured != null && !configured.isEmpty()) {
      return configured;
    }
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      File candidate = new File(dir, "psql");
      if (candidate.canExecute()) {
        return candidate.getPath();
      }
    }
    return "psql";
  }
}
