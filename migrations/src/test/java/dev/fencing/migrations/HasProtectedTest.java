package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.MISSING;
import static dev.fencing.migrations.Fence.assertFails;
import static dev.fencing.migrations.Interleaving.SERIALIZATION_FAILURE;
import static dev.fencing.migrations.Interleaving.async;
import static dev.fencing.migrations.Interleaving.awaitBlockedBy;
import static dev.fencing.migrations.Interleaving.begin;
import static dev.fencing.migrations.Interleaving.join;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.migrations.Interleaving.Isolation;
import dev.fencing.migrations.Interleaving.Session;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code resource.has_protected} (V10, V17): a check leaves its marker only for a resource that a
 * protected table covers, and the flag is exactly that, also after unprotect, a replaced protection
 * or a dropped table. It never clears while a table covers the resource (by name or by the prefix
 * of protect_rows), under every isolation level of the operator's transaction; and whatever the
 * flag, a write to a protected table never passes without a marker (fail closed).
 */
class HasProtectedTest extends InterleavingTestBase {

  private static boolean flag(Connection c, String resource) throws SQLException {
    return Boolean.parseBoolean(
        FenceSql.string(
            c, "SELECT has_protected::text FROM fencing.resource WHERE name = ?", resource));
  }

  /** Whether a passed check of the resource leaves a marker (in a transaction rolled back). */
  private static boolean marks(Connection c, String resource, long token) throws SQLException {
    c.setAutoCommit(false);
    try {
      Fence.check(c, resource, token);
      String checked = FenceSql.string(c, "SELECT current_setting('fencing.checked', true)");
      return checked != null && !checked.isEmpty();
    } finally {
      c.rollback();
      c.setAutoCommit(true);
    }
  }

  /** Every resource's flag is what the protected tables that exist say. */
  private static void assertFlagsExact(Connection c) throws SQLException {
    assertThat(
            FenceSql.strings(
                c,
                "SELECT r.name FROM fencing.resource r"
                    + " WHERE r.has_protected <> EXISTS (SELECT FROM fencing.protected_table t"
                    + "   JOIN pg_class k ON k.oid = t.tbl"
                    + "  WHERE t.resource = r.name"
                    + "     OR (t.resource_column IS NOT NULL AND starts_with(r.name, t.prefix)))"))
        .isEmpty();
  }

  private static void table(Connection c, String name) throws SQLException {
    FenceSql.run(c, "CREATE TABLE " + name + " (id int, k text)");
  }

  @Test
  void theFlagFollowsWhatIsProtected() throws SQLException {
    try (Connection c = db.connect()) {
      long t1 = Fence.acquire(c, "hp/1", "h", LEASE);
      long t2 = Fence.acquire(c, "hp/2", "h", LEASE);
      long tx = Fence.acquire(c, "hpx", "h", LEASE);
      for (String t : new String[] {"hp_rows", "hp_one", "hp_x"}) {
        table(c, t);
      }
      FenceSql.run(c, "SELECT fencing.protect_rows('hp_rows', 'k', 'hp/')");
      FenceSql.run(c, "SELECT fencing.protect('hp_one', 'hp/1')");
      FenceSql.run(c, "SELECT fencing.protect('hp_x', 'hpx')");
      assertThat(flag(c, "hp/1")).isTrue();
      assertThat(flag(c, "hp/2")).isTrue();
      assertThat(flag(c, "hpx")).isTrue();

      // the prefix goes: hp/1 is still named by hp_one, hp/2 by nothing
      FenceSql.run(c, "SELECT fencing.unprotect('hp_rows')");
      assertThat(flag(c, "hp/1")).isTrue();
      assertThat(flag(c, "hp/2")).isFalse();
      assertThat(flag(c, "hpx")).isTrue();
      assertThat(marks(c, "hp/1", t1)).isTrue();
      assertThat(marks(c, "hp/2", t2)).as("no marker for a resource nothing protects").isFalse();
      assertFlagsExact(c);

      // protected again; replacing a protection changes no flag and writes no resource row
      FenceSql.run(c, "SELECT fencing.protect_rows('hp_rows', 'k', 'hp/')");
      assertThat(flag(c, "hp/2")).isTrue();
      String rows = "SELECT string_agg(xmin::text, ',' ORDER BY name) FROM fencing.resource";
      String before = FenceSql.string(c, rows);
      FenceSql.run(c, "SELECT fencing.protect('hp_one', 'hp/1')");
      FenceSql.run(c, "SELECT fencing.protect_rows('hp_rows', 'k', 'hp/')");
      assertThat(FenceSql.string(c, rows)).isEqualTo(before);

      // the exact name goes: the prefix still covers hp/1
      FenceSql.run(c, "SELECT fencing.unprotect('hp_one')");
      assertThat(flag(c, "hp/1")).isTrue();
      // a protection replaced by one that covers other resources
      FenceSql.run(c, "SELECT fencing.protect('hp_rows', 'hpx')");
      assertThat(flag(c, "hp/1")).isFalse();
      assertThat(flag(c, "hp/2")).isFalse();
      assertThat(flag(c, "hpx")).isTrue();
      assertFlagsExact(c);

      // a dropped table protects nothing (V4's event trigger removes its row)
      FenceSql.run(c, "DROP TABLE hp_x");
      assertThat(flag(c, "hpx")).as("hp_rows still names hpx").isTrue();
      FenceSql.run(c, "DROP TABLE hp_rows");
      assertThat(flag(c, "hpx")).isFalse();
      assertThat(marks(c, "hpx", tx)).isFalse();
      assertThat(
              FenceSql.longValue(
                  c,
                  "SELECT count(*) FROM fencing.protected_table t"
                      + " WHERE NOT EXISTS (SELECT FROM pg_class k WHERE k.oid = t.tbl)"))
          .isZero();
      // a new resource under a prefix nobody protects any more
      Fence.acquire(c, "hp/3", "h", LEASE);
      assertThat(flag(c, "hp/3")).isFalse();
      assertFlagsExact(c);
      FenceSql.run(c, "DROP TABLE hp_one");
    }
  }

