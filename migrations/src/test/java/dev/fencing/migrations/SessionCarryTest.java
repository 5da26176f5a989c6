package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.MISSING;
import static dev.fencing.migrations.Fence.assertFails;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.migrations.Interleaving.Isolation;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 12, item 4: a carried token counts only in the transaction that carried it. A session-level
 * {@code fencing.tokens} (a client or library calling {@code set_config(..., false)} or {@code
 * SET}) stays on a pooled connection after its transaction, and the next transaction, with nothing
 * bound, must not write a protected table with it. Run as the application role.
 */
class SessionCarryTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final String RESOURCE = "carry/session";
  private static final String OTHER = "carry/other";
  private static final Duration TTL = Duration.ofMinutes(10);

  private static AppRole app;
  private static long token;
  private static long otherToken;

  @BeforeAll
  static void setUp() throws SQLException {
    assertThat(Fence.migrate(db)).isEqualTo(Fence.MIGRATIONS);
    app = AppRole.create(db, "carry_app");
    try (Connection admin = db.connect()) {
      FenceSql.run(admin, "CREATE TABLE carried (id int, started timestamptz)");
      FenceSql.run(admin, "CREATE TABLE probe (started timestamptz)");
      FenceSql.run(admin, "SELECT fencing.protect('carried', ?)", RESOURCE);
      app.grant("SELECT, INSERT", "carried");
      app.grant("SELECT, INSERT", "probe");
    }
    try (Connection c = app.connect()) {
      token = Fence.acquire(c, RESOURCE, "carrier", TTL);
      otherToken = Fence.acquire(c, OTHER, "carrier", TTL);
    }
  }

  @AfterAll
  static void dropRole() throws SQLException {
    app.close();
  }

  @BeforeEach
  void empty() throws SQLException {
    try (Connection admin = db.connect()) {
      FenceSql.run(admin, "SET session_replication_role = replica"); // a superuser's bypass
      FenceSql.run(admin, "TRUNCATE carried, probe");
    }
  }

  @ParameterizedTest
  @EnumSource(Isolation.class)
  void aSessionLevelTokenListIsIgnoredByTheNextTransaction(Isolation iso) throws SQLException {
    try (Connection c = app.connect()) {
      c.setAutoCommit(false);
      FenceSql.run(
          c, "SELECT set_config('fencing.tokens', ?, false)", RESOURCE + " " + token + ",");
      c.commit();
      assertThat(FenceSql.string(c, "SELECT current_setting('fencing.tokens')"))
          .as("the session-level value outlived its transaction")
          .isEqualTo(RESOURCE + " " + token + ",");
      c.commit();

      c.setTransactionIsolation(iso.jdbcLevel);
      assertFails(MISSING, () -> FenceSql.run(c, "INSERT INTO carried VALUES (1, now())"));
      c.rollback();
    }
    assertThat(carried()).isZero();
  }

  @ParameterizedTest
  @EnumSource(Isolation.class)
  void aCarriedListMadeSessionLevelIsIgnoredByTheNextTransaction(Isolation iso)
      throws SQLException {
    try (Connection c = app.connect()) {
      c.setAutoCommit(false);
      FenceSql.run(c, "SELECT fencing.carry(?, ?)", RESOURCE, token);
      FenceSql.run(
          c, "SELECT set_config('fencing.tokens', current_setting('fencing.tokens'), false)");
      c.commit();

      c.setTransactionIsolation(iso.jdbcLevel);
      assertFails(MISSING, () -> FenceSql.run(c, "INSERT INTO carried VALUES (2, now())"));
      c.rollback();
      // a carry of another resource in the next transaction does not revive it either
      FenceSql.run(c, "SELECT fencing.carry(?, ?)", OTHER, otherToken);
      assertFails(MISSING, () -> FenceSql.run(c, "INSERT INTO carried VALUES (3, now())"));
      c.rollback();
    }
    assertThat(carried()).isZero();
  }

  /**
   * Two transactions in one simple-query string share their start time ({@code now()}): the list
   * made session-level in the first is still not the second's, because the stamp carry() wrote
   * beside it was transaction-local.
   */
  @Test
  void twoTransactionsInOneStringWithTheSameStartTimeDoNotShareACarriedToken() throws Exception {
    PsqlClient.Result result =
        PsqlClient.command(
            db,
            app.name(),
            "BEGIN; SELECT fencing.carry('"
                + RESOURCE
                + "', "
                + token
                + "); SELECT set_config('fencing.tokens', current_setting('fencing.tokens'), false);"
                + " INSERT INTO probe VALUES (now()); COMMIT;"
                + " BEGIN; INSERT INTO probe VALUES (now()); COMMIT;"
                + " BEGIN; INSERT INTO carried VALUES (4, now()); COMMIT;");
    assertThat(result.exitCode()).as(result.output()).isNotZero();
    assertThat(result.output()).contains("ZF002", "missing fencing token");
    try (Connection admin = db.connect()) {
      assertThat(FenceSql.longValue(admin, "SELECT count(DISTINCT started) FROM probe"))
          .as("both transactions of the string started at the same now()")
          .isEqualTo(1);
      assertThat(FenceSql.longValue(admin, "SELECT count(*) FROM probe")).isEqualTo(2);
    }
    assertThat(carried()).isZero();
  }

  @ParameterizedTest
  @EnumSource(Isolation.class)
  void aTokenCarriedInTheTransactionIsCheckedByTheWriteAndAssignsNoTransactionIdBefore(
      Isolation iso) throws SQLException {
    try (Connection c = app.connect()) {
      c.setAutoCommit(false);
      c.setTransactionIsolation(iso.jdbcLevel);
      FenceSql.run(c, "SELECT fencing.carry(?, ?)", RESOURCE, token);
      FenceSql.run(c, "SELECT fencing.carry(?, ?)", OTHER, otherToken);
      assertThat(FenceSql.string(c, "SELECT pg_current_xact_id_if_assigned()::text"))
          .as("carry assigns no transaction id")
          .isNull();
      FenceSql.run(c, "INSERT INTO carried VALUES (5, now())");
      c.commit();
      // the carried token ended with its transaction
      assertFails(MISSING, () -> FenceSql.run(c, "INSERT INTO carried VALUES (6, now())"));
      c.rollback();
    }
    assertThat(carried()).isEqualTo(1);
  }

  private static long carried() throws SQLException {
    try (Connection admin = db.connect()) {
      return FenceSql.longValue(admin, "SELECT count(*) FROM carried");
    }
  }
}
