package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.postgresql.ds.PGSimpleDataSource;
import org.postgresql.jdbc.AutoSave;
import org.postgresql.jdbc.PreferQueryMode;

/**
 * The commit's check ({@link TokenChecker#checkAndCommit}) decides the same in a custom plan and a
 * generic one ({@code plan_cache_mode = force_generic_plan}, and {@code auto} after enough
 * executions of the server-prepared statement for PostgreSQL to switch to its generic plan), in
 * every {@code preferQueryMode}, with pgjdbc's autosave never and always, under READ COMMITTED,
 * REPEATABLE READ and SERIALIZABLE, for one token and two: a transaction that wrote with a stale
 * token is refused (ZF001) and commits nothing, one that wrote nothing commits without calling the
 * check function (with a stale token, which the function would refuse), one that wrote with current
 * tokens commits. The generic plan is built while read-only and written transactions alternate, so
 * a plan that held either answer of the test that the transaction wrote would decide wrongly. The
 * check before a {@code COMMIT} in SQL text ({@link TokenChecker#checkIfWritten}, the same test
 * without the {@code COMMIT}) likewise, and it reports a check only where the transaction wrote.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class CommitCheckGenericPlanTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final AtomicInteger CASES = new AtomicInteger();
  private static DataSource plain;
  private static TokenChecker checker;

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    checker = new TokenChecker("fencing", r -> true, false, FencingMetrics.NONE);
    exec(plain, "CREATE TABLE commit_plan (id int PRIMARY KEY, kase int NOT NULL)");
  }

  static Stream<Arguments> cases() {
    List<Arguments> all = new ArrayList<>();
    for (PreferQueryMode mode : PreferQueryMode.values()) {
      for (AutoSave autosave : new AutoSave[] {AutoSave.NEVER, AutoSave.ALWAYS}) {
        for (int isolation :
            new int[] {
              Connection.TRANSACTION_READ_COMMITTED,
              Connection.TRANSACTION_REPEATABLE_READ,
              Connection.TRANSACTION_SERIALIZABLE
            }) {
          for (int tokens = 1; tokens <= 2; tokens++) {
            for (String plan : new String[] {"force_generic_plan", "auto"}) {
              all.add(Arguments.of(mode, autosave, isolation, tokens, plan));
            }
          }
        }
      }
    }
    return all.stream();
  }

  private static List<FencingContext.Binding> bindings(FencingToken... tokens) {
    try (FencingScope scope = Fencing.bind(tokens)) {
      return checker.bound().bindings();
    }
  }

  @ParameterizedTest(name = "{0} autosave {1} isolation {2} tokens {3} {4}")
  @MethodSource("cases")
  void theCommitCheckDecidesTheSameInEveryPlan(
      PreferQueryMode mode, AutoSave autosave, int isolation, int tokens, String plan)
      throws SQLException {
    int kase = CASES.incrementAndGet();
    FencingToken[] current = new FencingToken[tokens];
    FencingToken[] stale = new FencingToken[tokens];
    for (int i = 0; i < tokens; i++) {
      String resource = externalResource(plain, "commit-plan-" + kase + "-" + i, 5);
      current[i] = FencingToken.of(resource, 5);
      // the last token stale, any before it current
      stale[i] = FencingToken.of(resource, i == tokens - 1 ? 4 : 5);
    }
    List<FencingContext.Binding> ok = bindings(current);
    List<FencingContext.Binding> old = bindings(stale);
    PGSimpleDataSource source = MatrixFixture.driver(db, mode, autosave);
    int id = kase * 100;
    try (Connection c = source.getConnection()) {
      exec(c, "SET plan_cache_mode = " + plan);
      c.setTransactionIsolation(isolation);
      c.setAutoCommit(false);
      // enough executions for pgjdbc to prepare the statement (prepareThreshold 5) and for the
      // server to choose its generic plan (after 5 custom ones), read-only and written alternating
      for (int i = 0; i < 16; i++) {
        if (i % 2 == 0) {
          exec(c, "SELECT count(*) FROM commit_plan");
        } else {
          exec(c, "INSERT INTO commit_plan VALUES (?, ?)", ++id, kase);
        }
        checker.checkAndCommit(c, ok, null);
      }
      if (mode != PreferQueryMode.SIMPLE) {
        assertThat(genericPlans(c)).as("the check ran in a generic plan").isPositive();
      }
      for (int round = 0; round < 2; round++) {
        // written, stale: refused, nothing committed, the transaction ended
        exec(c, "INSERT INTO commit_plan VALUES (?, ?)", ++id, kase);
        int refused = id;
        assertThatThrownBy(() -> checker.checkAndCommit(c, old, null))
            .isInstanceOf(StaleFencingTokenException.class)
            .extracting(e -> ((SQLException) e).getSQLState())
            .isEqualTo("ZF001");
        assertThat(count(c, refused)).as("nothing of the refused transaction").isZero();
        c.commit();
        // read-only, stale: committed, the check function not called (it would refuse)
        exec(c, "SELECT count(*) FROM commit_plan");
        checker.checkAndCommit(c, old, null);
        // written, current: committed
        exec(c, "INSERT INTO commit_plan VALUES (?, ?)", ++id, kase);
        checker.checkAndCommit(c, ok, null);
        assertThat(count(c, id)).as("the current token's write").isOne();
        c.commit();
      }
      if (mode != PreferQueryMode.SIMPLE) {
        assertThat(genericPlans(c)).as("the check ran in a generic plan").isPositive();
      }
    }
    assertThat(
            FencingTestSupport.queryLong(
                plain, "SELECT count(*) FROM commit_plan WHERE kase = ?", kase))
        .isEqualTo(8 + 2);
  }

  static Stream<Arguments> sqlCommitCases() {
    List<Arguments> all = new ArrayList<>();
    for (PreferQueryMode mode : PreferQueryMode.values()) {
      for (AutoSave autosave : new AutoSave[] {AutoSave.NEVER, AutoSave.ALWAYS}) {
        for (String plan : new String[] {"force_generic_plan", "auto"}) {
          all.add(Arguments.of(mode, autosave, plan));
        }
      }
    }
    return all.stream();
  }

  /**
   * The check before a {@code COMMIT} in SQL text ({@link TokenChecker#checkIfWritten}: the same
   * test, without the {@code COMMIT}) in a custom and a generic plan: it reports a check only for a
   * transaction that wrote (no row back is no check), calls nothing for one that wrote nothing (a
   * stale token, which the function would refuse), and refuses a stale token that wrote.
   */
  @ParameterizedTest(name = "{0} autosave {1} {2}")
  @MethodSource("sqlCommitCases")
  void theCheckBeforeACommitInSqlDecidesTheSameInEveryPlan(
      PreferQueryMode mode, AutoSave autosave, String plan) throws SQLException {
    int kase = CASES.incrementAndGet();
    String resource = externalResource(plain, "commit-plan-sql-" + kase, 5);
    List<FencingContext.Binding> ok = bindings(FencingToken.of(resource, 5));
    List<FencingContext.Binding> old = bindings(FencingToken.of(resource, 4));
    PGSimpleDataSource source = MatrixFixture.driver(db, mode, autosave);
    int id = kase * 100;
    try (Connection c = source.getConnection()) {
      exec(c, "SET plan_cache_mode = " + plan);
      c.setAutoCommit(false);
      for (int i = 0; i < 16; i++) {
        boolean write = i % 2 == 1;
        if (write) {
          exec(c, "INSERT INTO commit_plan VALUES (?, ?)", ++id, kase);
        } else {
          exec(c, "SELECT count(*) FROM commit_plan");
        }
        assertThat(checker.checkIfWritten(c, write ? ok : old, null))
            .as("checked exactly when the transaction wrote")
            .isEqualTo(write);
        c.commit();
      }
      if (mode != PreferQueryMode.SIMPLE) {
        assertThat(genericPlans(c)).as("the check ran in a generic plan").isPositive();
      }
      exec(c, "INSERT INTO commit_plan VALUES (?, ?)", ++id, kase);
      int refused = id;
      assertThatThrownBy(() -> checker.checkIfWritten(c, old, null))
          .isInstanceOf(StaleFencingTokenException.class)
          .extracting(e -> ((SQLException) e).getSQLState())
          .isEqualTo("ZF001");
      assertThat(count(c, refused)).as("nothing of the refused transaction").isZero();
      c.commit();
    }
    assertThat(
            FencingTestSupport.queryLong(
                plain, "SELECT count(*) FROM commit_plan WHERE kase = ?", kase))
        .isEqualTo(8);
  }

  private static long count(Connection c, int id) throws SQLException {
    Object n = FencingTestSupport.query(c, "SELECT count(*) FROM commit_plan WHERE id = ?", id);
    return ((Number) n).longValue();
  }

  /** The generic plans the server made of this connection's prepared commit checks. */
  private static long genericPlans(Connection c) throws SQLException {
    Object n =
        FencingTestSupport.query(
            c,
            "SELECT coalesce(sum(generic_plans), 0) FROM pg_catalog.pg_prepared_statements"
                + " WHERE statement LIKE '%fencing.check_one(%'"
                + " OR statement LIKE '%fencing.check_tokens(%'");
    c.commit();
    return ((Number) n).longValue();
  }
}
