package dev.fencing.torture;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.PatroniCluster;
import dev.fencing.torture.TortureRun.Fault;
import dev.fencing.torture.Violation.Rule;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The torture workload on a two-node Patroni cluster with asynchronous replication ({@link
 * PatroniCluster}), through a multi-host URL ({@code targetServerType=primary}): the replica is cut
 * off, the workers receive more tokens, the leader's postmaster is killed hard, Patroni promotes
 * the replica, and the workers go on there ({@link Scenarios#failover(TortureRun)}).
 *
 * <p>With token epochs (V12) the checker finds no violation; the writes, issuances and refusals
 * lost with the WAL the replica never received are reported as the loss asynchronous replication
 * allows. With the sequence issuing raw values (no epoch), the promoted primary hands out again
 * tokens the old one had already given to workers: the checker reports them.
 */
class PatroniTortureTest {
  private static final Logger LOG = LoggerFactory.getLogger(PatroniTortureTest.class);
  private static final Duration TTL = Duration.ofMillis(800);

  @TempDir Path directory;

  @Test
  void asynchronousFailoverWithEpochsHasNoViolation() throws Exception {
    TortureRun.Result result = runWithFailover(43, false);

    assertThat(result.violations()).as(Report.summary(result)).isEmpty();
    assertThat(result.faults()).containsEntry(Fault.FAILOVER, 1);
    assertThat(result.lostToFailover().issuances())
        .as("tokens received after the cut were lost with the WAL: reported, not violations")
        .isPositive();
    assertThat(result.writes()).isGreaterThanOrEqualTo(3 * 3);
  }

  @Test
  void asynchronousFailoverWithoutEpochsIssuesTokensTwice() throws Exception {
    TortureRun.Result result = runWithFailover(44, true);

    assertThat(result.faults()).containsEntry(Fault.FAILOVER, 1);
    assertThat(result.violationsByRule().get(Rule.TOKEN_ISSUED_TWICE))
        .as(Report.summary(result))
        .isPositive();
  }

  private TortureRun.Result runWithFailover(long seed, boolean rawSequence) throws Exception {
    try (PatroniCluster cluster = PatroniCluster.start()) {
      TortureRun.Settings settings = new TortureRun.Settings(seed, 3, 2, TTL, true);
      TortureRun.Result result;
      try (TortureRun run =
          TortureRun.start(settings, TortureDatabase.patroni(cluster), directory)) {
        if (rawSequence) {
          issueRawSequenceValues(cluster.dataSource("postgres"));
        }
        Scenarios.failover(run);
        result = run.finish();
      }
      LOG.warn(
          "Patroni torture run{}: {}",
          rawSequence ? " WITHOUT epochs" : "",
          Report.summary(result));
      return result;
    }
  }

  /**
   * The test hook that switches epochs off: {@code fencing.issue_token} (V12) replaced by what
   * issued tokens before V12, the sequence's next value above the resource's floor. Before V12
   * there is nothing to replace.
   */
  static void issueRawSequenceValues(DataSource ds) throws SQLException {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      try (ResultSet rs =
          s.executeQuery("SELECT to_regprocedure('fencing.issue_token(bigint)') IS NOT NULL")) {
        rs.next();
        if (!rs.getBoolean(1)) {
          return;
        }
      }
      s.execute(
          """
          CREATE OR REPLACE FUNCTION fencing.issue_token(p_floor bigint) RETURNS bigint
              LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
          DECLARE
              v bigint := nextval('fencing.token_seq');
          BEGIN
              IF v <= coalesce(p_floor, 0) THEN
                  PERFORM setval('fencing.token_seq', p_floor);
                  v := nextval('fencing.token_seq');
              END IF;
              RETURN v;
          END
          $$""");
    }
  }
}
