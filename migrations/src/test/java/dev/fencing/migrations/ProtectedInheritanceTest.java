package dev.fencing.migrations;

import static dev.fencing.migrations.Fence.MISSING;
import static dev.fencing.migrations.Fence.STALE;
import static dev.fencing.migrations.Fence.assertFails;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Protected tables in an inheritance tree ({@code INHERITS}, not declarative partitioning), V36.
 * PostgreSQL fires only the statement triggers of the table a statement names: an {@code UPDATE} or
 * {@code DELETE} of an unprotected parent changes the rows of its protected child without the
 * child's statement triggers, and a write addressed to a child of a protected parent never fires
 * the parent's. Before V36 both wrote without a check ({@code protect}: no check at all; {@code
 * protect_rows}: its row triggers skipped through a forged {@code fencing.passed}, its statement
 * triggers never fired). Now a protected table with an inheritance parent takes the row-trigger
 * form (as a partitioned table does), and protecting a table protects its inheritance children,
 * also ones created or attached later (V4's event trigger). The application role here has only
 * {@code SELECT, INSERT, UPDATE, DELETE, TRUNCATE} on the tables.
 */
class ProtectedInheritanceTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final Duration TTL = Duration.ofMinutes(5);
  private static final String OWNER = FenceSql.unique("inh_owner");
  private static final String WHOLE = "inh/whole";
  private static final String ROW_1 = "inh/1";
  private static final String ROW_2 = "inh/2";

  /** Protected children of the unprotected {@code base}, one per form of protection. */
  private static final List<String> CHILDREN = List.of("whole_child", "rows_child", "keyed_child");

  /** Children of protected parents: created before protect, after it, and attached after it. */
  private static final List<String> KIDS =
      List.of(
          "whole_kid",
          "whole_late",
          "whole_adopted",
          "rows_kid",
          "rows_late",
          "keyed_kid",
          "keyed_late",
          "keyed_grandkid");

  private static final List<String> ALL =
      List.of(
          "base",
          "whole_child",
          "rows_child",
          "keyed_child",
          "made_child",
          "whole_parent",
          "whole_kid",
          "whole_late",
          "whole_adopted",
          "rows_parent",
          "rows_kid",
          "rows_late",
          "keyed_parent",
          "keyed_kid",
          "keyed_late",
          "keyed_grandkid");

  private static AppRole appRole;

  @BeforeAll
  static void setUp() throws SQLException {
    assertThat(Fence.migrate(db)).isEqualTo(Fence.MIGRATIONS);
    appRole = AppRole.create(db, "inh_app");
    try (Connection c = db.connect()) {
      FenceSql.run(c, "CREATE ROLE " + OWNER + " NOLOGIN");
      FenceSql.run(c, "CREATE TABLE base (id int, acct int, note text)");
      for (String child : List.of("whole_child", "rows_child", "keyed_child")) {
        FenceSql.run(c, "CREATE TABLE " + child + " () INHERITS (base)");
      }
      FenceSql.run(c, "CREATE TABLE made_child (id int, acct int, note text)");
      for (String parent : List.of("whole", "rows", "keyed")) {
        FenceSql.run(c, "CREATE TABLE " + parent + "_parent (id int, acct int, note text)");
        FenceSql.run(c, "CREATE TABLE " + parent + "_kid () INHERITS (" + parent + "_parent)");
      }
      FenceSql.run(c, "CREATE TABLE keyed_grandkid () INHERITS (keyed_kid)");
      FenceSql.run(c, "CREATE TABLE whole_adopted (id int, acct int, note text)");
      for (String t : ALL) {
        if (!t.endsWith("_late")) {
          FenceSql.run(c, "ALTER TABLE " + t + " OWNER TO " + OWNER);
          appRole.grant("SELECT, INSERT, UPDATE, DELETE, TRUNCATE", t);
        }
      }
      FenceSql.run(c, "SELECT fencing.protect('whole_child', ?)", WHOLE);
      FenceSql.run(c, "SELECT fencing.protect_rows('rows_child', 'acct', 'inh/')");
      FenceSql.run(c, "SELECT fencing.protect_rows_per_row('keyed_child', 'acct', 'inh/')");
      // protected first, made a child of the unprotected base afterwards
      FenceSql.run(c, "SELECT fencing.protect('made_child', ?)", WHOLE);
      FenceSql.run(c, "ALTER TABLE made_child INHERIT base");
      FenceSql.run(c, "SELECT fencing.protect('whole_parent', ?)", WHOLE);
      FenceSql.run(c, "SELECT fencing.protect_rows('rows_parent', 'acct', 'inh/')");
      FenceSql.run(c, "SELECT fencing.protect_rows_per_row('keyed_parent', 'acct', 'inh/')");
      // children created, and one attached, after protect
      for (String parent : List.of("whole", "rows", "keyed")) {
        FenceSql.run(c, "CREATE TABLE " + parent + "_late () INHERITS (" + parent + "_parent)");
      }
      FenceSql.run(c, "ALTER TABLE whole_adopted INHERIT whole_parent");
      for (String t : ALL) {
        if (t.endsWith("_late")) {
          FenceSql.run(c, "ALTER TABLE " + t + " OWNER TO " + OWNER);
          appRole.grant("SELECT, INSERT, UPDATE, DELETE, TRUNCATE", t);
        }
      }
    }
  }

  @AfterAll
  static void dropRoles() throws SQLException {
    if (appRole != null) {
      appRole.close();
    }
    try (Connection c = db.connect()) {
      FenceSql.run(c, "DROP OWNED BY " + OWNER);
      FenceSql.run(c, "DROP ROLE " + OWNER);
    }
  }

  private long whole;
  private long row1;
  private long row2;

  /** Fresh leases, and one row (acct 1) in each table, written by the current holder. */
  @BeforeEach
  void freshLeasesAndRows() throws SQLException {
    try (Connection c = db.connect()) {
      whole = newToken(c, WHOLE);
      row1 = newToken(c, ROW_1);
      row2 = newToken(c, ROW_2);
      c.setAutoCommit(false);
      checkAll(c);
      for (String t : ALL) {
        FenceSql.run(c, "DELETE FROM ONLY " + t);
        FenceSql.run(c, "INSERT INTO " + t + " VALUES (1, 1, ?)", t);
      }
      c.commit();
    }
  }

  private void checkAll(Connection c) throws SQLException {
    Fence.check(c, WHOLE, whole);
    Fence.check(c, ROW_1, row1);
    Fence.check(c, ROW_2, row2);
  }

  private static long newToken(Connection c, String resource) throws SQLException {
    FenceSql.run(c, "SELECT fencing.create_resource(?)", resource);
    FenceSql.Status s = FenceSql.status(c, resource);
    if (s.holder() != null) {
      Fence.release(c, resource, s.leaseToken());
    }
    return Fence.acquire(c, resource, "test", TTL);
  }

  private static String contents(Connection c) throws SQLException {
    StringBuilder all = new StringBuilder();
    for (String t : ALL) {
      all.append(
              FenceSql.string(
                  c,
                  "SELECT coalesce(string_agg(id || ':' || acct || ':' || note, ',' ORDER BY id),"
                      + " '-') FROM ONLY "
                      + t))
          .append(" | ");
    }
    return all.toString();
  }

  /** Each statement, alone in a transaction, fails with {@code sqlState} and writes nothing. */
  private static void refused(Connection app, String sqlState, String setUp, List<String> writes)
      throws SQLException {
    String before = contents(app);
    for (String sql : writes) {
      app.setAutoCommit(false);
      try {
        FenceSql.run(app, setUp);
        assertFails(sqlState, () -> FenceSql.run(app, sql));
      } finally {
        app.rollback();
        app.setAutoCommit(true);
      }
    }
    assertThat(contents(app)).isEqualTo(before);
  }

  private static List<String> throughTheParent(String child) {
    String only = " WHERE tableoid = '" + child + "'::regclass";
    return List.of(
        "UPDATE base SET note = 'zombie'" + only,
        "UPDATE base SET acct = 2" + only,
        "DELETE FROM base" + only,
        "WITH gone AS (DELETE FROM base" + only + " RETURNING 1) SELECT count(*) FROM gone",
        "MERGE INTO base b USING (SELECT 1 AS id) s ON b.id = s.id AND b.tableoid = '"
            + child
            + "'::regclass WHEN MATCHED THEN UPDATE SET note = 'merged'");
  }

  private static List<String> addressedTo(String kid) {
    return List.of(
        "INSERT INTO " + kid + " VALUES (2, 1, 'zombie')",
        "UPDATE " + kid + " SET note = 'zombie'",
        "DELETE FROM " + kid);
  }

  @Test
  void aProtectedChildsRowsAreNotWrittenThroughItsUnprotectedParent() throws SQLException {
    try (Connection app = appRole.connect()) {
      // no check at all; then with the early refusal's cache forged, at session level
      for (String setUp :
          List.of("SELECT 1", "SELECT set_config('fencing.passed', ',inh/1,inh/2,', false)")) {
        for (String child : List.of("whole_child", "rows_child", "keyed_child", "made_child")) {
          refused(app, MISSING, setUp, throughTheParent(child));
        }
      }
    }
  }

  @Test
  void theChildrenOfAProtectedParentAreProtected() throws SQLException {
    try (Connection app = appRole.connect()) {
      for (String kid : KIDS) {
        refused(app, MISSING, "SELECT 1", addressedTo(kid));
        refused(app, MISSING, "SELECT 1", List.of("TRUNCATE " + kid));
      }
    }
  }

  @Test
  void aStaleCarriedTokenIsRefusedThroughTheParentAndInAChild() throws SQLException {
    long staleWhole = whole;
    long staleRow = row1;
    try (Connection c = db.connect()) {
      whole = newToken(c, WHOLE);
      row1 = newToken(c, ROW_1);
    }
    try (Connection app = appRole.connect()) {
      String carry =
          "SELECT fencing.carry('"
              + WHOLE
              + "', "
              + staleWhole
              + "), fencing.carry('"
              + ROW_1
              + "', "
              + staleRow
              + ")";
      for (String child : List.of("whole_child", "rows_child", "keyed_child", "made_child")) {
        // (not the move to acct 2: its resource, not carried, is missing)
        refused(
            app,
            STALE,
            carry,
            throughTheParent(child).stream().filter(w -> !w.contains("acct = 2")).toList());
      }
      for (String kid : KIDS) {
        refused(app, STALE, carry, addressedTo(kid));
      }
    }
  }

  @Test
  void theCurrentHolderWritesAsBefore() throws SQLException {
    try (Connection app = appRole.connect()) {
      app.setAutoCommit(false);
      checkAll(app);
      FenceSql.run(app, "UPDATE base SET note = 'held'");
      FenceSql.run(app, "UPDATE base SET acct = 2 WHERE tableoid = 'rows_child'::regclass");
      for (String kid : KIDS) {
        FenceSql.run(app, "INSERT INTO " + kid + " VALUES (2, 2, 'held')");
      }
      FenceSql.run(app, "DELETE FROM ONLY whole_parent");
      FenceSql.run(app, "TRUNCATE whole_late");
      app.commit();
      app.setAutoCommit(true);
      assertThat(contents(app))
          .isEqualTo(
              "1:1:held | 1:1:held | 1:2:held | 1:1:held | 1:1:held | - | 1:1:whole_kid,2:2:held | "
                  + "- | 1:1:whole_adopted,2:2:held | 1:1:rows_parent | 1:1:rows_kid,2:2:held | "
                  + "1:1:rows_late,2:2:held | 1:1:keyed_parent | 1:1:keyed_kid,2:2:held | "
                  + "1:1:keyed_late,2:2:held | "
                  + "1:1:keyed_grandkid,2:2:held | ");
    }
  }
}
