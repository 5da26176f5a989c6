package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
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
import org.postgresql.ds.PGSimpleDataSource;
import org.postgresql.jdbc.PreferQueryMode;

/**
 * A measurement tool, not part of the test suite (its name matches no surefire include; run it by
 * name): the server cost of a read-only transaction's commit with one token bound (issue 13's
 * {@code read-only/bound-1000}: three single-row SELECTs, then the commit), unfenced, through
 * {@link FencedDataSource}, and with the commit's check in the shapes it could take, sent by hand
 * on the driver's connection in each {@code preferQueryMode}. With {@code -Dprobe.cg=<map file>} it
 * only runs the transactions, one backend per variant, and writes "pid variant n" lines for {@code
 * docs/benchmark/carry-cpu-callgrind.sh} ({@code PROBE=ReadOnlyCommitProbe}), which counts the
 * backends' instructions under callgrind; without it, it prints the backend's CPU ({@code
 * /proc/<pid>/schedstat}, a local server) per transaction, median of alternating rounds. Either way
 * it prints how many statements each variant's backend holds server-prepared at its end. It asserts
 * only that no check row comes back where none should.
 */
class ReadOnlyCommitProbe {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final int ROWS = 1000;
  private static final String CASE =
      "SELECT CASE WHEN pg_catalog.pg_current_xact_id_if_assigned() IS NULL THEN NULL ELSE ";
  private static String resource = "probe";
  private static long token;

  /** One transaction on {@code c} (autocommit off), the {@code i}-th of its run. */
  private interface Tx {
    void run(Connection c, int i) throws SQLException;
  }

  private record Variant(String mode, Tx tx) {}

