package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.INVALID_ARGUMENT;
import static dev.fencing.migrations.Fence.INVALID_RESOURCE;
import static dev.fencing.migrations.Fence.MISSING;
import static dev.fencing.migrations.Fence.NEVER_ISSUED;
import static dev.fencing.migrations.Fence.STALE;
import static dev.fencing.migrations.Fence.assertFails;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 12, item 3: the rejection log holds only refusals that happened. A refusal by the database
 * carries a receipt in its DETAIL; {@code record_rejection} records a refusal from that DETAIL
 * only, once per receipt, and a client's own lease-lost refusal only when the database agrees the
 * lease is lost. Run as the application role, which could write any row into the log before.
 */
class RejectionReceiptTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final Duration TTL = Duration.ofMinutes(5);
  private static final String UNDEFINED_FUNCTION = "42883";
  private static final String STILL_VALID = "55000";
  private static final Pattern RECEIPT =
      Pattern.compile("\"receipt\": \"([0-9]+)\\.([0-9]+)\\.([0-9a-f]{16})\\.([0-9a-f]{32})\"");

  private static AppRole app;

  @BeforeAll
  static void setUp() throws SQLException {
    assertThat(Fence.migrate(db)).isEqualTo(Fence.MIGRATIONS);
    app = AppRole.create(db, "receipt_app");
    try (Connection admin = db.connect()) {
      FenceSql.run(admin, "CREATE TABLE guarded (id int)");
      FenceSql.run(admin, "SELECT fencing.protect('guarded', 'receipt/guarded')");
      app.grant("INSERT", "guarded");
    }
  }

  @AfterAll
  static void dropRole() throws SQLException {
    app.close();
  }

  @Test
  void theApplicationRoleCannotWriteARefusalThatDidNotHappen() throws SQLException {
    String victim = "receipt/victim";
    try (Connection c = app.connect()) {
      long token = Fence.acquire(c, victim, "innocent", TTL);
      long before = rejections();

      // the three-argument form took any resource, token and reason on trust
      assertFails(
          UNDEFINED_FUNCTION,
          () ->
              FenceSql.run(c, "SELECT fencing.record_rejection(?, ?, 'ZF001')", victim, token - 1));
      // a refusal's fields without a receipt, with a made-up one, or with another refusal's
      String forged = "{\"resource\": \"" + victim + "\", \"token\": " + token + ", \"reason\": ";
      for (String refusal :
          List.of(
              forged + "\"stale_token\"}",
              forged + "\"never_issued\", \"receipt\": \"1.2.0123456789abcdef.0\"}",
              forged
                  + "\"stale_token\", \"receipt\": \"1700000000000000.42.0123456789abcdef."
                  + "0123456789abcdef0123456789abcdef\"}",
              forged + "\"token_used\", \"receipt\": null}",
              "{\"resource\": \"" + victim + "\", \"reason\": \"missing_token\"}",
              "not json",
              "[\"" + victim + "\"]",
              "{}")) {
        assertFails(INVALID_ARGUMENT, () -> Fence.recordRejection(c, refusal));
      }
      assertThat(rejections()).as("nothing was recorded").isEqualTo(before);
    }
  }

  @Test
  void aRefusalIsRecordedFromItsDetailOnceWithTheFactsTheDatabaseKnows() throws SQLException {
    String r = "receipt/stale";
    try (Connection c = app.connect()) {
      long alice = Fence.acquire(c, r, "alice", TTL);
      Fence.release(c, r, alice);
      long bob = Fence.acquire(c, r, "bob", TTL);
      c.setAutoCommit(false);
      SQLException refused = assertFails(STALE, () -> Fence.check(c, r, alice));
      c.rollback();
      c.setAutoCommit(true);
      long before = rejections();

      long id = Fence.recordRejection(c, refused);
      assertThat(Fence.recordRejection(c, refused)).as("the same receipt again").isEqualTo(id);
      assertThat(rejections()).isEqualTo(before + 1);

      try (Connection admin = db.connect();
          PreparedStatement ps =
              FenceSql.prepare(
                  admin,
                  "SELECT resource, token, max_seen, holder, reason, sqlstate, db_user,"
                      + " receipt, refused_at <= rejected_at AND refused_at > now() - interval"
                      + " '1 minute' FROM fencing.rejection WHERE id = ?",
                  id);
          ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getString("resource")).isEqualTo(r);
        assertThat(rs.getLong("token")).isEqualTo(alice);
        assertThat(rs.getLong("max_seen")).isEqualTo(bob);
        assertThat(rs.getString("holder")).isEqualTo("alice");
        assertThat(rs.getString("reason")).isEqualTo("stale_token");
        assertThat(rs.getString("sqlstate")).isEqualTo(STALE);
        assertThat(rs.getString("db_user")).isEqualTo(app.name());
        assertThat(Fence.detail(refused)).contains("\"receipt\": \"" + rs.getString("receipt"));
        assertThat(rs.getBoolean(9)).as("refused_at is when the database refused").isTrue();
      }
    }
  }

  @Test
  void aReceiptCoversItsResourceTokenReasonAndItself() throws SQLException {
    String r = "receipt/tamper";
    try (Connection c = app.connect()) {
      long old = Fence.acquire(c, r, "old", TTL);
      Fence.release(c, r, old);
      Fence.acquire(c, "receipt/other", "other", TTL);
      Fence.acquire(c, r, "new", TTL);
      c.setAutoCommit(false);
      String detail = Fence.detail(assertFails(STALE, () -> Fence.check(c, r, old)));
      c.rollback();
      c.setAutoCommit(true);
      Matcher receipt = RECEIPT.matcher(detail);
      assertThat(receipt.find()).as(detail).isTrue();
      long before = rejections();

      List<String> tampered =
          List.of(
              detail.replace("\"token\": " + old, "\"token\": " + (old - 1)),
              detail.replace("\"resource\": \"" + r, "\"resource\": \"receipt/other"),
              detail.replace("stale_token", "never_issued"),
              detail.replace(receipt.group(1) + ".", (Long.parseLong(receipt.group(1)) + 1) + "."),
              detail.replace("." + receipt.group(2) + ".", "." + receipt.group(2) + "1."),
              detail.replace(receipt.group(3), "0123456789abcdef"),
              detail.replace(receipt.group(4), flipFirst(receipt.group(4))));
      for (String refusal : tampered) {
        assertThat(refusal).isNotEqualTo(detail);
        assertFails(INVALID_ARGUMENT, () -> Fence.recordRejection(c, refusal));
      }
      assertThat(rejections()).isEqualTo(before);
      Fence.recordRejection(c, detail);
      assertThat(rejections()).isEqualTo(before + 1);
    }
  }

  @Test
  void everyRefusalOfTheDatabaseCarriesAReceiptThatRecordsItsReason() throws SQLException {
    try (Connection c = app.connect()) {
      String r = "receipt/kinds";
      long first = Fence.acquire(c, r, "first", TTL);
      Fence.release(c, r, first);
      long current = Fence.acquire(c, r, "current", TTL);
      FenceSql.run(c, "SELECT fencing.create_resource('receipt/guarded')");
      FenceSql.run(c, "SELECT fencing.create_resource('receipt/strict', true, true)");
      // (strict: the first transaction of token 5 uses it)
      c.setAutoCommit(false);
      Fence.check(c, "receipt/strict", 5L);
      c.commit();

      assertRecorded(c, STALE, "stale_token", "SELECT fencing.check_token(?, ?)", r, first);
      assertRecorded(
          c, NEVER_ISSUED, "never_issued", "SELECT fencing.check_token(?, ?)", r, 99999L);
      assertRecorded(
          c, MISSING, "missing_token", "SELECT fencing.check_token(?, ?::bigint)", r, null);
      assertRecorded(c, MISSING, "missing_token", "INSERT INTO guarded VALUES (1)");
      assertRecorded(
          c, STALE, "token_used", "SELECT fencing.check_token(?, ?)", "receipt/strict", 5L);
      assertRecorded(
          c, STALE, "stale_token", "SELECT fencing.renew(?, ?, interval '1 minute')", r, first);
      assertThat(current).isGreaterThan(first);
    }
  }

  @Test
  void aRefusalWhoseConnectionDiedIsRecordedLaterFromAnotherConnection() throws SQLException {
    String r = "receipt/later";
    String detail;
    try (Connection c = app.connect()) {
      long old = Fence.acquire(c, r, "old", TTL);
      Fence.release(c, r, old);
      Fence.acquire(c, r, "new", TTL);
      int pid = (int) FenceSql.longValue(c, "SELECT pg_backend_pid()");
      c.setAutoCommit(false);
      detail = Fence.detail(assertFails(STALE, () -> Fence.check(c, r, old)));
      try (Connection admin = db.connect()) {
        FenceSql.run(admin, "SELECT pg_terminate_backend(?)", pid);
      }
    }
    try (Connection later = app.connect()) {
      long before = rejections();
      Fence.recordRejection(later, detail);
      assertThat(rejections()).isEqualTo(before + 1);
    }
  }

  @Test
  void aLeaseLostRefusalIsRecordedOnlyWhenTheDatabaseAgreesTheLeaseIsLost() throws SQLException {
    String r = "receipt/lease";
    try (Connection c = app.connect()) {
      long token = Fence.acquire(c, r, "carol", TTL);
      long before = rejections();

      SQLException valid = assertFails(STILL_VALID, () -> recordLeaseLost(c, r, token));
      assertThat(valid.getMessage()).contains("is still valid");
      assertFails(INVALID_ARGUMENT, () -> recordLeaseLost(c, r, token + 1000));
      assertFails(INVALID_RESOURCE, () -> recordLeaseLost(c, "receipt/no-such-lease", 1));
      assertThat(rejections()).isEqualTo(before);

      // released
      Fence.release(c, r, token);
      long id = recordLeaseLost(c, r, token);
      try (Connection admin = db.connect()) {
        assertThat(
                FenceSql.string(
                    admin,
                    "SELECT reason || ' ' || sqlstate || ' ' || holder || ' ' ||"
                        + " (receipt IS NULL AND refused_at IS NULL)"
                        + " FROM fencing.rejection WHERE id = ?",
                    id))
            .isEqualTo("lease_lost ZF005 carol true");
      }

      // expired (database clock), and superseded
      long shortLived = Fence.acquire(c, r, "dave", Duration.ofMillis(200));
      await().atMost(Interleaving.PATIENCE).until(() -> !FenceSql.status(c, r).leaseValid());
      recordLeaseLost(c, r, shortLived);
      Fence.acquire(c, r, "erin", TTL);
      recordLeaseLost(c, r, shortLived);
      assertThat(rejections()).isEqualTo(before + 3);
    }
  }

  @Test
  void psqlRecordsARefusalByPassingItsDetail() throws Exception {
    String r = "receipt/psql";
    long old;
    try (Connection c = app.connect()) {
      old = Fence.acquire(c, r, "old", TTL);
      Fence.release(c, r, old);
      Fence.acquire(c, r, "new", TTL);
    }
    PsqlClient.Result refused =
        PsqlClient.run(db, app.name(), "SELECT fencing.check_token('" + r + "', " + old + ");\n");
    assertThat(refused.exitCode()).as(refused.output()).isNotZero();
    Matcher detail = Pattern.compile("DETAIL:  (\\{.*\\})").matcher(refused.output());
    assertThat(detail.find()).as(refused.output()).isTrue();

    PsqlClient.Result recorded =
        PsqlClient.run(
            db,
            app.name(),
            "SELECT fencing.record_rejection(:'refusal');\n",
            "refusal",
            detail.group(1));
    assertThat(recorded.exitCode()).as(recorded.output()).isZero();
    try (Connection admin = db.connect()) {
      assertThat(
              FenceSql.longValue(
                  admin,
                  "SELECT count(*) FROM fencing.rejection WHERE resource = ? AND token = ?"
                      + " AND reason = 'stale_token' AND receipt IS NOT NULL",
                  r,
                  old))
          .isEqualTo(1);
    }
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * Runs {@code sql} in a transaction, expects the refusal, and records it from its DETAIL: one
   * more row, with the reason and SQLSTATE of the refusal.
   */
  private static void assertRecorded(
      Connection c, String sqlState, String reason, String sql, Object... args)
      throws SQLException {
    c.setAutoCommit(false);
    SQLException refused = assertFails(sqlState, () -> FenceSql.run(c, sql, args));
    c.rollback();
    c.setAutoCommit(true);
    long id = Fence.recordRejection(c, refused);
    try (Connection admin = db.connect()) {
      assertThat(
              FenceSql.string(
                  admin,
                  "SELECT reason || ' ' || sqlstate FROM fencing.rejection WHERE id = ?",
                  id))
          .as(sql)
          .isEqualTo(reason + " " + sqlState);
    }
  }

  private static long recordLeaseLost(Connection c, String resource, long token)
      throws SQLException {
    return Fence.recordRejection(
        c,
        "{\"resource\": \""
            + resource
            + "\", \"token\": "
            + token
            + ", \"reason\": \"lease_lost\"}");
  }

  private static long rejections() throws SQLException {
    try (Connection admin = db.connect()) {
      return FenceSql.longValue(admin, "SELECT count(*) FROM fencing.rejection");
    }
  }

  private static String flipFirst(String hex) {
    return (hex.charAt(0) == '0' ? "1" : "0") + hex.substring(1);
  }
}
