package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;

/**
 * What the commit's check ({@link TokenChecker#checkAndCommit}) sends returns: no row at all for a
 * transaction that wrote nothing (the check function is not called, and the COMMIT still runs), the
 * check's row for one that wrote; sent by hand on the driver's connection, so the row itself is
 * seen.
 */
class CommitCheckRowTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;
  private static TokenChecker checker;

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    checker = new TokenChecker("fencing", r -> true, false, FencingMetrics.NONE);
    exec(plain, "CREATE TABLE commit_row (id int PRIMARY KEY)");
  }

  /** Sends the commit's check of {@code tokens} on {@code c}; returns its rows' first columns. */
  private static List<Integer> checkAndCommit(Connection c, String[] resources, Long[] tokens)
      throws SQLException {
    List<Integer> rows = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(checker.checkAndCommitSql(resources.length))) {
      if (resources.length == 1) {
        ps.setString(1, resources[0]);
        ps.setLong(2, tokens[0]);
      } else {
        Array r = c.createArrayOf("text", resources);
        Array t = c.createArrayOf("bigint", tokens);
        ps.setArray(1, r);
        ps.setArray(2, t);
      }
      assertThat(ps.execute()).as("the check's result comes first").isTrue();
      try (ResultSet rs = ps.getResultSet()) {
        while (rs.next()) {
          rows.add(rs.getInt(1));
        }
      }
      assertThat(ps.getMoreResults()).as("then COMMIT's").isFalse();
    }
    assertThat(c.unwrap(BaseConnection.class).getTransactionState())
        .as("the COMMIT ended the transaction")
        .isEqualTo(TransactionState.IDLE);
    return rows;
  }

  @Test
  void aReadOnlyCommitReturnsNoCheckRowAndCallsNoCheckFunction() throws SQLException {
    String a = externalResource(plain, "commit-row-read-a", 5);
    String b = externalResource(plain, "commit-row-read-b", 5);
    try (Connection c = plain.getConnection()) {
      c.setAutoCommit(false);
      exec(c, "SELECT count(*) FROM commit_row");
      // a stale token: check_one would refuse it, so no error means it was not called
      assertThat(checkAndCommit(c, new String[] {a}, new Long[] {4L})).isEmpty();
      exec(c, "SELECT count(*) FROM commit_row");
      assertThat(checkAndCommit(c, new String[] {a, b}, new Long[] {5L, 4L})).isEmpty();
    }
  }

  @Test
  void aWrittenCommitReturnsTheCheckRow() throws SQLException {
    String a = externalResource(plain, "commit-row-written-a", 5);
    String b = externalResource(plain, "commit-row-written-b", 5);
    try (Connection c = plain.getConnection()) {
      c.setAutoCommit(false);
      exec(c, "INSERT INTO commit_row VALUES (1)");
      assertThat(checkAndCommit(c, new String[] {a}, new Long[] {6L})).containsExactly(1);
      exec(c, "INSERT INTO commit_row VALUES (2)");
      assertThat(checkAndCommit(c, new String[] {a, b}, new Long[] {6L, 5L})).containsExactly(0);
    }
    assertThat(FencingTestSupport.queryLong(plain, "SELECT count(*) FROM commit_row")).isEqualTo(2);
    assertThat(FencingTestSupport.maxSeen(plain, a)).isEqualTo(6);
  }
}
