package dev.fencing.torture;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.EmbeddedCluster;
import dev.fencing.torture.Violation.Rule;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The short scripted run ({@link Scenarios#scripted}) against mutants of the statement trigger of
 * tables protected as a whole ({@code fencing.enforce_statement}), each replacing the function for
 * the run only: the checker must report what each breaks, and only the routes into the resources'
 * {@link TortureTables#tableOf tables} can show it. The real product gives 0 violations in {@link
 * TortureRunTest}.
 */
class TortureMutantTest {
  private static final Duration TTL = Duration.ofMillis(800);
  private static final String TRIGGER = "fencing.enforce_statement()";

  private static EmbeddedCluster cluster;

  @TempDir(cleanup = org.junit.jupiter.api.io.CleanupMode.ON_SUCCESS)
  Path directory;

  private record Run(List<String> outcomes, TortureRun.Result result) {}

  @BeforeAll
  static void startCluster() {
    cluster = EmbeddedCluster.start();
  }

  @AfterAll
  static void stopCluster() {
    cluster.close();
  }

  /**
   * {@code enforce_statement} accepting every statement: the zombies that write into a table
   * protected as a whole commit (the carried token's and the replayed marker's), the one into the
   * per-row protected table is still refused.
   */
  @Test
  void aStatementTriggerThatChecksNothingIsCaughtByTheTableRoutes() throws Exception {
    Run run =
        runWith(
            definition ->
                definition.replaceFirst(
                    "(?s)\\bBEGIN\\b",
                    "BEGIN IF TG_LEVEL = 'ROW' THEN RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD"
                        + " ELSE NEW END; END IF; RETURN NULL;"));

    assertThat(run.outcomes())
        .contains("protected zombie w1 REFUSED", "table zombie w0 ACK", "replay zombie w1 ACK");
    assertThat(run.result().violationsByRule().get(Rule.STALE_WRITE))
        .as(Report.summary(run.result()))
        .isGreaterThanOrEqualTo(2);
    assertThat(run.result().violationsByRule().get(Rule.TOKEN_DECREASED)).isPositive();
  }

  /**
   * {@code enforce_statement} accepting any marker of the resource without comparing its MAC (which
   * names the transaction): only the zombie that replays a marker of an earlier transaction
   * commits; the carried stale token is still refused.
   */
  @Test
  void aStatementTriggerThatAcceptsAnyMarkerIsCaughtOnlyByTheReplay() throws Exception {
    Run run =
        runWith(
            definition ->
                definition.replace(
                    "IF v_parts[3] = left(", "IF v_parts[3] <> '' OR v_parts[3] = left("));

    assertThat(run.outcomes())
        .contains("table zombie w0 REFUSED", "replay zombie w1 ACK", "carry-on zombie w1 REFUSED");
    assertThat(run.result().violationsByRule().get(Rule.STALE_WRITE))
        .as(Report.summary(run.result()))
        .isPositive();
    assertThat(run.result().violationsByRule().get(Rule.TOKEN_DECREASED)).isPositive();
  }

  /**
   * The scripted run with {@code enforce_statement} replaced by {@code mutant} of its definition,
   * restored afterwards.
   */
  private Run runWith(UnaryOperator<String> mutant) throws Exception {
    TortureRun.Settings settings = new TortureRun.Settings(42, 3, 2, TTL, true);
    try (TortureRun run =
        TortureRun.start(settings, TortureDatabase.embedded(cluster), directory)) {
      DataSource ds = run.database().dataSource();
      String original = definition(ds);
      String mutated = mutant.apply(original);
      assertThat(mutated).as("the mutant changes the trigger").isNotEqualTo(original);
      execute(ds, mutated);
      try {
        List<String> outcomes = Scenarios.scripted(run);
        return new Run(outcomes, run.finish());
      } finally {
        execute(ds, original);
      }
    }
  }

  private static String definition(DataSource ds) throws SQLException {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery("SELECT pg_get_functiondef('" + TRIGGER + "'::regprocedure)")) {
      rs.next();
      return rs.getString(1);
    }
  }

  private static void execute(DataSource ds, String sql) throws SQLException {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }
}
