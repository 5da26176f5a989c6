package dev.fencing.benchmark.lease;

import dev.fencing.benchmark.measure.Samples;
import dev.fencing.benchmark.measure.Scale;
import dev.fencing.benchmark.report.Distribution;
import dev.fencing.benchmark.report.Section;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.LeaseClient;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Handover: the old holder stops renewing; the new holder waits in {@code LeaseClient.acquire} and
 * writes through a {@code FencedDataSource} as soon as it holds the lease. Timed from the old
 * lease's expiry (database clock) to the commit of the new holder's first write.
 */
final class Handover {
  static final Duration TTL = Duration.ofMillis(200);
  private static final String TABLE = "bench_handover";

  private Handover() {}

  static Section measure(DataSource pool, Scale scale, String run)
      throws SQLException, InterruptedException {
    LeaseBenchmark.execute(
        pool,
        "CREATE TABLE IF NOT EXISTS "
            + TABLE
            + " (id bigserial PRIMARY KEY, resource text NOT NULL, token bigint NOT NULL)");
    String resource = "bench/handover/" + run;
    FencedDataSource fenced = FencedDataSource.wrap(pool);
    long[] total = new long[scale.handovers()];
    long[] write = new long[scale.handovers()];
    try (LeaseClient old = LeaseClient.builder(pool).holder("bench-old-holder").build();
        LeaseClient next = LeaseClient.builder(pool).holder("bench-new-holder").build()) {
      for (int i = 0; i < scale.handovers(); i++) {
        Optional<Lease> abandoned = old.tryAcquire(resource, TTL);
        if (abandoned.isEmpty()) {
          throw new IllegalStateException("the handover resource " + resource + " was not free");
        }
        Instant expiry = abandoned.get().expiresAt(); // never renewed, never released
        try (Lease lease = next.acquire(resource, Duration.ofSeconds(30), Duration.ofSeconds(30))) {
          long acquired = System.nanoTime();
          try (FencingScope scope = Fencing.bind(lease);
              Connection c = fenced.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement insert =
                c.prepareStatement("INSERT INTO " + TABLE + " (resource, token) VALUES (?, ?)")) {
              insert.setString(1, resource);
              insert.setLong(2, lease.token().value());
              insert.executeUpdate();
            }
            c.commit();
            write[i] = System.nanoTime() - acquired;
            total[i] = sinceOnDatabaseClock(c, expiry);
            c.setAutoCommit(true);
          }
        } // released: the old holder acquires at once in the next handover
      }
    } finally {
      LeaseBenchmark.execute(pool, "DROP TABLE IF EXISTS " + TABLE);
    }
    Distribution whole =
        Samples.millis(
            "handover/expiry-to-first-write",
            "lease expiry -> new holder's first accepted write committed",
            total,
            null);
    Distribution tail =
        Samples.millis(
            "handover/first-write",
            "of which: the first write (check + INSERT + commit) after acquire returned",
            write,
            null);
    String method =
        String.format(
            Locale.ROOT,
            "%s mode, %d handovers of one resource with a %d ms lease. The old holder takes the"
                + " lease with LeaseClient.tryAcquire and never renews it; the new holder calls"
                + " LeaseClient.acquire(resource, 30 s, timeout 30 s), which sleeps on its"
                + " connection (LISTEN, no polling) until the expiry the database reported, then"
                + " acquires, binds the lease and INSERTs one row through a FencedDataSource"
                + " (check + write + commit). Measured on the database clock, from the old lease's"
                + " expires_at to a clock_timestamp() read right after the write's commit (one"
                + " extra round trip, included).",
            scale.name(),
            scale.handovers(),
            TTL.toMillis());
    List<String> findings =
        List.of(
            String.format(
                Locale.ROOT,
                "Handover p50 %.1f ms, of which %.1f ms is the first fenced write after the"
                    + " acquisition; the rest is waking up (whole-millisecond waits of"
                    + " getNotifications), the acquisition attempt(s) and the durable"
                    + " try_acquire commit.",
                whole.p50(),
                tail.p50()));
    return new Section(
        "handover",
        "Lease handover: expiry to the new holder's first accepted write",
        method,
        List.of(),
        List.of(whole, tail),
        List.of(),
        findings);
  }

  private static long sinceOnDatabaseClock(Connection c, Instant expiry) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT extract(epoch FROM clock_timestamp() - ?) * 1e9")) {
      ps.setObject(1, OffsetDateTime.ofInstant(expiry, ZoneOffset.UTC));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}
