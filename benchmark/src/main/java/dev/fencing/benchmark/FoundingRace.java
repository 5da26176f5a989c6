package dev.fencing.benchmark;

import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingExceptions;
import dev.fencing.jdbc.FencingRefusedException;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.LeaseClient;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The founding document's race, played through the library: client 1 acquires, pauses past its
 * lease, client 2 acquires and writes, client 1 wakes and writes with its old token, and PostgreSQL
 * refuses it in the write's own transaction.
 */
final class FoundingRace {
  private static final Duration LEASE = Duration.ofMillis(500);

  /** Client 2's lease: long enough that a busy machine cannot make it expire before t4. */
  private static final Duration LEASE_2 = Duration.ofSeconds(30);

  private final DataSource plain;
  private final FencedDataSource fenced;
  private final PrintStream out;
  private final String resource = "ledger-" + UUID.randomUUID().toString().substring(0, 8);

  FoundingRace(DataSource dataSource, PrintStream out) {
    this.plain = dataSource;
    this.fenced = FencedDataSource.wrap(dataSource);
    this.out = out;
  }

  boolean play() throws SQLException {
    try (Connection c = plain.getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          "CREATE TABLE IF NOT EXISTS demo_ledger (id bigserial PRIMARY KEY, resource text,"
              + " entry text, token bigint)");
    }
    out.printf(
        "%nThe founding race on resource \"%s\" (client 1's lease: %d ms)%n",
        resource, LEASE.toMillis());
    try (LeaseClient client1 = LeaseClient.builder(plain).holder("client-1").build();
        LeaseClient client2 = LeaseClient.builder(plain).holder("client-2").build()) {
      Lease lease1 = acquire(client1, LEASE);
      long t1 = lease1.token().value();
      step("t0", "client 1 acquires", "token " + t1);
      step("t1", "client 1 begins a long GC pause", "");
      awaitExpiry();
      step("t2", "lease(" + t1 + ") expires", "");

      Lease lease2 = acquire(client2, LEASE_2);
      long t2 = lease2.token().value();
      step("t3", "client 2 acquires", "token " + t2);
      boolean accepted2;
      try (FencingScope scope = Fencing.bind(lease2)) {
        accepted2 = write(lease2.token(), "X");
      }
      step("t4", "client 2 writes X with token " + t2, accepted2 ? "ACCEPT" : "REJECT");
      step("t5", "client 1 wakes, unaware", "");
      // The zombie still carries its old token; it never learned the lease was lost.
      boolean accepted1;
      try (FencingScope scope = Fencing.bind(lease1.token())) {
        accepted1 = write(lease1.token(), "Y");
      }
      step("t6", "client 1 writes Y with token " + t1, accepted1 ? "ACCEPT" : "REJECT");
      lease2.close();

      String ledger = ledger();
      out.printf(
          "Ledger now holds: %s; rejections logged for %s: %d%n", ledger, resource, rejections());
      return t2 > t1 && accepted2 && !accepted1 && ledger.equals("[X@" + t2 + "]");
    }
  }

  private Lease acquire(LeaseClient client, Duration ttl) throws SQLException {
    Optional<Lease> lease = client.tryAcquire(resource, ttl);
    return lease.orElseThrow(
        () -> new IllegalStateException(client.holder() + " did not get the lease on " + resource));
  }

  /** The pause: client 1 does nothing until the database clock says its lease is over. */
  private void awaitExpiry() throws SQLException {
    Instant deadline = Instant.now().plus(LEASE.multipliedBy(20));
    while (query("SELECT lease_valid FROM fencing.status('" + resource + "')").equals("t")) {
      if (Instant.now().isAfter(deadline)) {
        throw new IllegalStateException("lease on " + resource + " never expired");
      }
      query("SELECT pg_sleep(0.05)::text");
    }
  }

  /** A plain JDBC write through the fenced DataSource: the library adds the check. */
  private boolean write(FencingToken token, String entry) throws SQLException {
    try (Connection c = fenced.getConnection();
        PreparedStatement insert =
            c.prepareStatement(
                "INSERT INTO demo_ledger (resource, entry, token) VALUES (?, ?, ?)")) {
      insert.setString(1, resource);
      insert.setString(2, entry);
      insert.setLong(3, token.value());
      insert.executeUpdate();
      return true;
    } catch (SQLException e) {
      Optional<FencingRefusedException> refusal = FencingExceptions.find(e);
      if (refusal.isEmpty()) {
        throw e;
      }
      out.printf(
          "      refused by PostgreSQL: %s: %s [SQLSTATE %s]%n",
          refusal.get().getClass().getSimpleName(),
          refusal.get().getMessage(),
          refusal.get().getSQLState());
      return false;
    }
  }

  private void step(String time, String what, String outcome) throws SQLException {
    String maxSeen = query("SELECT max_seen FROM fencing.status('" + resource + "')");
    out.printf("%-3s %-40s %-12s max_seen = %s%n", time, what, outcome, maxSeen);
  }

  private String ledger() throws SQLException {
    return query(
        "SELECT '[' || coalesce(string_agg(entry || '@' || token, ', ' ORDER BY id), '') || ']'"
            + " FROM demo_ledger WHERE resource = '"
            + resource
            + "'");
  }

  private long rejections() throws SQLException {
    return Long.parseLong(
        query("SELECT count(*) FROM fencing.rejection WHERE resource = '" + resource + "'"));
  }

  private String query(String sql) throws SQLException {
    try (Connection c = plain.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    }
  }
}