  private static void reads(Connection c, int i) throws SQLException {
    for (String t : new String[] {"ro_a", "ro_b", "ro_c"}) {
      try (PreparedStatement ps = c.prepareStatement("SELECT v FROM " + t + " WHERE id = ?")) {
        ps.setInt(1, 1 + i % ROWS);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          rs.getInt(1);
        }
      }
    }
  }

  private static void plain(Connection c, int i) throws SQLException {
    reads(c, i);
    c.commit();
  }

  /**
   * The reads, then {@code check; COMMIT} as one statement: bound with setObject (the driver's
   * untyped binding, as TokenChecker did), with setString/setLong, or with no parameters (the
   * check's text holds the literals); {@code row} whether a row comes back.
   */
  private static Tx check(String sql, String binding, boolean row) {
    return (c, i) -> {
      reads(c, i);
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        if (binding.equals("object")) {
          ps.setObject(1, resource);
          ps.setObject(2, token);
        } else if (binding.equals("typed")) {
          ps.setString(1, resource);
          ps.setLong(2, token);
        }
        ps.execute();
        try (ResultSet rs = ps.getResultSet()) {
          assertThat(rs.next()).isEqualTo(row);
          if (row) {
            rs.getInt(1);
          }
        }
        while (ps.getMoreResults() || ps.getUpdateCount() != -1) {
          // the COMMIT's count
        }
      }
    };
  }

  @Test
  void probe() throws Exception {
    FencingTestSupport.migrate(db);
    for (String t : new String[] {"ro_a", "ro_b", "ro_c"}) {
      exec(db.dataSource(), "CREATE TABLE " + t + " (id int PRIMARY KEY, v int NOT NULL)");
      exec(db.dataSource(), "INSERT INTO " + t + " SELECT g, g FROM generate_series(1, 1000) g");
      exec(db.dataSource(), "VACUUM ANALYZE " + t);
    }
    try (LeaseClient client = LeaseClient.builder(db.dataSource()).holder("probe").build()) {
      Lease lease = client.tryAcquire(resource, Duration.ofMinutes(30)).orElseThrow();
      token = lease.token().value();
      String literal = "E'" + resource + "', " + token + "::bigint)";
      String caseParam = CASE + "fencing.check_one(?, ?) END; COMMIT";
      String caseLiteral = CASE + "fencing.check_one(" + literal + " END; COMMIT";
      String where = " WHERE pg_catalog.pg_current_xact_id_if_assigned() IS NOT NULL; COMMIT";
      String whereParam = "SELECT fencing.check_one(?, ?)" + where;
      String whereLiteral = "SELECT fencing.check_one(" + literal + where;
      // the commit's test since V37 (CheckLiteral.WRITTEN): the xid test, or a holdable cursor
      String whereHeld =
          "SELECT fencing.check_one(?, ?) WHERE " + CheckLiteral.WRITTEN + "; COMMIT";
      Map<String, Variant> all = new LinkedHashMap<>();
      for (String mode : new String[] {"extended", "simple", "extendedCacheEverything", "p0"}) {
        String m = mode.equals("extended") ? "" : "/" + mode;
        all.put("unfenced" + m, new Variant(mode, ReadOnlyCommitProbe::plain));
        all.put("case-object" + m, new Variant(mode, check(caseParam, "object", true)));
        all.put("case-typed" + m, new Variant(mode, check(caseParam, "typed", true)));
        all.put("case-literal" + m, new Variant(mode, check(caseLiteral, "", true)));
        all.put("where-typed" + m, new Variant(mode, check(whereParam, "typed", false)));
        all.put("where-literal" + m, new Variant(mode, check(whereLiteral, "", false)));
        all.put("where-held-typed" + m, new Variant(mode, check(whereHeld, "typed", false)));
        // the floor of any check sent with the COMMIT: a statement that calls nothing
        all.put("floor" + m, new Variant(mode, check("SELECT 1 WHERE false; COMMIT", "", false)));
        all.put("fenced" + m, new Variant(mode, null));
      }
      String only = System.getProperty("probe.variants", "");
      if (!only.isEmpty()) {
        all.keySet().retainAll(Arrays.asList(only.split(",")));
      }
      int n = Integer.getInteger("probe.n", 3000);
      int rounds = Integer.getInteger("probe.rounds", 6);
      String map = System.getProperty("probe.cg", "");
      try (FencingScope scope = Fencing.bind(lease)) {
        StringBuilder lines = new StringBuilder();
        Map<String, List<Double>> results = new LinkedHashMap<>();
        for (int round = map.isEmpty() ? -1 : 0; round < (map.isEmpty() ? rounds : 1); round++) {
          for (Map.Entry<String, Variant> v : all.entrySet()) {
            Variant variant = v.getValue();
            boolean fenced = variant.tx() == null;
            Tx tx = fenced ? ReadOnlyCommitProbe::plain : variant.tx();
            DataSource ds = source(variant.mode());
            try (Connection c = (fenced ? FencedDataSource.wrap(ds) : ds).getConnection()) {
              try (Statement s = c.createStatement()) {
                s.execute("SET synchronous_commit = off");
              }
              c.setAutoCommit(false);
              int pid = pid(c);
              for (int i = 0; i < (map.isEmpty() ? 300 : 100); i++) {
                tx.run(c, i);
              }
              long b0 = map.isEmpty() ? backendCpu(pid) : 0;
              for (int i = 0; i < n; i++) {
                tx.run(c, i);
              }
              long b1 = map.isEmpty() ? backendCpu(pid) : 0;
              int prepared = prepared(c);
              if (round == 0) {
                System.out.println(v.getKey() + ": " + prepared + " server-prepared");
              }
              if (!map.isEmpty()) {
                lines.append(pid).append(' ').append(v.getKey()).append(' ').append(n);
                lines.append('\n');
              } else if (round >= 0) {
                results
                    .computeIfAbsent(v.getKey(), k -> new ArrayList<>())
                    .add((b1 - b0) / 1e3 / n);
              }
            }
          }
        }
        if (!map.isEmpty()) {
          Files.writeString(Path.of(map), lines.toString());
        } else {
          StringBuilder out = new StringBuilder("variant: backend µs per transaction (median)\n");
          results.forEach(
              (k, r) ->
                  out.append(
                      String.format(
                          "%-32s %6.1f%n", k, r.stream().sorted().toList().get(r.size() / 2))));
          System.out.print(out);
        }
      }
    }
  }

  /** Connections in {@code mode}: a preferQueryMode, or p0 (extended, prepareThreshold=0). */
  private static DataSource source(String mode) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setUrl(db.jdbcUrl());
    ds.setUser(db.user());
    ds.setPassword(db.password());
    if (mode.equals("p0")) {
      ds.setPrepareThreshold(0);
    } else {
      ds.setPreferQueryMode(PreferQueryMode.of(mode));
    }
    return ds;
  }

  private static int prepared(Connection c) throws SQLException {
    c.setAutoCommit(true);
    try (Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT count(*) FILTER (WHERE statement LIKE '%check_one%')"
                    + " FROM pg_prepared_statements")) {
      rs.next();
      return rs.getInt(1);
    }
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
}
