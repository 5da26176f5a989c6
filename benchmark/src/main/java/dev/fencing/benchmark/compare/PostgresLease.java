package dev.fencing.benchmark.compare;

import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.LeaseClient;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Row 5: this library — a lease from {@link LeaseClient} whose token PostgreSQL issues, carried by
 * {@link FencedDataSource} and checked by PostgreSQL in the write's own transaction.
 */
final class PostgresLease implements Approach {
  static final Spec SPEC =
      new Spec(
          "Fencing token (generic pattern): PostgreSQL lease + FencedDataSource",
          true,
          "Yes (if resource checks it)",
          "Token from the lease row (a sequence, durable); PostgreSQL stores max_seen and checks"
              + " every write transaction. The resource must participate: here it is the database.");

  private final DataSource plain;
  private final DataSource fenced;
  private final Duration ttl;

  /**
   * @param plain where the fence's migrations were applied
   */
  PostgresLease(DataSource plain, Duration ttl) {
    this.plain = plain;
    this.fenced = FencedDataSource.wrap(plain);
    this.ttl = ttl;
  }

  @Override
  public Spec spec() {
    return SPEC;
  }

  @Override
  public Hold acquire(String resource, String client) throws SQLException {
    LeaseClient leases = LeaseClient.builder(plain).holder(client).build();
    try {
      return new Held(leases, leases.acquire(resource, ttl, Scenario.patience(ttl)));
    } catch (SQLException | RuntimeException e) {
      leases.close();
      throw e;
    }
  }

  @Override
  public void awaitExpiry(Hold hold) throws Exception {
    Lease lease = ((Held) hold).lease;
    Poll.until("expiry of lease " + lease.token(), Scenario.patience(ttl), () -> !isValid(lease));
  }

  /** What the lock service (the database, on its clock) says, not what the client believes. */
  private boolean isValid(Lease lease) throws SQLException {
    try (Connection c = plain.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT coalesce(lease_valid AND lease_token = ?, false) FROM fencing.status(?)")) {
      ps.setLong(1, lease.token().value());
      ps.setString(2, lease.resource());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getBoolean(1);
      }
    }
  }

  @Override
  public void close() {}

  private final class Held implements Hold {
    private final LeaseClient leases;
    private final Lease lease;

    Held(LeaseClient leases, Lease lease) {
      this.leases = leases;
      this.lease = lease;
    }

    @Override
    public Optional<BigInteger> token() {
      return Optional.of(BigInteger.valueOf(lease.token().value()));
    }

    /** Carries the token it was given; a zombie never learned its lease was lost. */
    @Override
    public Outcome write(Write write) throws SQLException {
      return Writes.fenced(fenced, lease.token(), write);
    }

    @Override
    public void release() {
      try {
        lease.close();
      } finally {
        leases.close();
      }
    }
  }
}
