package dev.fencing.benchmark;

import java.io.PrintStream;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The founding document's race, played against the fence's SQL functions: client 1 acquires, pauses
 * past its lease, client 2 acquires and writes, client 1 wakes and writes, and the database refuses
 * it.
 */
final class FoundingRace {
  private static final Duration LEASE = Duration.ofMillis(500);

  private final DataSource dataSource;
  private final PrintStream out;
  private final String resource = "ledger-" + UUID.randomUUID().toString().substring(0, 8);

  FoundingRace(DataSource dataSource, PrintStream out) {
    this.dataSource = dataSource;
    this.out = out;
  }

  boolean play() throws SQLException {
    try (Connection client1 = dataSource.getConnection();
        Connection client2 = dataSource.getConnection()) {
      execute(
          client1,
          "CREATE TABLE IF NOT EXISTS demo_ledger (id bigserial PRIMARY KEY, resource text,"
              + " entry text, token bigint)");
      out.printf(
          "%nThe founding race on resource \"%s\" (lease %d ms)%n", resource, LEASE.toMillis());

      long t1 = acquire(client1, "client-1");
      step("t0", "client 1 acquires", "token " + t1, client1);
      step("t1", "client 1 begins a long GC pause", "", client1);
      awaitExpiry(client1);
      step("t2", "lease(" + t1 + ") expires", "", client1);

      long t2 = acquire(client2, "client-2");
      step("t3", "client 2 acquires", "token " + t2, client2);
      boolean accepted2 = write(client2, t2, "X");
      step("t4", "client 2 writes X with token " + t2, accepted2 ? "ACCEPT" : "REJECT", client2);
      step("t5", "client 1 wakes, unaware", "", client1);
      boolean accepted1 = write(client1, t1, "Y");
      step("t6", "client 1 writes Y with token " + t1, accepted1 ? "ACCEPT" : "REJECT", client1);

      String ledger = ledger(client1);
      out.printf(
          "Ledger now holds: %s; rejections logged for %s: %d%n",
          ledger, resource, rejections(client1));
      return t2 > t1 && accepted2 && !accepted1 && ledger.equals("[X@" + t2 + "]");
    }
  }

  private long acquire(Connection c, String holder) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT acquired, token FROM fencing.try_acquire(?, ?, make_interval(secs => ?))")) {
      ps.setString(1, resource);
      ps.setString(2, holder);
      ps.setDouble(3, LEASE.toMillis() / 1000.0);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        if (!rs.getBoolean(1)) {
          throw new IllegalStateException(holder + " did not get the lease on " + resource);
        }
        return rs.getLong(2);
      }
    }
  }

  /** The pause: client 1 does nothing until the database clock says its lease is over. */
  private void awaitExpiry(Connection c) throws SQLException {
    Instant deadline = Instant.now().plus(LEASE.multipliedBy(20));
    while (query(c, "SELECT lease_valid FROM fencing.status('" + resource + "')").equals("t")) {
      if (Instant.now().isAfter(deadline)) {
        throw new IllegalStateException("lease on " + resource + " never expired");
      }
      execute(c, "SELECT pg_sleep(0.05)");
    }
  }

  /** A fenced write: the check and the insert in one transaction. */
  private boolean write(Connection c, long token, String entry) throws SQLException {
    c.setAutoCommit(false);
    try (PreparedStatement check = c.prepareStatement("SELECT fencing.check_token(?, ?)");
        PreparedStatement insert =
            c.prepareStatement(
                "INSERT INTO demo_ledger (resource, entry, token) VALUES (?, ?, ?)")) {
      check.setString(1, resource);
      check.setLong(2, token);
      check.executeQuery().close();
      insert.setString(1, resource);
      insert.setString(2, entry);
      insert.setLong(3, token);
      insert.executeUpdate();
      c.commit();
      return true;
    } catch (SQLException e) {
      c.rollback();
      if (!e.getSQLState().startsWith("ZF")) {
        throw e;
      }
      out.printf(
          "      refused by PostgreSQL: %s [SQLSTATE %s]%n",
          e.getMessage().lines().findFirst().orElse(""), e.getSQLState());
      recordRejection(c, token, e.getSQLState());
      return false;
    } finally {
      c.setAutoCommit(true);
    }
  }

  private void recordRejection(Connection c, long token, String sqlState) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT fencing.record_rejection(?, ?, ?)")) {
      ps.setString(1, resource);
      ps.setLong(2, token);
      ps.setString(3, sqlState);
      ps.executeQuery().close();
    }
  }

  private void step(String time, String what, String outcome, Connection c) throws SQLException {
    String maxSeen = query(c, "SELECT max_seen FROM fencing.status('" + resource + "')");
    out.printf("%-3s %-40s %-12s max_seen = %s%n", time, what, outcome, maxSeen);
  }

  private String ledger(Connection c) throws SQLException {
    return query(
        c,
        "SELECT '[' || coalesce(string_agg(entry || '@' || token, ', ' ORDER BY id), '') || ']'"
            + " FROM demo_ledger WHERE resource = '"
            + resource
            + "'");
  }

  private long rejections(Connection c) throws SQLException {
    return Long.parseLong(
        query(c, "SELECT count(*) FROM fencing.rejection WHERE resource = '" + resource + "'"));
  }

  private static String query(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    }
  }

  private static void execute(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }
}
