package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A measurement tool, not part of the test suite (its name matches no surefire include; run it by
 * name): the server and client cost of one single-row UPDATE transaction, unfenced, through {@link
 * FencedDataSource}, and in the shapes a carried check can take, sent by hand on the driver's
 * connection. With {@code -Dprobe.cg=<map file>} it only runs the transactions, one backend per
 * variant, and writes "pid variant n" lines for {@code docs/benchmark/carry-cpu-callgrind.sh},
 * which counts the backends' instructions under callgrind; without it, it prints the backend's CPU
 * ({@code /proc/<pid>/schedstat}, a local server) and the thread's CPU per transaction, median of
 * alternating rounds. It asserts only that every transaction wrote its row.
 */
class CarryCpuProbe {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  /** One transaction on {@code c} (autocommit off), the {@code i}-th of its run. */
  private interface Tx {
    void run(Connection c, int i) throws SQLException;
  }

  private static final String UPDATE = "UPDATE acct SET v = v + ? WHERE id = ?";
  private static final int ROWS = 1000;
  private static String resource = "probe";
  private static long token;

  private static void update(Connection c, int i) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(UPDATE)) {
      ps.setInt(1, 1);
      ps.setInt(2, 1 + i % ROWS);
      assertThat(ps.executeUpdate()).isOne();
    }
    c.commit();
  }

  /** {@code check;UPDATE} as one prepared statement, as CarriedCheck sends it. */
  private static Tx carried(String check, boolean arrays) {
    String sql = check + ";" + UPDATE;
    return (c, i) -> {
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        if (arrays) {
          ps.setArray(1, c.createArrayOf("text", new String[] {resource}));
          ps.setArray(2, c.createArrayOf("bigint", new Long[] {token}));
        } else {
          ps.setString(1, resource);
          ps.setLong(2, token);
        }
        ps.setInt(3, 1);
        ps.setInt(4, 1 + i % ROWS);
        ps.setMaxRows(1); // as CarriedCheck for executeUpdate
        ps.execute();
        try (ResultSet rs = ps.getResultSet()) {
          rs.next();
        }
        assertThat(ps.getMoreResults()).isFalse();
        assertThat(ps.getUpdateCount()).isOne();
      }
      c.commit();
    };
  }

  /**
   * Issue 14's function-free shape (measured, not adopted: ARCHITECTURE, "The carried check's
   * server CPU"): the advisory share lock and a transaction-local note of it through a view, then
   * in a later statement the read that decides, {@code check_one} only when it does not accept;
   * {@code A;B;UPDATE} as one prepared statement.
   */
  private static final String AB_VIEW =
      "CREATE OR REPLACE VIEW fencing.probe_accept AS SELECT r.name, r.max_seen, r.id,"
          + " r.lock_space, fencing.advisory_key(r.id) AS lock_key, r.has_protected,"
          + " r.id || ':' || r.lock_space AS tag FROM fencing.resource r"
          + " WHERE r.issuer = CASE WHEN pg_catalog.current_setting('transaction_isolation')"
          + " = 'read committed' THEN 'local' END AND NOT r.strict_mode AND r.max_seen > 0";

  private static final String AB =
      "SELECT pg_catalog.pg_advisory_xact_lock_shared(c.lock_space, c.lock_key),"
          + " pg_catalog.set_config('fencing.probe_locked', c.tag, true)"
          + " FROM fencing.probe_accept c WHERE c.name = ? AND c.max_seen = ?;"
          + "SELECT coalesce((SELECT 0 FROM fencing.probe_accept c WHERE c.name = ?"
          + " AND c.max_seen = ? AND NOT c.has_protected"
          + " AND c.tag = pg_catalog.current_setting('fencing.probe_locked', true)),"
          + " fencing.check_one(?, ?))";

  /**
   * The same with the lock keyed by the name (the key space a constant) and no note: A reads no
   * table. Not safe as it stands: no exclusive locker takes that key (ARCHITECTURE, "The key from
   * the name").
   */
  private static final String NAME =
      "SELECT pg_catalog.pg_advisory_xact_lock_shared(1178946115, pg_catalog.hashtext(?));"
          + "SELECT coalesce((SELECT 0 FROM fencing.probe_accept c WHERE c.name = ?"
          + " AND c.max_seen = ? AND NOT c.has_protected AND c.lock_space = 1178946115),"
          + " fencing.check_one(?, ?))";

  /**
   * The one-statement fast form evaluated for V33 (ARCHITECTURE, "The carried check's server CPU":
   * not adopted): the lock in a subquery, the read in a SubPlan correlated to the lock's output,
   * accepting only a version whose raw xmax is 0 (the view below). The probe clears the resource
   * row's xmax first (a plain UPDATE by the superuser), since try_acquire leaves its own lock
   * there.
   */
  private static final String LATEST_VIEW =
      "CREATE OR REPLACE VIEW fencing.probe_latest AS SELECT r.name, r.max_seen, r.lock_space"
          + " FROM fencing.resource r WHERE r.max_seen > 0 AND r.issuer = CASE WHEN"
          + " pg_catalog.current_setting('transaction_isolation') = 'read committed'"
          + " THEN 'local' END AND NOT r.strict_mode AND NOT r.has_protected"
          + " AND r.xmax OPERATOR(pg_catalog.=) '0'::xid";

  private static String oneStatement(int space) {
    return "SELECT coalesce((SELECT -1 FROM fencing.probe_latest c"
        + " WHERE c.name OPERATOR(pg_catalog.=) ? AND c.max_seen OPERATOR(pg_catalog.=) ?"
        + " AND c.lock_space OPERATOR(pg_catalog.=) "
        + space
        + " AND l.k IS NOT NULL), fencing.check_one(?, ?))"
        + " FROM (SELECT pg_catalog.pg_advisory_xact_lock_shared("
        + space
        + ", pg_catalog.hashtext(?)) k OFFSET 0) l";
  }

  /** {@code check;UPDATE}: the check's statements each return -1 (accepted) or nothing (lock). */
  private static Tx carriedFast(String check, String rt, int statements) {
    return (c, i) -> {
      try (PreparedStatement ps = c.prepareStatement(check + ";" + UPDATE)) {
        for (int k = 0; k < rt.length(); k++) {
          if (rt.charAt(k) == 'r') {
            ps.setString(1 + k, resource);
          } else {
            ps.setLong(1 + k, token);
          }
        }
        ps.setInt(rt.length() + 1, 1);
        ps.setInt(rt.length() + 2, 1 + i % ROWS);
        ps.setMaxRows(1);
        ps.execute();
        for (int s = 1; s <= statements; s++) {
          try (ResultSet rs = ps.getResultSet()) {
            assertThat(rs.next()).isTrue();
            if (s == statements) {
              assertThat(rs.getInt(1)).as("accepted by the view").isEqualTo(-1);
            }
          }
          assertThat(ps.getMoreResults()).isEqualTo(s < statements);
        }
        assertThat(ps.getUpdateCount()).isOne();
      }
      c.commit();
    };
  }

  /** {@code check;UPDATE}, the check's parameters the resource (r) and token (t) in {@code rt}. */
  private static Tx carriedAb(String check, String rt) {
    return (c, i) -> carriedAb(c, i, check, rt);
  }

  private static void carriedAb(Connection c, int i, String check, String rt) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(check + ";" + UPDATE)) {
      for (int k = 0; k < rt.length(); k++) {
        if (rt.charAt(k) == 'r') {
          ps.setString(1 + k, resource);
        } else {
          ps.setLong(1 + k, token);
        }
      }
      ps.setInt(rt.length() + 1, 1);
      ps.setInt(rt.length() + 2, 1 + i % ROWS);
      ps.setMaxRows(1);
      ps.execute();
      try (ResultSet rs = ps.getResultSet()) {
        rs.next();
      }
      assertThat(ps.getMoreResults()).isTrue();
      try (ResultSet rs = ps.getResultSet()) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getInt(1)).isZero();
      }
      assertThat(ps.getMoreResults()).isFalse();
      assertThat(ps.getUpdateCount()).isOne();
    }
    c.commit();
  }

  /** The check in a round trip of its own, then the UPDATE. */
  private static Tx separate(String check) {
    return (c, i) -> {
      try (PreparedStatement ps = c.prepareStatement(check)) {
        ps.setString(1, resource);
        ps.setLong(2, token);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
        }
      }
      update(c, i);
    };
  }

  @Test
  void probe() throws Exception {
    FencingTestSupport.migrate(db);
    DataSource plain = db.dataSource();
    exec(plain, "CREATE TABLE acct (id int PRIMARY KEY, v int NOT NULL)");
    exec(plain, "INSERT INTO acct SELECT g, 0 FROM generate_series(1, " + ROWS + ") g");
    exec(plain, AB_VIEW);
    try (LeaseClient client = LeaseClient.builder(plain).holder("probe").build()) {
      Lease lease = client.tryAcquire(resource, Duration.ofMinutes(30)).orElseThrow();
      token = lease.token().value();
      FencedDataSource fenced = FencedDataSource.wrap(plain);
      Map<String, Tx> all = new LinkedHashMap<>();
      all.put("unfenced", CarryCpuProbe::update);
      all.put("fenced", CarryCpuProbe::update);
      all.put("carried-arrays", carried("SELECT fencing.check_tokens(?, ?)", true));
      all.put("carried-one", carried("SELECT fencing.check_one(?, ?)", false));
      all.put("separate-one", separate("SELECT fencing.check_one(?, ?)"));
      all.put("carried-noop", carried("SELECT length(?) + ?", false));
      all.put("carried-ab", carriedAb(AB, "rtrtrt"));
      all.put("carried-name", carriedAb(NAME, "rrtrt"));
      // the benchmark's SQL-level floor (Workloads.FLOOR): a bare locking read of a plain table
      exec(plain, "CREATE TABLE probe_floor (name text PRIMARY KEY, max_seen bigint NOT NULL)");
      exec(plain, "INSERT INTO probe_floor VALUES ('" + resource + "', " + token + ")");
      all.put(
          "carried-floor",
          carried("SELECT 1 FROM probe_floor WHERE name = ? AND max_seen = ? FOR SHARE", false));
      exec(plain, LATEST_VIEW);
      // the probe's lease row without the acquisition's own lock (see LATEST_VIEW)
      exec(plain, "UPDATE fencing.resource SET updated_at = updated_at WHERE name = 'probe'");
      int space =
          (int)
              FencingTestSupport.queryLong(
                  plain,
                  "SELECT substring(pg_get_expr(d.adbin, d.adrelid), '^''?(-?[0-9]+)')::int"
                      + " FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid"
                      + " AND a.attnum = d.adnum WHERE d.adrelid = 'fencing.resource'::regclass"
                      + " AND a.attname = 'lock_space'");
      all.put("carried-v30", carriedFast(CheckForms.fastSql("fencing", space), "rrtrt", 2));
      all.put("carried-onestmt", carriedFast(oneStatement(space), "rtrtr", 1));
      String read =
          "SELECT coalesce((SELECT -1 FROM fencing.probe_latest c"
              + " WHERE c.name OPERATOR(pg_catalog.=) ? AND c.max_seen OPERATOR(pg_catalog.=) ?"
              + " AND c.lock_space OPERATOR(pg_catalog.=) ";
      String lock =
          "pg_catalog.pg_advisory_xact_lock_shared(" + space + ", pg_catalog.hashtext(?))";
      // the lock in a VALUES row, the SubPlan correlated to its column (a one-time filter)
      all.put(
          "carried-values",
          carriedFast(
              read
                  + space
                  + " AND l.k IS NOT NULL), fencing.check_one(?, ?)) FROM (VALUES ("
                  + lock
                  + ")) l(k)",
              "rtrtr",
              1));
      // the same, correlated through the key space the row carries (no one-time filter)
      all.put(
          "carried-values-s",
          carriedFast(
              read
                  + "l.s), fencing.check_one(?, ?)) FROM (VALUES ("
                  + space
                  + ", "
                  + lock
                  + ")) l(s, k)",
              "rtrtr",
              1));
      // the lock as a function scan
      all.put(
          "carried-fn",
          carriedFast(
              read
                  + space
                  + " AND l.k IS NOT NULL), fencing.check_one(?, ?)) FROM "
                  + lock
                  + " l(k)",
              "rtrtr",
              1));
      // the floor of any one-statement form: B alone, no lock (unsafe: measured, never sent)
      String v30 = CheckForms.fastSql("fencing", space);
      all.put("carried-b-only", carriedFast(v30.substring(v30.indexOf(';') + 1), "rtrt", 1));
      String where =
          " FROM fencing.check_at_token c WHERE c.name OPERATOR(pg_catalog.=) ?"
              + " AND c.max_seen OPERATOR(pg_catalog.=) ? AND c.lock_space OPERATOR(pg_catalog.=) "
              + space;
      all.put("b-plain", carriedFast("SELECT -1" + where, "rt", 1));
      all.put(
          "b-agg",
          carriedFast("SELECT coalesce(max(-1), fencing.check_one(?, ?))" + where, "rtrt", 1));
      all.put(
          "b-table",
          carriedFast(
              "SELECT -1 FROM fencing.resource c WHERE c.name = ? AND c.max_seen = ?", "rt", 1));
      // the lock in a CASE before an uncorrelated sub-select (an InitPlan, evaluated lazily)
      all.put(
          "carried-case",
          carriedFast(
              "SELECT CASE WHEN pg_catalog.pg_advisory_xact_lock_shared("
                  + space
                  + ", pg_catalog.hashtext(?)) IS NULL THEN NULL ELSE"
                  + v30.substring(v30.indexOf(';') + 1 + "SELECT".length())
                  + " END",
              "rrtrt",
              1));
      String only = System.getProperty("probe.variants", "");
      if (!only.isEmpty()) {
        all.keySet().retainAll(Arrays.asList(only.split(",")));
      }
      int n = Integer.getInteger("probe.n", 3000);
      String map = System.getProperty("probe.cg", "");
      try (FencingScope scope = Fencing.bind(lease)) {
        if (!map.isEmpty()) {
          StringBuilder lines = new StringBuilder();
          for (Map.Entry<String, Tx> v : all.entrySet()) {
            exec(plain, "VACUUM acct"); // every variant starts from the same table
            try (Connection c = (v.getKey().equals("fenced") ? fenced : plain).getConnection()) {
              c.setAutoCommit(false);
              int pid = pid(c);
              for (int i = 0; i < 100 + n; i++) {
                v.getValue().run(c, i);
              }
              lines.append(pid).append(' ').append(v.getKey()).append(' ').append(n).append('\n');
            }
          }
          Files.writeString(Path.of(map), lines.toString());
        } else {
          System.out.print(cpu(all, plain, fenced, n, Integer.getInteger("probe.rounds", 6)));
        }
      }
    }
  }

  private static String cpu(Map<String, Tx> all, DataSource plain, DataSource fenced, int n, int r)
      throws Exception {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    Map<String, List<double[]>> results = new LinkedHashMap<>();
    for (int round = -1; round < r; round++) {
      for (Map.Entry<String, Tx> v : all.entrySet()) {
        try (Connection c = (v.getKey().equals("fenced") ? fenced : plain).getConnection()) {
          c.setAutoCommit(false);
          int pid = pid(c);
          try (Statement s = c.createStatement()) {
            s.execute("SET synchronous_commit = off");
          }
          c.commit();
          for (int i = 0; i < 300; i++) {
            v.getValue().run(c, i);
          }
          long b0 = backendCpu(pid);
          long c0 = threads.getCurrentThreadCpuTime();
          for (int i = 0; i < n; i++) {
            v.getValue().run(c, i);
          }
          long b1 = backendCpu(pid);
          long c1 = threads.getCurrentThreadCpuTime();
          if (round >= 0) {
            results
                .computeIfAbsent(v.getKey(), k -> new ArrayList<>())
                .add(new double[] {(b1 - b0) / 1000.0 / n, (c1 - c0) / 1000.0 / n});
          }
        }
      }
    }
    StringBuilder out = new StringBuilder("variant: backend µs / client thread µs (medians)\n");
    results.forEach(
        (k, v) ->
            out.append(String.format("%-16s %6.1f / %6.1f%n", k, median(v, 0), median(v, 1))));
    return out.toString();
  }

  private static long backendCpu(int pid) throws Exception {
    return Long.parseLong(Files.readString(Path.of("/proc/" + pid + "/schedstat")).split(" ")[0]);
  }

  private static int pid(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT pg_backend_pid()");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      int pid = rs.getInt(1);
      c.commit();
      return pid;
    }
  }

  private static double median(List<double[]> rounds, int k) {
    double[] a = rounds.stream().mapToDouble(x -> x[k]).sorted().toArray();
    return a[a.length / 2];
  }
}