  /**
   * An unprotect commits while a protect of another table naming the same resource holds the
   * resource table's lock: the unprotect waits; then READ COMMITTED sees the new protection and
   * keeps the flag, REPEATABLE READ / SERIALIZABLE (whose snapshot predates it) refuse with 40001.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void unprotectWaitingForAConcurrentProtectKeepsTheFlag(Isolation iso) throws SQLException {
    String res = "hp-u-" + iso.tag();
    String a = "hp_u_a_" + iso.name().toLowerCase(java.util.Locale.ROOT);
    String b = "hp_u_b_" + iso.name().toLowerCase(java.util.Locale.ROOT);
    try (Connection observer = db.connect();
        Session unprotect = Interleaving.writer(db, iso);
        Session protect = Interleaving.writer(db, iso)) {
      long token = Fence.acquire(observer, res, "h", LEASE);
      table(observer, a);
      table(observer, b);
      FenceSql.run(observer, "SELECT fencing.protect(?::regclass, ?)", a, res);

      begin(unprotect, iso);
      FenceSql.run(unprotect.c(), "SELECT fencing.unprotect(?::regclass)", a);
      begin(protect, iso);
      FenceSql.run(protect.c(), "SELECT fencing.protect(?::regclass, ?)", b, res);
      CompletableFuture<Void> commit =
          async(
              pool(),
              () -> {
                unprotect.c().commit();
                return null;
              });
      awaitBlockedBy(observer, unprotect.pid(), protect.pid());
      protect.c().commit();
      if (iso.snapshotPerTransaction()) {
        SQLException e = assertFails(SERIALIZATION_FAILURE, () -> join(commit));
        assertThat(e.getMessage()).contains("could not serialize");
        assertThat(flag(observer, res)).isTrue();
        // the operator retries
        FenceSql.run(unprotect.c(), "SELECT fencing.unprotect(?::regclass)", a);
        unprotect.c().commit();
      } else {
        join(commit);
      }
      assertThat(flag(observer, res)).as("%s still protects %s", b, res).isTrue();
      assertFlagsExact(observer);
      // end to end: a checked transaction writes the table that protects the resource
      observer.setAutoCommit(false);
      Fence.check(observer, res, token);
      FenceSql.run(observer, "INSERT INTO " + b + " VALUES (1, 'x')");
      observer.commit();
      observer.setAutoCommit(true);
      FenceSql.run(observer, "DROP TABLE " + a + ", " + b);
    }
  }

  /**
   * A protect whose snapshot predates an unprotect that cleared the flag: READ COMMITTED sets it
   * again, REPEATABLE READ / SERIALIZABLE refuse with 40001 (and the retry sets it).
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void protectAfterAConcurrentUnprotectSetsTheFlag(Isolation iso) throws SQLException {
    String res = "hp-p-" + iso.tag();
    String a = "hp_p_a_" + iso.name().toLowerCase(java.util.Locale.ROOT);
    String b = "hp_p_b_" + iso.name().toLowerCase(java.util.Locale.ROOT);
    try (Connection observer = db.connect();
        Session protect = Interleaving.writer(db, iso)) {
      long token = Fence.acquire(observer, res, "h", LEASE);
      table(observer, a);
      table(observer, b);
      FenceSql.run(observer, "SELECT fencing.protect(?::regclass, ?)", a, res);

      begin(protect, iso);
      assertThat(flag(protect.c(), res)).isTrue(); // the snapshot of RR / SERIALIZABLE
      FenceSql.run(observer, "SELECT fencing.unprotect(?::regclass)", a);
      assertThat(flag(observer, res)).isFalse();
      if (iso.snapshotPerTransaction()) {
        assertFails(
            SERIALIZATION_FAILURE,
            () -> FenceSql.run(protect.c(), "SELECT fencing.protect(?::regclass, ?)", b, res));
        protect.c().rollback();
      }
      FenceSql.run(protect.c(), "SELECT fencing.protect(?::regclass, ?)", b, res);
      protect.c().commit();
      assertThat(flag(observer, res)).isTrue();
      assertThat(marks(observer, res, token)).isTrue();
      assertFlagsExact(observer);
      FenceSql.run(observer, "DROP TABLE " + a + ", " + b);
    }
  }

  /** A resource created by a transaction whose snapshot predates a protect naming it. */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void aResourceCreatedAfterAConcurrentProtectIsFlagged(Isolation iso) throws SQLException {
    String prefix = "hp-c-" + iso.tag() + "/";
    String t = "hp_c_" + iso.name().toLowerCase(java.util.Locale.ROOT);
    try (Connection observer = db.connect();
        Session creator = Interleaving.writer(db, iso)) {
      table(observer, t);
      begin(creator, iso);
      FenceSql.run(creator.c(), "SELECT 1 FROM fencing.protected_table LIMIT 1"); // the snapshot
      FenceSql.run(observer, "SELECT fencing.protect_rows(?::regclass, 'k', ?)", t, prefix);
      if (iso.snapshotPerTransaction()) {
        assertFails(
            SERIALIZATION_FAILURE,
            () -> Interleaving.createResource(creator.c(), prefix + "1", false, false));
        creator.c().rollback();
      }
      Interleaving.createResource(creator.c(), prefix + "1", false, false);
      creator.c().commit();
      assertThat(flag(observer, prefix + "1")).isTrue();
      assertFlagsExact(observer);
      FenceSql.run(observer, "DROP TABLE " + t);
    }
  }

