package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A measurement tool, not part of the test suite (its name matches no surefire include; run it by
 * name, {@code -Dtest=AutocommitReadProbe}): a {@code PreparedStatement} read in autocommit,
 * unfenced, fenced with the commit's check behind it ({@link CheckedRead}, one round trip), and
 * fenced the long way (a fetch size, which pgjdbc ignores in autocommit, keeps the wrapper's own
 * transaction: the read, then check-and-COMMIT). Prints, per read, the wall time and the backend's
 * CPU ({@code /proc/<pid>/schedstat}, a local server), medians of alternating rounds. Asserts only
 * that every read returned its row.
 */
class AutocommitReadProbe {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final int READS = 2000;
  private static final int ROUNDS = 7;

  @Test
  void measure() throws Exception {
    FencingTestSupport.migrate(db);
    DataSource plain = db.dataSource();
    String resource = externalResource(plain, "read-probe", 5);
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    Map<String, List<long[]>> results = new LinkedHashMap<>();
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 5));
        Connection u = plain.getConnection();
        Connection f = fenced.getConnection();
        Connection l = fenced.getConnection()) {
      for (int round = 0; round < ROUNDS; round++) {
        results.computeIfAbsent("unfenced", k -> new ArrayList<>()).add(run(u, 0));
        results.computeIfAbsent("fenced, check behind", k -> new ArrayList<>()).add(run(f, 0));
        results.computeIfAbsent("fenced, long way", k -> new ArrayList<>()).add(run(l, 10));
      }
    }
    for (Map.Entry<String, List<long[]>> e : results.entrySet()) {
      System.out.printf(
          "%-22s wall %6d ns/read  backend cpu %6d ns/read%n",
          e.getKey(), median(e.getValue(), 0) / READS, median(e.getValue(), 1) / READS);
    }
  }

  /** {@code READS} reads on {@code c}: wall and backend CPU nanoseconds. */
  private static long[] run(Connection c, int fetchSize) throws Exception {
    int pid;
    try (PreparedStatement ps = c.prepareStatement("SELECT pg_backend_pid()");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      pid = rs.getInt(1);
    }
    long cpu = cpu(pid);
    long start = System.nanoTime();
    try (PreparedStatement ps = c.prepareStatement("SELECT ?::int + 1 AS r")) {
      ps.setFetchSize(fetchSize);
      for (int i = 0; i < READS; i++) {
        ps.setInt(1, i);
        try (ResultSet rs = ps.executeQuery()) {
          assertThat(rs.next()).isTrue();
          assertThat(rs.getInt(1)).isEqualTo(i + 1);
        }
      }
    }
    return new long[] {System.nanoTime() - start, cpu(pid) - cpu};
  }

  private static long cpu(int pid) throws SQLException {
    try {
      return Long.parseLong(Files.readString(Path.of("/proc/" + pid + "/schedstat")).split(" ")[0]);
    } catch (Exception e) {
      return 0; // not a local server
    }
  }

  private static long median(List<long[]> runs, int index) {
    long[] v = runs.stream().mapToLong(r -> r[index]).sorted().toArray();
    return v[v.length / 2];
  }
}
