package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.migrations.Interleaving.Isolation;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * V37: {@code check_tokens_if_written} checks a transaction that holds a {@code WITH HOLD} cursor,
 * whether or not it has written yet: the cursor's query runs to its end inside {@code COMMIT},
 * after the check, and may write then (here a view calling a writing function). Before V37 the
 * check returned NULL (nothing written, nothing checked) and a stale token's cursor wrote at
 * commit.
 */
class HeldCursorCheckTest extends InterleavingTestBase {
  private static final String CHECK =
      "SELECT fencing.check_tokens_if_written(ARRAY[?]::text[], ARRAY[?]::bigint[])";
  private static final String DECLARE = "DECLARE held CURSOR WITH HOLD FOR SELECT x FROM hcc_view";

  private static void schema(Connection c) throws SQLException {
    if (FenceSql.string(c, "SELECT to_regclass('hcc_view')::text") == null) {
      Fence.execute(c, "CREATE TABLE hcc_log (id serial PRIMARY KEY)");
      Fence.execute(
          c,
          "CREATE FUNCTION hcc_write() RETURNS int LANGUAGE sql"
              + " AS 'INSERT INTO hcc_log DEFAULT VALUES RETURNING 7'");
      Fence.execute(c, "CREATE VIEW hcc_view AS SELECT hcc_write() AS x");
    }
  }

  /** A resource whose first token was superseded: returns {stale, current}. */
  private static long[] handedOver(Connection c, String resource) throws SQLException {
    long first = Fence.acquire(c, resource, "holder-a", LEASE);
    assertThat(Fence.release(c, resource, first)).isTrue();
    long second = Fence.acquire(c, resource, "holder-b", LEASE);
    return new long[] {first, second};
  }

  @ParameterizedTest
  @EnumSource(Isolation.class)
  void aStaleTokenWithAHeldCursorIsRefusedAndItsQueryNeverRuns(Isolation isolation)
      throws SQLException {
    try (Connection observer = db.connect();
        Interleaving.Session writer = Interleaving.writer(db, isolation)) {
      schema(observer);
      String res = FenceSql.unique("held/stale/" + isolation.tag());
      long stale = handedOver(observer, res)[0];
      long before = Fence.count(observer, "SELECT count(*) FROM hcc_log");

      Interleaving.begin(writer, isolation);
      Fence.execute(writer.c(), DECLARE);
      assertThat(FenceSql.string(writer.c(), "SELECT pg_current_xact_id_if_assigned()::text"))
          .as("nothing written yet")
          .isNull();
      Fence.assertFails(Fence.STALE, () -> FenceSql.run(writer.c(), CHECK, res, stale));
      writer.c().rollback();

      assertThat(Fence.count(observer, "SELECT count(*) FROM hcc_log")).isEqualTo(before);
    }
  }

  @ParameterizedTest
  @EnumSource(Isolation.class)
  void theCurrentTokenIsCheckedAndTheCursorHoldsItsRows(Isolation isolation) throws SQLException {
    try (Connection observer = db.connect();
        Interleaving.Session writer = Interleaving.writer(db, isolation)) {
      schema(observer);
      String res = FenceSql.unique("held/current/" + isolation.tag());
      long current = handedOver(observer, res)[1];
      long before = Fence.count(observer, "SELECT count(*) FROM hcc_log");

      Interleaving.begin(writer, isolation);
      Fence.execute(writer.c(), DECLARE);
      assertThat(FenceSql.string(writer.c(), CHECK, res, current))
          .as("checked: the cursor may write at commit")
          .isNotNull();
      writer.c().commit();

      assertThat(Fence.count(observer, "SELECT count(*) FROM hcc_log")).isEqualTo(before + 1);
      assertThat(FenceSql.longValue(writer.c(), "FETCH NEXT FROM held")).isEqualTo(7);
      Fence.execute(writer.c(), "CLOSE held");
      writer.c().commit();
    }
  }

  @Test
  void aTransactionWithNeitherAWriteNorAHeldCursorIsNotChecked() throws SQLException {
    try (Connection observer = db.connect();
        Interleaving.Session writer = Interleaving.writer(db, Isolation.READ_COMMITTED)) {
      String res = FenceSql.unique("held/none");
      long stale = handedOver(observer, res)[0];
      Interleaving.begin(writer, Isolation.READ_COMMITTED);
      Fence.execute(writer.c(), "DECLARE plain CURSOR FOR SELECT 1");
      assertThat(FenceSql.string(writer.c(), CHECK, res, stale)).isNull();
      writer.c().rollback();
    }
  }
}
