package dev.fencing.benchmark.compare;

import java.math.BigInteger;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Row 1: a plain lease row with an expiry on the database clock, and clients that trust it — they
 * write through a plain DataSource once they hold the lease. There is no token to check.
 */
final class TrustingLease implements Approach {
  static final Spec SPEC =
      new Spec(
          "Lease + trust the client",
          false,
          "No",
          "A lease row with an expiry in PostgreSQL; the holder writes through a plain DataSource."
              + " Its belief is not evidence: a pause longer than the lease voids it silently.");

  private final DataSource dataSource;
  private final Duration ttl;

  TrustingLease(DataSource dataSource, Duration ttl) throws SQLException {
    this.dataSource = dataSource;
    this.ttl = ttl;
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          "CREATE TABLE IF NOT EXISTS compare_trusted_lease (resource text PRIMARY KEY,"
              + " holder text NOT NULL, expires_at timestamptz NOT NULL)");
    }
  }

  @Override
  public Spec spec() {
    return SPEC;
  }

  @Override
  public Hold acquire(String resource, String client) throws Exception {
    Poll.until(
        client + " acquiring the lease on " + resource,
        Scenario.patience(ttl),
        () -> tryAcquire(resource, client));
    return new Held(resource, client);
  }

  private boolean tryAcquire(String resource, String client) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO compare_trusted_lease AS l (resource, holder, expires_at)"
                    + " VALUES (?, ?, clock_timestamp() + ? * interval '1 millisecond')"
                    + " ON CONFLICT (resource) DO UPDATE"
                    + " SET holder = excluded.holder, expires_at = excluded.expires_at"
                    + " WHERE l.expires_at <= clock_timestamp()"
                    + " RETURNING holder")) {
      ps.setString(1, resource);
      ps.setString(2, client);
      ps.setLong(3, ttl.toMillis());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  @Override
  public void awaitExpiry(Hold hold) throws Exception {
    Held held = (Held) hold;
    Poll.until(
        "expiry of " + held.client + "'s lease on " + held.resource,
        Scenario.patience(ttl),
        () -> !held.isCurrent());
  }

  @Override
  public void close() {}

  private final class Held implements Hold {
    private final String resource;
    private final String client;

    Held(String resource, String client) {
      this.resource = resource;
      this.client = client;
    }

    boolean isCurrent() throws SQLException {
      try (Connection c = dataSource.getConnection();
          PreparedStatement ps =
              c.prepareStatement(
                  "SELECT 1 FROM compare_trusted_lease WHERE resource = ? AND holder = ?"
                      + " AND expires_at > clock_timestamp()")) {
        ps.setString(1, resource);
        ps.setString(2, client);
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next();
        }
      }
    }

    @Override
    public Optional<BigInteger> token() {
      return Optional.empty();
    }

    @Override
    public Outcome write(Write write) throws SQLException {
      return Writes.plain(dataSource, write);
    }

    @Override
    public void release() throws SQLException {
      try (Connection c = dataSource.getConnection();
          PreparedStatement ps =
              c.prepareStatement(
                  "DELETE FROM compare_trusted_lease WHERE resource = ? AND holder = ?")) {
        ps.setString(1, resource);
        ps.setString(2, client);
        ps.executeUpdate();
      }
    }
  }
}
