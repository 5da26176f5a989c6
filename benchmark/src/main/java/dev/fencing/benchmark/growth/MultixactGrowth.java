package dev.fencing.benchmark.growth;

import dev.fencing.benchmark.report.Section;
import dev.fencing.benchmark.report.Series;
import dev.fencing.benchmark.report.Variant;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.FencingToken;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * Hazard 6: every concurrent share-locker of the hot resource's row makes a new multixact. Clients
 * holding the same token write for a period; the multixact IDs and members consumed are counted,
 * and the same load unfenced (no FOR SHARE) is the baseline.
 */
final class MultixactGrowth {
  /** The next multixact ID, live (mxid_age counts from datminmxid to the next ID). */
  private static final String NEXT_MXID =
      "SELECT datminmxid::text::bigint + mxid_age(datminmxid) FROM pg_database"
          + " WHERE datname = current_database()";

  /** Multixact members (2^32 in all): aggressive vacuums start at half of them used. */
  private static final double MEMBER_SAFETY_LIMIT = Math.pow(2, 31);

  private MultixactGrowth() {}

  record Phase(
      String name,
      double seconds,
      long transactions,
      long mxids,
      long members,
      List<Series.Point> ids) {
    double perThousand(long count) {
      return transactions == 0 ? 0 : count * 1000.0 / transactions;
    }
  }

  static Section measure(Workbench w, FencingToken hot) throws SQLException, InterruptedException {
    Phase fenced = phase(w, w.fenced, hot, "fenced, same token");
    Phase plain = phase(w, w.pool, null, "unfenced (no FOR SHARE)");
    String x = "seconds";
    List<Series> series =
        List.of(
            new Series(
                "multixact IDs consumed, " + fenced.name(), x, "multixact IDs", fenced.ids()),
            new Series("multixact IDs consumed, " + plain.name(), x, "multixact IDs", plain.ids()));
    List<Variant> variants =
        List.of(
            new Variant(
                plain.name() + ", " + w.scale.clients() + " clients",
                "tx/s",
                List.of(plain.transactions() / plain.seconds()),
                null,
                true,
                null),
            new Variant(
                fenced.name() + ", " + w.scale.clients() + " clients",
                "tx/s",
                List.of(fenced.transactions() / fenced.seconds()),
                plain.name() + ", " + w.scale.clients() + " clients",
                true,
                null));
    List<String> findings = new ArrayList<>();
    for (Phase p : List.of(fenced, plain)) {
      findings.add(
          String.format(
              Locale.ROOT,
              "%s: %,d transactions in %.1f s; %,d multixact IDs (%.1f per 1,000 transactions)"
                  + " and %,d members (%.1f per 1,000 transactions).",
              p.name(),
              p.transactions(),
              p.seconds(),
              p.mxids(),
              p.perThousand(p.mxids()),
              p.members(),
              p.perThousand(p.members())));
    }
    double membersPerSecond = fenced.members() / fenced.seconds();
    if (membersPerSecond > 0) {
      findings.add(
          String.format(
              Locale.ROOT,
              "At %,.0f members/s, sustained, the 2^31 members after which PostgreSQL vacuums"
                  + " aggressively to free multixact space would be consumed in %.1f hours"
                  + " unless (auto)vacuum freezes the hot rows first; autovacuum normally keeps"
                  + " up, since multixacts older than the oldest running transaction are"
                  + " removable. Watch mxid_age(datminmxid) and pg_stat_slru for MultiXactMember.",
              membersPerSecond,
              MEMBER_SAFETY_LIMIT / membersPerSecond / 3600));
    }
    String method =
        String.format(
            Locale.ROOT,
            "%s mode. %d clients bound to the same token of one resource (the leader pattern)"
                + " run single-row UPDATEs of their own row through a FencedDataSource for %d ms;"
                + " then the same clients run the same UPDATEs unfenced for as long. Every %d ms"
                + " the next multixact ID is read live (datminmxid + mxid_age(datminmxid)); the"
                + " members are counted afterwards with pg_get_multixact_members over the IDs the"
                + " phase consumed. The counters are the cluster's: other sessions creating"
                + " multixacts at the same time are counted too.",
            w.scale.name(),
            w.scale.clients(),
            w.scale.multixactMillis(),
            w.scale.multixactSampleMillis());
    return new Section(
        "growth-multixact",
        "Multixact growth under sustained same-token load (hazard 6)",
        method,
        variants,
        List.of(),
        series,
        findings);
  }

