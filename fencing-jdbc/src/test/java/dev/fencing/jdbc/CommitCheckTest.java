package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The check a transaction's end runs for writes the classifier could not see ({@link
 * TokenChecker#checkIfWritten}, {@link TokenChecker#checkAndCommit}): a transaction that wrote
 * nothing calls no fence function at all; one that wrote is checked by {@code check_one} for one
 * token, {@code check_tokens} for several, and refused when stale.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class CommitCheckTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;
  private static TokenChecker checker;

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    checker = new TokenChecker("fencing", r -> true, false, FencingMetrics.NONE);
  }

  /** The fence functions called in the open transaction of {@code c}, with their call counts. */
  private static @Nullable Object calls(Connection c) throws SQLException {
    return FencingTestSupport.query(
        c,
        "SELECT string_agg(funcname || ' ' || calls, ', ' ORDER BY funcname)"
            + " FROM pg_stat_xact_user_functions WHERE schemaname = 'fencing'"
            + " AND funcname IN ('check_one', 'check_token', 'check_tokens',"
            + " 'check_tokens_if_written', 'fence')");
  }

  private static List<FencingContext.Binding> bound() {
    return checker.bound().bindings();
  }

  @Test
  void aTransactionThatWroteNothingCallsNoFenceFunction() throws SQLException {
    String resource = externalResource(plain, "commit-check-read", 5);
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 5));
        Connection c = plain.getConnection()) {
      exec(c, "SET track_functions = 'all'");
      c.setAutoCommit(false);
      FencingTestSupport.query(c, "SELECT 1");
      assertThat(checker.checkIfWritten(c, bound(), null)).isFalse();
      assertThat(calls(c)).isNull();
      FencingTestSupport.query(c, "SELECT pg_catalog.pg_current_xact_id()"); // a hidden write
      assertThat(checker.checkIfWritten(c, bound(), null)).isTrue();
      assertThat(calls(c)).isEqualTo("check_one 1, fence 1");
      c.rollback();
    }
  }

  @Test
  void severalTokensAreCheckedByCheckTokens() throws SQLException {
    String a = externalResource(plain, "commit-check-a", 5);
    String b = externalResource(plain, "commit-check-b", 7);
    try (FencingScope scope = Fencing.bind(FencingToken.of(a, 5), FencingToken.of(b, 7));
        Connection c = plain.getConnection()) {
      exec(c, "SET track_functions = 'all'");
      c.setAutoCommit(false);
      assertThat(checker.checkIfWritten(c, bound(), null)).isFalse();
      assertThat(calls(c)).isNull();
      FencingTestSupport.query(c, "SELECT pg_catalog.pg_current_xact_id()");
      assertThat(checker.checkIfWritten(c, bound(), null)).isTrue();
      assertThat(calls(c)).isEqualTo("check_tokens 1, fence 2");
      c.rollback();
    }
  }

  @Test
  void aStaleTokenThatWroteIsRefusedAtCommitAndNothingCommits() throws SQLException {
    String resource = externalResource(plain, "commit-check-stale", 9);
    exec(plain, "CREATE TABLE commit_check_row (id int PRIMARY KEY)");
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 8));
        Connection c = plain.getConnection()) {
      c.setAutoCommit(false);
      exec(c, "INSERT INTO commit_check_row VALUES (1)");
      assertThatThrownBy(() -> checker.checkAndCommit(c, bound(), null))
          .isInstanceOf(StaleFencingTokenException.class);
    }
    assertThat(FencingTestSupport.queryLong(plain, "SELECT count(*) FROM commit_check_row"))
        .isZero();
  }

  @Test
  void aFunctionOnTheSearchPathCannotStandInForTheTestOfAWrite() throws SQLException {
    String resource = externalResource(plain, "commit-check-path", 9);
    exec(plain, "CREATE TABLE commit_check_path (id int PRIMARY KEY)");
    exec(
        plain,
        "CREATE FUNCTION public.pg_current_xact_id_if_assigned() RETURNS xid8"
            + " LANGUAGE sql AS 'SELECT NULL::xid8'");
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 8));
        Connection c = plain.getConnection()) {
      exec(c, "SET search_path = public, pg_catalog"); // public's function first, if unqualified
      c.setAutoCommit(false);
      exec(c, "INSERT INTO commit_check_path VALUES (1)");
      assertThatThrownBy(() -> checker.checkAndCommit(c, bound(), null))
          .isInstanceOf(StaleFencingTokenException.class);
    }
    assertThat(FencingTestSupport.queryLong(plain, "SELECT count(*) FROM commit_check_path"))
        .isZero();
  }
}
