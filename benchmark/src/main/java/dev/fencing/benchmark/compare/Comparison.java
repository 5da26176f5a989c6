package dev.fencing.benchmark.compare;

import dev.fencing.benchmark.compare.Approach.Spec;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.exceptions.JedisException;

/** Plays the {@link Scenario} against every row of the founding document's table. */
final class Comparison {

  /** Opens an approach, or says why it cannot be played here. */
  @FunctionalInterface
  interface Opener {
    Approach open() throws Exception;
  }

  /** A row to play. */
  record Candidate(Spec spec, Opener opener) {}

  /** Thrown by an {@link Opener} when its row cannot be played; the message says why. */
  static final class NotRun extends Exception {
    private static final long serialVersionUID = 1L;

    NotRun(String why) {
      super(why);
    }
  }

  /**
   * One row of the measured table.
   *
   * @param measurement what the scenario observed in the founding order; null if the row was not
   *     run
   * @param early what it observed when client 1 wrote before client 2's first write; null if not
   *     run
   * @param notRun why the row was not run; empty if it was
   */
  record Row(
      Spec spec, @Nullable Measurement measurement, @Nullable Measurement early, String notRun) {
    /** Whether the row was run and came out as the founding document says. */
    boolean agreesWithDocument() {
      Measurement m = measurement;
      return m != null
          && m.monotonic() == spec.claimsMonotonic()
          && m.staleWriteBlocked() == spec.claimsBlocking()
          && m.corrupted() != spec.claimsBlocking();
    }
  }

  /**
   * Where and how to play.
   *
   * @param ttl the lease / TTL of every lock
   * @param redisHost the Redis of row 2
   * @param runId makes this run's resource names and Redis keys unique
   */
  record Settings(Duration ttl, String redisHost, int redisPort, String runId) {
    static Settings defaults() {
      return new Settings(
          Duration.ofSeconds(1),
          "127.0.0.1",
          6379,
          String.format(Locale.ROOT, "%08x", ThreadLocalRandom.current().nextInt()));
    }
  }

  private final DataSource dataSource;
  private final Settings settings;

  /**
   * @param dataSource a plain DataSource on a database where the fence's migrations were applied
   */
  Comparison(DataSource dataSource, Settings settings) {
    this.dataSource = dataSource;
    this.settings = settings;
  }

  /**
   * The founding document's rows, in its order; then the ZooKeeper and etcd rows again without the
   * optional {@code fence(token)} after acquiring, to show what it changes.
   */
  List<Candidate> candidates() {
    Duration ttl = settings.ttl();
    return List.of(
        new Candidate(TrustingLease.SPEC, () -> new TrustingLease(dataSource, ttl)),
        new Candidate(RedisLock.SPEC, this::openRedis),
        new Candidate(ZooKeeperLock.SPEC, () -> openZooKeeper(true)),
        new Candidate(EtcdLock.SPEC, () -> openEtcd(true)),
        new Candidate(PostgresLease.SPEC, () -> new PostgresLease(dataSource, ttl)),
        new Candidate(ZooKeeperLock.WITHOUT_FENCE, () -> openZooKeeper(false)),
        new Candidate(EtcdLock.WITHOUT_FENCE, () -> openEtcd(false)));
  }

  /** An in-process ZooKeeper (tick 50 ms, so that sessions as short as the TTL are allowed). */
  private Approach openZooKeeper(boolean fenceOnAcquire) throws Exception {
    TestingServer server =
        new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 50, -1), true);
    try {
      return new ZooKeeperLock(
          server.getConnectString(),
          "/fencing-compare/" + settings.runId(),
          dataSource,
          settings.ttl(),
          fenceOnAcquire,
          server);
    } catch (Exception | Error e) {
      server.close();
      throw e;
    }
  }

  /** An etcd started for this run from the {@code etcd} on the PATH. */
  private Approach openEtcd(boolean fenceOnAcquire) throws Exception {
    Path executable =
        EtcdProcess.findExecutable()
            .orElseThrow(
                () -> new NotRun("no etcd on the PATH (Debian: apt-get install etcd-server)"));
    EtcdProcess etcd = EtcdProcess.start(executable);
    try {
      return new EtcdLock(
          etcd.endpoint(),
          "fencing-compare/" + settings.runId() + "/",
          dataSource,
          settings.ttl(),
          fenceOnAcquire,
          etcd);
    } catch (Exception | Error e) {
      etcd.close();
      throw e;
    }
  }

  private Approach openRedis() throws NotRun {
    try {
      return new RedisLock(
          settings.redisHost(),
          settings.redisPort(),
          "fencing-compare:" + settings.runId() + ":",
          dataSource,
          settings.ttl());
    } catch (JedisException e) {
      throw new NotRun(
          "Redis unreachable at "
              + settings.redisHost()
              + ":"
              + settings.redisPort()
              + " ("
              + e.getMessage()
              + ")");
    }
  }

  /** Plays every candidate in turn; a row that cannot be opened is reported as not run. */
  List<Row> run() throws Exception {
    Scenario scenario = new Scenario(dataSource);
    List<Row> rows = new ArrayList<>();
    int index = 0;
    for (Candidate candidate : candidates()) {
      index++;
      String resource = "compare-" + settings.runId() + "-" + index;
      Approach approach;
      try {
        approach = candidate.opener().open();
      } catch (NotRun e) {
        rows.add(new Row(candidate.spec(), null, null, String.valueOf(e.getMessage())));
        continue;
      }
      try (Approach open = approach) {
        Measurement founding =
            scenario.play(open, resource, settings.ttl(), Scenario.Order.AFTER_NEW_HOLDER_WROTE);
        Measurement early =
            scenario.play(
                open, resource + "-early", settings.ttl(), Scenario.Order.BEFORE_NEW_HOLDER_WRITES);
        rows.add(new Row(candidate.spec(), founding, early, ""));
      }
    }
    return rows;
  }
}