  private static Phase phase(
      Workbench w, DataSource source, @Nullable FencingToken token, String name)
      throws SQLException, InterruptedException {
    int clients = w.scale.clients();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong transactions = new AtomicLong();
    CyclicBarrier start = new CyclicBarrier(clients + 1);
    ExecutorService threads = Executors.newFixedThreadPool(clients);
    List<Series.Point> ids = new ArrayList<>();
    long firstMxid;
    long lastMxid;
    long began;
    long ended;
    try (Connection probe = w.database.getConnection()) {
      List<Future<Void>> running = new ArrayList<>();
      for (int i = 0; i < clients; i++) {
        int row = i + 1;
        running.add(
            threads.submit(
                () -> {
                  write(source, token, row, start, stop, transactions);
                  return null;
                }));
      }
      await(start);
      began = System.nanoTime();
      firstMxid = Workbench.longValue(probe, NEXT_MXID);
      ids.add(new Series.Point(0, 0));
      long next = began;
      while (System.nanoTime() - began < w.scale.multixactMillis() * 1_000_000) {
        next += w.scale.multixactSampleMillis() * 1_000_000;
        TimeUnit.NANOSECONDS.sleep(Math.max(0, next - System.nanoTime())); // the sampling period
        ids.add(
            new Series.Point(
                (System.nanoTime() - began) / 1e9,
                Workbench.longValue(probe, NEXT_MXID) - firstMxid));
      }
      stop.set(true);
      for (Future<Void> f : running) {
        try {
          f.get();
        } catch (ExecutionException e) {
          throw new IllegalStateException("a client failed: " + e.getCause(), e.getCause());
        }
      }
      ended = System.nanoTime();
      lastMxid = Workbench.longValue(probe, NEXT_MXID);
      long members = members(probe, firstMxid, lastMxid);
      return new Phase(
          name, (ended - began) / 1e9, transactions.get(), lastMxid - firstMxid, members, ids);
    } finally {
      threads.shutdownNow();
    }
  }

  private static void write(
      DataSource source,
      @Nullable FencingToken token,
      int row,
      CyclicBarrier start,
      AtomicBoolean stop,
      AtomicLong transactions)
      throws Exception {
    try (Connection c = source.getConnection();
        FencingScope scope = token == null ? null : Fencing.bind(token)) {
      c.setAutoCommit(false);
      try (PreparedStatement ps =
          c.prepareStatement("UPDATE " + Workbench.ITEMS + " SET v = v + 1 WHERE id = ?")) {
        ps.setInt(1, row);
        start.await(60, TimeUnit.SECONDS);
        while (!stop.get()) {
          ps.executeUpdate();
          c.commit();
          transactions.incrementAndGet();
        }
      }
      c.setAutoCommit(true);
    }
  }

  private static long members(Connection c, long from, long to) throws SQLException {
    if (to <= from) {
      return 0;
    }
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT count(*) FROM generate_series(?::bigint, ?::bigint) m,"
                + " LATERAL pg_get_multixact_members(m::text::xid)")) {
      ps.setLong(1, from);
      ps.setLong(2, to - 1);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private static void await(CyclicBarrier barrier) throws InterruptedException {
    try {
      barrier.await(60, TimeUnit.SECONDS);
    } catch (java.util.concurrent.BrokenBarrierException
        | java.util.concurrent.TimeoutException e) {
      throw new IllegalStateException("a client failed before starting", e);
    }
  }
}