  /**
   * Fail closed. READ COMMITTED: a check that left no marker (nothing protected the resource then)
   * does not let a write through to a table protected after it. REPEATABLE READ / SERIALIZABLE: the
   * check leaves its marker and holds the resource row FOR SHARE, so the protect (which sets the
   * row's flag) waits for it. Either way the next transaction needs a check or a carried token.
   */
  @ParameterizedTest
  @EnumSource(Isolation.class)
  void aCheckRacingProtectNeverLetsAnUncheckedWriteThrough(Isolation iso) throws SQLException {
    String res = "hp-w-" + iso.tag();
    String t = "hp_w_" + iso.name().toLowerCase(java.util.Locale.ROOT);
    String protectIt = "SELECT fencing.protect('" + t + "', '" + res + "')";
    String insert = "INSERT INTO " + t + " VALUES (1, 'x')";
    try (Connection observer = db.connect();
        Session protector = Interleaving.session(db);
        Session writer = Interleaving.writer(db, iso)) {
      long token = Fence.acquire(observer, res, "h", LEASE);
      table(observer, t);
      assertThat(flag(observer, res)).isFalse();

      begin(writer, iso);
      Fence.check(writer.c(), res, token);
      String marker =
          FenceSql.string(writer.c(), "SELECT current_setting('fencing.checked', true)");
      if (iso.snapshotPerTransaction()) {
        assertThat(marker).as("the full path always leaves its marker").isNotEmpty();
        CompletableFuture<Void> protect =
            async(
                pool(),
                () -> {
                  FenceSql.run(protector.c(), protectIt);
                  return null;
                });
        awaitBlockedBy(observer, protector.pid(), writer.pid());
        writer.c().rollback();
        join(protect);
      } else {
        assertThat(marker).isNullOrEmpty();
        FenceSql.run(protector.c(), protectIt);
        assertFails(MISSING, () -> FenceSql.run(writer.c(), insert));
        writer.c().rollback();
      }
      assertThat(flag(observer, res)).isTrue();

      begin(writer, iso);
      assertFails(MISSING, () -> FenceSql.run(writer.c(), insert));
      writer.c().rollback();
      begin(writer, iso);
      FenceSql.run(writer.c(), "SELECT fencing.carry(?, ?)", res, token);
      FenceSql.run(writer.c(), "INSERT INTO " + t + " VALUES (2, 'carried')");
      writer.c().commit();
      begin(writer, iso);
      Fence.check(writer.c(), res, token);
      FenceSql.run(writer.c(), "INSERT INTO " + t + " VALUES (3, 'checked')");
      writer.c().commit();
      assertThat(FenceSql.longValue(observer, "SELECT count(*) FROM " + t)).isEqualTo(2);
      FenceSql.run(observer, "DROP TABLE " + t);
    }
  }
}
