package dev.fencing.benchmark.throughput;

import dev.fencing.jdbc.FencingExceptions;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * The interleaving. Each comparison ({@link Pair}: a variant and its baseline) is measured in turns
 * of four slices next to each other, baseline, variant, variant, baseline (ABBA; BAAB in odd
 * rounds), so that the load of the machine at that moment falls on both alike, and a linear drift
 * within the turn cancels out; its ratio of a round comes from that turn alone. Every round gives
 * each pair one turn, in an order rotated by one per round; the median over the rounds is the
 * reported ratio.
 */
final class Rounds {
  /** One transaction of a client; throws what the database threw. */
  interface Client {
    void transaction(ThreadLocalRandom random) throws Exception;
  }

  /** Work before or after a contender's turn (not measured), e.g. protecting the tables. */
  interface Hook {
    void run() throws SQLException;
  }

  /**
   * A variant to measure.
   *
   * @param id its stable id in the report, {@code <section>/<slug>}
   * @param name its name in the report
   * @param baseline the name of its baseline (in the same section), or null
   * @param target the ratio the issue asks for, or null
   * @param client its transaction
   * @param before run before each run of consecutive slices of it
   * @param after run after each run of consecutive slices of it
   */
  record Contender(
      String id,
      String name,
      @Nullable String baseline,
      @Nullable Double target,
      Client client,
      @Nullable Hook before,
      @Nullable Hook after) {

    /** The same contender with {@code before} and {@code after} run around each of its turns. */
    Contender around(Hook before, Hook after) {
      return new Contender(id, name, baseline, target, client, before, after);
    }

    /** The id of the section it is reported in. */
    String section() {
      return id.substring(0, id.indexOf('/'));
    }
  }

  /**
   * A comparison measured in adjacent slices.
   *
   * @param id the id its ratio is reported under: the variant's own, or one of its own when the
   *     variant is compared with a second baseline (the check against the SQL-level floor)
   * @param name the name it is reported under
   * @param variant the contender measured
   * @param baseline the contender it is compared with
   * @param target the ratio the issue asks for, or null
   */
  record Pair(
      String id, String name, Contender variant, Contender baseline, @Nullable Double target) {

    /** A contender against its own baseline, under its own id, name and target. */
    static Pair of(Contender variant, Contender baseline) {
      return new Pair(variant.id(), variant.name(), variant, baseline, variant.target());
    }
  }

  /**
   * One turn of a pair: its slices in the order they run.
   *
   * @param pair the comparison
   * @param slices the contenders of its slices, baseline and variant twice each
   */
  record Turn(Pair pair, List<Contender> slices) {}

  /** What a contender's slices produced over the whole run (all its pairs). */
  static final class Result {
    /** Its throughput per round, over all its slices of that round. */
    final List<Double> samples = new ArrayList<>();

    long transactions;
    long retryable;
    double measuredSeconds;
  }

  /** What a pair's turns produced: one value per round each, from the same turn. */
  static final class PairResult {
    /** The variant's throughput in its two slices of each round's turn. */
    final List<Double> variant = new ArrayList<>();

    /** The baseline's throughput in its two slices of the same turn. */
    final List<Double> baseline = new ArrayList<>();
  }

  /** The contenders' and the pairs' results. */
  record Outcome(Map<Contender, Result> contenders, Map<Pair, PairResult> pairs) {}

  /** Transactions counted in one or more slices, and the time they took. */
  private static final class Count {
    long transactions;
    double seconds;

    void add(long transactions, double seconds) {
      this.transactions += transactions;
      this.seconds += seconds;
    }

    double rate() {
      return transactions / seconds;
    }
  }

  /**
   * How long past a slice's end its clients keep trying when none of its transactions has succeeded
   * yet (at least ten times the measured time): then the run stops, naming the contender.
   */
  static final Duration GIVE_UP_AFTER = Duration.ofSeconds(10);

  private final Plan plan;
  private final ExecutorService pool;

  Rounds(Plan plan, ExecutorService pool) {
    this.plan = plan;
    this.pool = pool;
  }

  /**
   * The turns of round {@code round}: every pair once, in the order of {@code pairs} rotated by
   * {@code round}, each as baseline, variant, variant, baseline (variant, baseline, baseline,
   * variant in odd rounds).
   */
  static List<Turn> schedule(List<Pair> pairs, int round) {
    List<Pair> order = new ArrayList<>(pairs);
    Collections.rotate(order, -round);
    List<Turn> turns = new ArrayList<>();
    for (Pair p : order) {
      Contender outer = round % 2 == 0 ? p.baseline() : p.variant();
      Contender inner = round % 2 == 0 ? p.variant() : p.baseline();
      turns.add(new Turn(p, List.of(outer, inner, inner, outer)));
    }
    return turns;
  }

