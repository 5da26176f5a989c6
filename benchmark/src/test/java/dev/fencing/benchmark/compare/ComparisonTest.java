package dev.fencing.benchmark.compare;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.benchmark.compare.Comparison.Row;
import dev.fencing.benchmark.compare.Comparison.Settings;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.testing.TestDatabaseExtension;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * Plays the comparison on the test database and the local Redis (127.0.0.1:6379; {@code .ci/run}
 * starts it) and checks that the table says what the founding document says, because that is what
 * happened.
 */
class ComparisonTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static List<Row> rows = List.of();
  private static Settings settings = Settings.defaults();

  @BeforeAll
  static void play() throws Exception {
    FencingMigrations.builder(db.migrationDataSource())
        .ownerRole(db.ownerRole())
        .applicationRole(db.appRole())
        .build()
        .migrate();
    rows = new Comparison(db.dataSource(), settings).run();
  }

  private static Row row(String name) {
    return rows.stream().filter(r -> r.spec().name().equals(name)).findFirst().orElseThrow();
  }

  private static Measurement early(String name) {
    Measurement m = row(name).early();
    assertThat(m).as(name + ": " + row(name).notRun()).isNotNull();
    return m;
  }

  /**
   * A zombie write landing between the new holder's acquisition and its first write: refused where
   * PostgreSQL learned the new token at acquisition (the lease; ZooKeeper and etcd followed by
   * {@code fence(token)}), committed where it learns it only from the new holder's first write
   * (ZooKeeper and etcd without {@code fence()}) or never (no token, a random value).
   */
  @Test
  void aStaleWriteBeforeTheNewHolderHasWrittenIsRefusedOnlyWhereTheTokenWasFencedAtAcquisition() {
    List<String> committed =
        new ArrayList<>(
            List.of(
                TrustingLease.SPEC.name(),
                RedisLock.SPEC.name(),
                ZooKeeperLock.WITHOUT_FENCE.name()));
    List<String> refused =
        new ArrayList<>(List.of(PostgresLease.SPEC.name(), ZooKeeperLock.SPEC.name()));
    if (EtcdProcess.findExecutable().isPresent()) {
      committed.add(EtcdLock.WITHOUT_FENCE.name());
      refused.add(EtcdLock.SPEC.name());
    }
    for (String name : committed) {
      Measurement m = early(name);
      assertThat(m.stale().isAccepted()).as(name).isTrue();
      assertThat(m.writers()).as(name).containsExactly("client-1", "client-2");
      assertThat(m.staleEvidence())
          .as(name)
          .isEqualTo("No: client 1's stale write committed (then client 2's)");
    }
    for (String name : refused) {
      Measurement m = early(name);
      assertThat(m.stale().isAccepted()).as(name).isFalse();
      assertThat(m.stale().refusal()).as(name).startsWith("StaleFencingTokenException ZF001");
      assertThat(m.writers()).as(name).containsExactly("client-2");
      assertThat(m.balance()).as(name).isEqualTo(50);
      assertThat(m.tokens()).as(name).hasSize(2);
      // the zombie's token is below the new holder's, which PostgreSQL already knew
      assertThat(m.tokens().get(0).orElseThrow())
          .as(name)
          .isLessThan(m.tokens().get(1).orElseThrow());
    }
  }

  private static Measurement measured(String name) {
    Measurement m = row(name).measurement();
    assertThat(m).as(name + ": " + row(name).notRun()).isNotNull();
    return m;
  }

  @Test
  void rowsFollowTheFoundingDocument() {
    assertThat(rows)
        .extracting(r -> r.spec().name())
        .containsExactly(
            TrustingLease.SPEC.name(),
            RedisLock.SPEC.name(),
            ZooKeeperLock.SPEC.name(),
            EtcdLock.SPEC.name(),
            PostgresLease.SPEC.name(),
            ZooKeeperLock.WITHOUT_FENCE.name(),
            EtcdLock.WITHOUT_FENCE.name());
  }

  @Test
  void trustingTheClientLetsTheStaleWriteCorruptTheBalance() {
    Measurement m = measured(TrustingLease.SPEC.name());
    assertThat(m.stale().isAccepted()).isTrue();
    assertThat(m.staleWriteBlocked()).isFalse();
    assertThat(m.writers()).containsExactly("client-2", "client-1");
    assertThat(m.balance()).isEqualTo(70).isEqualTo(m.lostUpdateBalance());
    assertThat(m.corrupted()).isTrue();
    assertThat(m.tokens()).hasSize(8).allMatch(Optional::isEmpty);
    assertThat(m.monotonic()).isFalse();
    assertThat(row(TrustingLease.SPEC.name()).agreesWithDocument()).isTrue();
  }

  @Test
  void aRedisLockWithARandomValueLetsTheStaleWriteCorruptTheBalance() {
    Measurement m = measured(RedisLock.SPEC.name());
    assertThat(m.stale().isAccepted()).isTrue();
    assertThat(m.writers()).containsExactly("client-2", "client-1");
    assertThat(m.balance()).isEqualTo(70);
    assertThat(m.corrupted()).isTrue();
    // 8 random 128-bit values: all present and distinct, and not in increasing order (the chance
    // that 8 random values come out sorted is 1 in 8! = 40,320).
    assertThat(m.tokens()).hasSize(8).allMatch(Optional::isPresent);
    assertThat(m.tokens().stream().map(Optional::orElseThrow).distinct()).hasSize(8);
    assertThat(m.monotonic()).isFalse();
    assertThat(row(RedisLock.SPEC.name()).agreesWithDocument()).isTrue();
  }

  @Test
  void thePostgresLeaseRefusesTheStaleWriteAndTheBalanceStaysIntact() {
    Measurement m = measured(PostgresLease.SPEC.name());
    assertFenced(m);
    assertThat(m.balance()).isEqualTo(m.intactBalance());
    assertThat(row(PostgresLease.SPEC.name()).agreesWithDocument()).isTrue();
  }

  @Test
  void zooKeeperTokensFenceTheStaleWriteWithOrWithoutFence() {
    assertFenced(measured(ZooKeeperLock.SPEC.name()));
    assertFenced(measured(ZooKeeperLock.WITHOUT_FENCE.name()));
  }

  /** The etcd rows need the etcd executable (.ci/run installs etcd-server); else they say so. */
  @Test
  void etcdRevisionsFenceTheStaleWriteWithOrWithoutFence() {
    for (String name : List.of(EtcdLock.SPEC.name(), EtcdLock.WITHOUT_FENCE.name())) {
      Row etcd = row(name);
      if (EtcdProcess.findExecutable().isPresent()) {
        assertFenced(measured(name));
      } else {
        assertThat(etcd.measurement()).isNull();
        assertThat(etcd.notRun()).startsWith("no etcd on the PATH");
        assertThat(FoundingTable.cells(etcd)).contains("not run: " + etcd.notRun());
      }
    }
  }

  @Test
  void aRowThatWasNotRunStillFillsEveryColumn() {
    Row notRun = new Row(EtcdLock.SPEC, null, null, "no etcd on the PATH");
    assertThat(FoundingTable.cells(notRun))
        .hasSameSizeAs(FoundingTable.HEADER)
        .endsWith(EtcdLock.SPEC.note())
        .contains("not run: no etcd on the PATH");
  }

  private static void assertFenced(Measurement m) {
    assertThat(m.stale().isAccepted()).isFalse();
    assertThat(m.stale().refusal()).startsWith("StaleFencingTokenException ZF001");
    assertThat(m.staleWriteBlocked()).isTrue();
    assertThat(m.writers()).containsExactly("client-2");
    assertThat(m.balance()).isEqualTo(50);
    assertThat(m.corrupted()).isFalse();
    assertThat(m.tokens()).hasSize(8).allMatch(Optional::isPresent);
    assertThat(m.tokens().stream().map(Optional::orElseThrow).toList())
        .isSorted()
        .doesNotHaveDuplicates();
    assertThat(m.monotonic()).isTrue();
  }

  @Test
  void everyRowThatRanAgreesWithTheDocument() {
    for (Row row : rows) {
      if (row.measurement() != null) {
        assertThat(row.agreesWithDocument()).as(row.spec().name()).isTrue();
        // a fencing row blocks the stale write; a non-fencing row lets it through
        assertThat(row.measurement().staleWriteBlocked())
            .as(row.spec().name())
            .isEqualTo(row.spec().claimsBlocking());
      }
    }
  }

  @Test
  void theTableNamesEveryOutcome() {
    String table = FoundingTable.markdown(rows);
    assertThat(table.lines())
        .hasSize(2 + rows.size())
        .first()
        .isEqualTo(
            "| Approach | Produces monotonic token? (measured) | Stale-holder write blocked?"
                + " (document) | Stale write blocked (measured) | Stale write blocked when it lands"
                + " before the new holder's first write (measured) | Data afterwards (measured) |"
                + " Notes / tradeoff |");
    assertThat(table)
        .contains("No: client 1's stale write committed")
        .contains("Corrupted: balance 70, should be 50 — client 2's withdrawal lost")
        .contains("Yes: refused by PostgreSQL, StaleFencingTokenException ZF001")
        .contains("Intact: balance 50 (writes committed: client-2)");
  }

  @Test
  void redisKeysOfTheRunAreGone() {
    try (Jedis jedis = new Jedis(settings.redisHost(), settings.redisPort())) {
      Set<String> left = jedis.keys("fencing-compare:" + settings.runId() + ":*");
      assertThat(left).isEmpty();
    }
  }

  @Test
  void theReportPrintsTheTableAndWritesItAsMarkdown(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("table.md");
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int status =
        CompareCommand.report(rows, new PrintStream(bytes, true, StandardCharsets.UTF_8), file);
    String out = bytes.toString(StandardCharsets.UTF_8);
    assertThat(status).as(out).isZero();
    String markdown = Files.readString(file, StandardCharsets.UTF_8);
    long run = rows.stream().filter(r -> r.measurement() != null).count();
    assertThat(run).isGreaterThanOrEqualTo(5);
    assertThat(out)
        .contains(markdown)
        .contains("as the founding document says: " + run + " of " + run);
    assertThat(markdown.lines()).hasSize(2 + 7);
  }

  @Test
  void aRowThatContradictsTheDocumentFailsTheRun(@TempDir Path dir) throws Exception {
    Measurement blocked =
        new Measurement(
            List.of(Optional.empty(), Optional.empty()),
            Approach.Outcome.refused("made up"),
            50,
            50,
            70,
            List.of("client-2"));
    Row contradicting = new Row(TrustingLease.SPEC, blocked, null, "");
    assertThat(contradicting.agreesWithDocument()).isFalse();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int status =
        CompareCommand.report(
            List.of(contradicting, row(PostgresLease.SPEC.name())),
            new PrintStream(bytes, true, StandardCharsets.UTF_8),
            dir.resolve("t.md"));
    assertThat(status).isEqualTo(1);
    assertThat(bytes.toString(StandardCharsets.UTF_8))
        .contains("as the founding document says: 1 of 2");
  }

  @Test
  void badArgumentsAreRefusedWithUsage() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream errStream = new PrintStream(err, true, StandardCharsets.UTF_8);
    PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    assertThat(CompareCommand.run(new String[] {"--bogus"}, out, errStream)).isEqualTo(2);
    assertThat(CompareCommand.run(new String[] {"--url"}, out, errStream)).isEqualTo(2);
    assertThat(CompareCommand.run(new String[] {"--redis", "localhost"}, out, errStream))
        .isEqualTo(2);
    assertThat(CompareCommand.run(new String[] {"--redis", "h:70000"}, out, errStream))
        .isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("unknown argument --bogus")
        .contains("--url needs a value")
        .contains("--redis needs HOST:PORT with a port from 1 to 65535, was localhost")
        .contains("usage: java -jar fencing-benchmark.jar compare");
  }

  @Test
  void theProtectedStateIsTheAccountTable() throws Exception {
    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT count(*) FROM compare_account WHERE resource LIKE 'compare-"
                    + settings.runId()
                    + "-%'")) {
      rs.next();
      // two races per row run: the founding order, and the zombie writing first
      assertThat(rs.getLong(1))
          .isEqualTo(2 * rows.stream().filter(r -> r.measurement() != null).count());
    }
  }
}
