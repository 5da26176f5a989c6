package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.NEVER_ISSUED;
import static dev.fencing.migrations.Fence.STALE;
import static dev.fencing.migrations.Fence.assertFails;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.migrations.Interleaving.Isolation;
import dev.fencing.migrations.Interleaving.Session;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * V46: a check in a READ ONLY transaction gets the fence's answer without a lock. Before V46 every
 * path but the fast one (READ COMMITTED, a local resource's current token) failed with PostgreSQL's
 * 25006 "cannot execute SELECT FOR SHARE in a read-only transaction": the current token of a strict
 * or external resource, any token under REPEATABLE READ / SERIALIZABLE, and a stale token, which
 * deserved ZF001.
 */
class ReadOnlyCheckTest extends InterleavingTestBase {

  private static final String READ_ONLY_TRANSACTION = "25006";
  private static final String ACTIVE_TRANSACTION = "25001";

  /** How the transaction became READ ONLY. */
  enum ReadOnly {
    /** pgjdbc's {@code setReadOnly(true)}: it begins each transaction {@code READ ONLY}. */
    JDBC,
    /** {@code SET TRANSACTION READ ONLY} as SQL, the transaction's first statement. */
    SET_TRANSACTION,
    /** The session's {@code default_transaction_read_only}. */
    SESSION_DEFAULT;

    /** Before the session's transactions: the session's default. */
    void prepare(Connection c) throws SQLException {
      if (this == SESSION_DEFAULT) {
        c.setAutoCommit(true);
        Fence.execute(c, "SET default_transaction_read_only = on");
        c.setAutoCommit(false);
      }
    }

    /** Begins a transaction READ ONLY this way. */
    void begin(Session s, Isolation iso) throws SQLException {
      if (this == JDBC) {
        s.c().setReadOnly(true); // between transactions: pgjdbc begins the next one READ ONLY
      }
      Interleaving.begin(s, iso);
      if (this == SET_TRANSACTION) {
        Fence.execute(s.c(), "SET TRANSACTION READ ONLY");
      }
    }
  }

  private static String name(String kind, Isolation iso, ReadOnly how) {
    return "ro-" + kind + "-" + iso.tag() + "-" + how.name().toLowerCase(Locale.ROOT);
  }

  /** Acquires a token and frees the lease again: the token stays current until the next acquire. */
  private static long currentTokenWithFreeLease(Connection admin, String res) throws SQLException {
    long token = Fence.acquire(admin, res, "holder-a", LEASE);
    assertThat(Fence.release(admin, res, token)).isTrue();
    return token;
  }

  private static long call(Connection c, String sql, String res, long token) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, res);
      ps.setLong(2, token);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return rs.getLong(1);
      }
    }
  }

  /** The check functions the application calls, each with one resource and one token. */
  private static final String[] CHECKS = {
    "SELECT fencing.check_token(?, ?)",
    "SELECT fencing.check_one(?, ?)",
    "SELECT fencing.check_tokens(ARRAY[?::text], ARRAY[?::bigint])",
  };

  private static void readOnly(Session s, Isolation iso, ReadOnly how) throws SQLException {
    how.begin(s, iso);
    assertThat(FenceSql.string(s.c(), "SHOW transaction_read_only")).isEqualTo("on");
  }

  /**
   * Each resource kind and token: the current token accepted, a stale or never-issued one refused
   * with the fence's SQLSTATE, with every check function, nothing changed (red before V46: 25006
   * "cannot execute SELECT FOR SHARE in a read-only transaction", or "UPDATE" for a strict resource
   * and a newer external token).
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void theFenceAnswersInAReadOnlyTransaction(Isolation iso) throws SQLException {
    for (ReadOnly how : ReadOnly.values()) {
      String local = name("local", iso, how);
      String strict = name("strict", iso, how);
      String external = name("external", iso, how);
      try (Session admin = Interleaving.session(db);
          Session reader = Interleaving.writer(db, iso)) {
        how.prepare(reader.c());
        long t1 = Fence.acquireAfterExpiry(admin.c(), local, "holder-a", Duration.ofMillis(1));
        long t2 = Fence.acquireAfterExpiry(admin.c(), local, "holder-b", LEASE);
        Interleaving.createResource(admin.c(), strict, false, true);
        long s1 = currentTokenWithFreeLease(admin.c(), strict);
        Interleaving.createResource(admin.c(), external, true, false);
        assertThat(Fence.check(admin.c(), external, 10L)).isEqualTo(10L);
        String before = snapshot(admin.c(), local, strict, external);

        for (String check : CHECKS) {
          readOnly(reader, iso, how);
          assertThat(call(reader.c(), check, local, t2)).as(check).isNotNegative();
          assertThat(call(reader.c(), check, strict, s1)).as(check).isNotNegative();
          assertThat(call(reader.c(), check, external, 10)).as(check).isNotNegative();
          assertThat(call(reader.c(), check, external, 11)).as(check).isNotNegative();
          reader.c().commit();

          for (Object[] refused :
              new Object[][] {
                {local, t1, STALE}, {local, t2 + 1, NEVER_ISSUED}, {external, 9L, STALE}
              }) {
            readOnly(reader, iso, how);
            SQLException e =
                assertFails(
                    (String) refused[2],
                    () -> call(reader.c(), check, (String) refused[0], (Long) refused[1]));
            assertThat(Fence.detail(e)).contains("\"receipt\"");
            reader.c().rollback();
          }
        }
        // nothing recorded: max_seen, last_used, updated_at as they were
        assertThat(snapshot(admin.c(), local, strict, external)).isEqualTo(before);
      }
    }
  }

  /**
   * A strict resource's token already used by a committed transaction is refused as in a read-write
   * transaction (ZF001 "already used"), and the READ ONLY check of an unused token does not use it:
   * a read-write transaction may still.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void aStrictTokenIsUsedOnlyByAWrite(Isolation iso) throws SQLException {
    String res = "ro-strict-used-" + iso.tag();
    try (Session admin = Interleaving.session(db);
        Session reader = Interleaving.writer(db, iso)) {
      Interleaving.createResource(admin.c(), res, false, true);
      long t = currentTokenWithFreeLease(admin.c(), res);
      readOnly(reader, iso, ReadOnly.JDBC);
      assertThat(Fence.check(reader.c(), res, t)).isEqualTo(t);
      reader.c().commit();
      reader.c().setReadOnly(false);
      Interleaving.begin(reader, iso);
      assertThat(Fence.check(reader.c(), res, t)).isEqualTo(t);
      reader.c().commit();

      readOnly(reader, iso, ReadOnly.JDBC);
      SQLException used = assertFails(STALE, () -> Fence.check(reader.c(), res, t));
      assertThat(used.getMessage()).contains("already used by a committed transaction");
      reader.c().rollback();
    }
  }

  /**
   * No lock: a handover does not wait for a READ ONLY transaction checked on a path that locks in a
   * read-write one (REPEATABLE READ, SERIALIZABLE; a strict resource under READ COMMITTED), and the
   * transaction reads on. Under a snapshot its answer is the snapshot's: everything it reads was
   * committed before the newer token, so the superseded token is still accepted there; a new
   * transaction is refused.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void aHandoverDoesNotWaitForAReadOnlyCheck(Isolation iso) throws SQLException {
    String res = "ro-handover-" + iso.tag();
    try (Session admin = Interleaving.session(db);
        Session reader = Interleaving.writer(db, iso);
        Session acquirer = Interleaving.session(db)) {
      // strict, so that READ COMMITTED takes the locking path too
      Interleaving.createResource(admin.c(), res, false, true);
      long t1 = currentTokenWithFreeLease(admin.c(), res);

      readOnly(reader, iso, ReadOnly.JDBC);
      assertThat(Fence.check(reader.c(), res, t1)).isEqualTo(t1);
      Fence.Acquired next =
          Interleaving.withoutBlocking(
              pool(),
              () -> Fence.tryAcquire(acquirer.c(), res, "holder-b", LEASE, Duration.ofSeconds(2)));
      assertThat(next.acquired()).isTrue();
      assertThat(next.token()).isNotNull().isGreaterThan(t1);

      if (iso.snapshotPerTransaction()) {
        assertThat(Fence.check(reader.c(), res, t1)).isEqualTo(t1);
      } else {
        assertFails(STALE, () -> Fence.check(reader.c(), res, t1));
      }
      reader.c().rollback();
      readOnly(reader, iso, ReadOnly.JDBC);
      assertFails(STALE, () -> Fence.check(reader.c(), res, t1));
      reader.c().rollback();
    }
  }

  /**
   * The fast path (READ COMMITTED, a local resource's current token) of a resource with protected
   * tables leaves no marker in a READ ONLY transaction: no protected table can be written there,
   * and the marker's transaction id cannot be had on a hot standby (HotStandbyCheckTest). Red on
   * V44: the check assigned the transaction an id.
   */
  @Test
  void aReadOnlyCheckOfAProtectedResourceAssignsNoTransactionId() throws SQLException {
    String res = "ro-protected";
    try (Session admin = Interleaving.session(db);
        Session reader = Interleaving.writer(db, Isolation.READ_COMMITTED)) {
      Fence.execute(admin.c(), "CREATE TABLE public.ro_guarded (id int)");
      Fence.execute(admin.c(), "SELECT fencing.protect('public.ro_guarded', '" + res + "')");
      long t = Fence.acquire(admin.c(), res, "holder-a", LEASE);
      readOnly(reader, Isolation.READ_COMMITTED, ReadOnly.JDBC);
      assertThat(Fence.check(reader.c(), res, t)).isEqualTo(t);
      assertThat(FenceSql.string(reader.c(), "SELECT pg_current_xact_id_if_assigned()::text"))
          .isNull();
      reader.c().rollback();
    }
  }

  /**
   * PostgreSQL keeps a READ ONLY transaction so once it ran a query: SET TRANSACTION READ WRITE
   * after the check is refused (25001), so the check's answer without a lock cannot be followed by
   * a write. What must write still fails: try_acquire, renew and release (25006).
   */
  @Test
  void aReadOnlyTransactionStaysSoAndTheLeaseCallsStillFail() throws SQLException {
    String res = "ro-stays";
    try (Session admin = Interleaving.session(db);
        Session reader = Interleaving.writer(db, Isolation.REPEATABLE_READ)) {
      long t = Fence.acquire(admin.c(), res, "holder-a", LEASE);
      readOnly(reader, Isolation.REPEATABLE_READ, ReadOnly.SET_TRANSACTION);
      assertThat(Fence.check(reader.c(), res, t)).isEqualTo(t);
      assertFails(
          ACTIVE_TRANSACTION, () -> Fence.execute(reader.c(), "SET TRANSACTION READ WRITE"));
      reader.c().rollback();

      readOnly(reader, Isolation.REPEATABLE_READ, ReadOnly.JDBC);
      assertFails(READ_ONLY_TRANSACTION, () -> Fence.renew(reader.c(), res, t, LEASE));
      reader.c().rollback();
      readOnly(reader, Isolation.REPEATABLE_READ, ReadOnly.JDBC);
      assertFails(READ_ONLY_TRANSACTION, () -> Fence.release(reader.c(), res, t));
      reader.c().rollback();
      readOnly(reader, Isolation.REPEATABLE_READ, ReadOnly.JDBC);
      assertFails(
          READ_ONLY_TRANSACTION,
          () -> Fence.tryAcquire(reader.c(), res + "-other", "holder-b", LEASE));
      reader.c().rollback();
    }
  }

  /**
   * A READ ONLY transaction that wrote has a transaction id: a temporary table's rows, or before
   * PostgreSQL 16 a large object (PostgreSQL 16 refuses those there). Before 16 the fence cannot
   * tell which, and its check there could not hold off a handover from a large object: refused,
   * 25006 with the fence's message, the large object not committed. From 16 on only a temporary
   * table can have been written: accepted.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void aReadOnlyTransactionThatWroteIsCheckedByVersion(Isolation iso) throws SQLException {
    String res = "ro-wrote-" + iso.tag();
    try (Connection observer = db.connect();
        Session admin = Interleaving.session(db);
        Session reader = Interleaving.writer(db, iso)) {
      boolean sixteen =
          Integer.parseInt(FenceSql.string(observer, "SHOW server_version_num")) >= 160000;
      Interleaving.createResource(admin.c(), res, true, false);
      assertThat(Fence.check(admin.c(), res, 5L)).isEqualTo(5L);
      Fence.execute(reader.c(), "CREATE TEMPORARY TABLE ro_scratch (x int)");
      reader.c().commit();

      readOnly(reader, iso, ReadOnly.JDBC);
      Fence.execute(reader.c(), "INSERT INTO ro_scratch VALUES (1)");
      String ifWritten = "SELECT fencing.check_tokens_if_written(ARRAY[?::text], ARRAY[?::bigint])";
      if (sixteen) {
        assertThat(call(reader.c(), ifWritten, res, 5)).isZero();
      } else {
        SQLException e =
            assertFails(READ_ONLY_TRANSACTION, () -> call(reader.c(), ifWritten, res, 5));
        assertThat(e.getMessage()).contains("in a READ ONLY transaction that wrote");
      }
      reader.c().rollback();

      if (!sixteen) {
        long before = Fence.count(observer, "SELECT count(*) FROM pg_largeobject_metadata");
        readOnly(reader, iso, ReadOnly.JDBC);
        Fence.execute(reader.c(), "SELECT lo_from_bytea(0, '\\x01'::bytea)");
        assertFails(READ_ONLY_TRANSACTION, () -> call(reader.c(), ifWritten, res, 5));
        Interleaving.tryCommit(reader);
        assertThat(Fence.count(observer, "SELECT count(*) FROM pg_largeobject_metadata"))
            .isEqualTo(before);
      }
    }
  }

  private static String snapshot(Connection c, String... resources) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT string_agg(concat_ws(' ', name, max_seen, last_issued, last_used, updated_at),"
                + " ', ' ORDER BY name) FROM fencing.resource WHERE name = ANY (?)")) {
      ps.setArray(1, c.createArrayOf("text", resources));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    }
  }
}