  /**
   * Runs every pair's turns, round by round, after one unrecorded warm-up turn of each contender.
   *
   * @throws IllegalArgumentException if a contender takes part in no pair, or a pair names one that
   *     is not among {@code contenders}
   */
  Outcome run(List<Contender> contenders, List<Pair> pairs) throws Exception {
    Map<Contender, Result> results = new LinkedHashMap<>();
    contenders.forEach(c -> results.put(c, new Result()));
    Map<Pair, PairResult> paired = new LinkedHashMap<>();
    for (Pair p : pairs) {
      if (!results.containsKey(p.variant()) || !results.containsKey(p.baseline())) {
        throw new IllegalArgumentException(p.id() + ": compares a contender not in the run");
      }
      paired.put(p, new PairResult());
    }
    for (Contender c : contenders) {
      if (pairs.stream().noneMatch(p -> p.variant() == c || p.baseline() == c)) {
        throw new IllegalArgumentException(c.id() + ": in no pair, so never measured");
      }
    }
    if (!plan.warmup().isZero()) {
      for (Contender c :
          contenders) { // JIT, caches, prepared statements: one short unrecorded turn
        run(c, List.of(Duration.ZERO), plan.warmup().multipliedBy(2), new Result());
      }
    }
    for (int round = 0; round < plan.rounds(); round++) {
      Map<Contender, Count> ofRound = new LinkedHashMap<>();
      for (Turn turn : schedule(pairs, round)) {
        Map<Contender, Count> ofTurn = new LinkedHashMap<>();
        List<Contender> slices = turn.slices();
        for (int i = 0; i < slices.size(); ) {
          Contender c = slices.get(i);
          int same = i;
          while (same < slices.size() && slices.get(same) == c) {
            same++;
          }
          // consecutive slices of one contender share its hooks: protect once, then both slices
          List<Duration> warmups = Collections.nCopies(same - i, plan.warmup());
          for (long[] counted : run(c, warmups, plan.measure(), results.get(c))) {
            double seconds = counted[1] / 1e9;
            ofTurn.computeIfAbsent(c, k -> new Count()).add(counted[0], seconds);
            ofRound.computeIfAbsent(c, k -> new Count()).add(counted[0], seconds);
          }
          i = same;
        }
        PairResult r = paired.get(turn.pair());
        r.variant.add(ofTurn.get(turn.pair().variant()).rate());
        r.baseline.add(ofTurn.get(turn.pair().baseline()).rate());
      }
      ofRound.forEach((c, count) -> results.get(c).samples.add(count.rate()));
    }
    return new Outcome(results, paired);
  }

  /**
   * Slices of one contender back to back, between its {@code before} and {@code after} hooks: each
   * its warm-up, then {@code measure} counted. Returns each slice's transactions and nanoseconds.
   */
  private List<long[]> run(Contender c, List<Duration> warmups, Duration measure, Result result)
      throws Exception {
    if (c.before() != null) {
      c.before().run();
    }
    try {
      List<long[]> slices = new ArrayList<>();
      for (Duration warmup : warmups) {
        slices.add(slice(c, warmup, measure, result));
      }
      return slices;
    } finally {
      if (c.after() != null) {
        c.after().run();
      }
    }
  }

  /**
   * One slice: warm-up, then {@code measure} counted; returns the transactions that began in the
   * measured window and the nanoseconds from its start to the last one's end.
   */
  private long[] slice(Contender c, Duration warmup, Duration measure, Result result)
      throws Exception {
    CountDownLatch ready = new CountDownLatch(plan.clients());
    CountDownLatch go = new CountDownLatch(1);
    AtomicReference<long[]> window = new AtomicReference<>();
    AtomicLong counted = new AtomicLong();
    AtomicLong lastDone = new AtomicLong();
    List<Future<Long>> clients = new ArrayList<>();
    long giveUp = Math.max(GIVE_UP_AFTER.toNanos(), measure.toNanos() * 10);
    for (int i = 0; i < plan.clients(); i++) {
      clients.add(
          pool.submit(
              () -> {
                ready.countDown();
                go.await();
                long start = window.get()[0];
                long end = window.get()[1];
                long retryable = 0;
                ThreadLocalRandom random = ThreadLocalRandom.current();
                while (true) {
                  long began = System.nanoTime();
                  // a slice counts at least one transaction, however late the threads woke up
                  if (began >= end && counted.get() > 0) {
                    break;
                  }
                  // but not for ever: a contender whose every transaction is retried (or fails
                  // retryably) would spin here, the run never ending and never reporting it
                  if (began - end > giveUp && counted.get() == 0) {
                    throw new IllegalStateException(
                        "no transaction succeeded in the slice and "
                            + Duration.ofNanos(giveUp).toMillis()
                            + " ms past its end ("
                            + retryable
                            + " retryable failures on this client)");
                  }
                  try {
                    c.client().transaction(random);
                  } catch (Exception e) {
                    if (!isRetryable(e)) {
                      throw e;
                    }
                    retryable++;
                    continue;
                  }
                  if (began >= start) {
                    long done = System.nanoTime();
                    counted.incrementAndGet();
                    lastDone.accumulateAndGet(done, Math::max);
                  }
                }
                return retryable;
              }));
    }
    ready.await();
    long start = System.nanoTime() + warmup.toNanos();
    window.set(new long[] {start, start + measure.toNanos()});
    go.countDown();
    for (Future<Long> f : clients) {
      try {
        result.retryable += f.get();
      } catch (ExecutionException e) {
        throw new IllegalStateException(
            c.id() + " (" + c.name() + "): a client failed: " + e.getCause(), e.getCause());
      }
    }
    // transactions that began in the window, over the time from its start to the last one's end
    double seconds = (lastDone.get() - start) / 1e9;
    result.transactions += counted.get();
    result.measuredSeconds += seconds;
    return new long[] {counted.get(), lastDone.get() - start};
  }

  /**
   * Serialization failures, deadlocks and optimistic-lock conflicts are part of the workload
   * (counted, not fatal); a fencing refusal or anything else means the benchmark is broken.
   */
  static boolean isRetryable(Throwable e) {
    if (FencingExceptions.find(e).isPresent()) {
      return false;
    }
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException sql
          && sql.getSQLState() != null
          && sql.getSQLState().startsWith("40")) {
        return true;
      }
      String name = t.getClass().getName();
      if (name.endsWith("OptimisticLockException")
          || name.endsWith("StaleObjectStateException")
          || name.endsWith("StaleStateException")) {
        return true;
      }
    }
    return false;
  }
}
