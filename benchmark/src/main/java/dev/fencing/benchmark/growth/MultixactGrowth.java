package dev.fencing.benchmark.growth;

import dev.fencing.benchmark.report.Figure;
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
 * holding the same token write in turns interleaved with the same load unfenced (no FOR SHARE, the
 * baseline); the multixact IDs and members each turn consumed are counted.
 */
final class MultixactGrowth {
  /** The next multixact ID, live (mxid_age counts from datminmxid to the next ID). */
  private static final String NEXT_MXID =
      "SELECT datminmxid::text::bigint + mxid_age(datminmxid) FROM pg_database"
          + " WHERE datname = current_database()";

  /** Multixact members (2^32 in all): aggressive vacuums start at half of them used. */
  private static final double MEMBER_SAFETY_LIMIT = Math.pow(2, 31);

  private MultixactGrowth() {}

  /** The id of the multixacts per 1,000 fenced transactions (issue 14's target). */
  static final String PER_THOUSAND_ID = "growth-multixact/multixacts-per-1000";

  /** Issue 14: at most 10 multixacts per 1,000 fenced transactions of the same token. */
  static final double TARGET_PER_THOUSAND = 10;

  /** Issue 14: the same-token load at least 0.93 of its unfenced throughput. */
  static final double TARGET_THROUGHPUT = 0.93;

  /** One variant's turns, accumulated over the rounds. */
  static final class Phase {
    final String name;
    final List<Double> rates = new ArrayList<>();
    final List<Series.Point> ids = new ArrayList<>(List.of(new Series.Point(0, 0)));
    double seconds;
    long transactions;
    long mxids;
    long members;

    Phase(String name) {
      this.name = name;
    }

    double perThousand(long count) {
      return transactions == 0 ? 0 : count * 1000.0 / transactions;
    }
  }

  static Section measure(Workbench w, FencingToken hot) throws SQLException, InterruptedException {
    Phase fenced = new Phase("fenced, same token");
    Phase plain = new Phase("unfenced (no FOR SHARE)");
    long turn = Math.max(1, w.scale.multixactMillis() / w.scale.rounds());
    for (int round = 0; round < w.scale.rounds(); round++) {
      boolean fencedFirst = round % 2 == 0;
      for (int v = 0; v < 2; v++) {
        if ((v == 0) == fencedFirst) {
          turn(w, w.fenced, hot, fenced, turn);
        } else {
          turn(w, w.pool, null, plain, turn);
        }
      }
    }
    String x = "seconds of this variant's turns, end to end";
    List<Series> series =
        List.of(
            new Series("multixact IDs consumed, " + fenced.name, x, "multixact IDs", fenced.ids),
            new Series("multixact IDs consumed, " + plain.name, x, "multixact IDs", plain.ids));
    String clients = ", " + w.scale.clients() + " clients";
    List<Variant> variants =
        List.of(
            new Variant(
                "growth-multixact/unfenced",
                plain.name + clients,
                "tx/s",
                plain.rates,
                null,
                true,
                null),
            new Variant(
                "growth-multixact/fenced-same-token",
                fenced.name + clients,
                "tx/s",
                fenced.rates,
                plain.name + clients,
                true,
                TARGET_THROUGHPUT));
    List<Figure> figures =
        List.of(
            new Figure(
                PER_THOUSAND_ID,
                "multixact IDs per 1,000 fenced transactions (" + fenced.name + ")",
                "per 1,000 tx",
                fenced.perThousand(fenced.mxids),
                TARGET_PER_THOUSAND,
                false),
            new Figure(
                "growth-multixact/members-per-1000",
                "multixact members per 1,000 fenced transactions (" + fenced.name + ")",
                "per 1,000 tx",
                fenced.perThousand(fenced.members),
                null,
                false),
            new Figure(
                "growth-multixact/unfenced-multixacts-per-1000",
                "multixact IDs per 1,000 unfenced transactions (counted while they ran)",
                "per 1,000 tx",
                plain.perThousand(plain.mxids),
                null,
                false));
    List<String> findings = new ArrayList<>();
    for (Phase p : List.of(fenced, plain)) {
      findings.add(
          String.format(
              Locale.ROOT,
              "%s: %,d transactions in %.1f s; %,d multixact IDs (%.1f per 1,000 transactions)"
                  + " and %,d members (%.1f per 1,000 transactions).",
              p.name,
              p.transactions,
              p.seconds,
              p.mxids,
              p.perThousand(p.mxids),
              p.members,
              p.perThousand(p.members)));
    }
    double membersPerSecond = fenced.members / fenced.seconds;
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
            "%s mode, %d rounds, alternating which variant goes first. %d clients bound to the"
                + " same token of one resource (the leader pattern) run single-row UPDATEs of"
                + " their own row through a FencedDataSource for %d ms per round; the same"
                + " clients run the same UPDATEs unfenced for as long in the same round. During"
                + " each turn the next multixact ID is read live (datminmxid +"
                + " mxid_age(datminmxid)) every %d ms and at its end; the members are counted"
                + " after each turn with pg_get_multixact_members over the IDs it consumed. The"
                + " throughput ratio is the median of the per-round ratios; the multixacts per"
                + " 1,000 transactions are over all turns. The counters are the cluster's: other"
                + " sessions creating multixacts at the same time are counted too.",
            w.scale.name(),
            w.scale.rounds(),
            w.scale.clients(),
            turn,
            w.scale.multixactSampleMillis());
    return new Section(
        "growth-multixact",
        "Multixact growth under sustained same-token load (hazard 6)",
        method,
        variants,
        List.of(),
        figures,
        series,
        findings);
  }

  /** One turn of {@code millis} of the load, added to {@code phase}. */
  private static void turn(
      Workbench w, DataSource source, @Nullable FencingToken token, Phase phase, long millis)
      throws SQLException, InterruptedException {
    int clients = w.scale.clients();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong transactions = new AtomicLong();
    CyclicBarrier start = new CyclicBarrier(clients + 1);
    ExecutorService threads = Executors.newFixedThreadPool(clients);
    double offset = phase.seconds;
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
      long began = System.nanoTime();
      long firstMxid = Workbench.longValue(probe, NEXT_MXID);
      long next = began;
      long sample = w.scale.multixactSampleMillis() * 1_000_000;
      long end = began + millis * 1_000_000;
      while (next + sample < end) {
        next += sample;
        TimeUnit.NANOSECONDS.sleep(Math.max(0, next - System.nanoTime())); // the sampling period
        phase.ids.add(
            new Series.Point(
                offset + (System.nanoTime() - began) / 1e9,
                phase.mxids + Workbench.longValue(probe, NEXT_MXID) - firstMxid));
      }
      TimeUnit.NANOSECONDS.sleep(Math.max(0, end - System.nanoTime())); // the turn's length
      stop.set(true);
      for (Future<Void> f : running) {
        try {
          f.get();
        } catch (ExecutionException e) {
          throw new IllegalStateException("a client failed: " + e.getCause(), e.getCause());
        }
      }
      long ended = System.nanoTime();
      long lastMxid = Workbench.longValue(probe, NEXT_MXID);
      double seconds = (ended - began) / 1e9;
      phase.rates.add(transactions.get() / seconds);
      phase.seconds += seconds;
      phase.transactions += transactions.get();
      phase.mxids += lastMxid - firstMxid;
      phase.members += members(probe, firstMxid, lastMxid);
      phase.ids.add(new Series.Point(phase.seconds, phase.mxids));
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
