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
 * The interleaving: every round gives each contender one turn of the same length, in an order
 * rotated by one per round, so that slow drifts of the machine (other processes, checkpoints,
 * autovacuum, table growth) fall on all contenders alike.
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
   * @param before run before each turn
   * @param after run after each turn
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

  /** What a contender's turns produced. */
  static final class Result {
    final List<Double> samples = new ArrayList<>();
    long transactions;
    long retryable;
    double measuredSeconds;
  }

  private final Plan plan;
  private final ExecutorService pool;

  Rounds(Plan plan, ExecutorService pool) {
    this.plan = plan;
    this.pool = pool;
  }

  Map<Contender, Result> run(List<Contender> contenders) throws Exception {
    Map<Contender, Result> results = new LinkedHashMap<>();
    contenders.forEach(c -> results.put(c, new Result()));
    if (!plan.warmup().isZero()) {
      for (Contender c :
          contenders) { // JIT, caches, prepared statements: one short unrecorded turn
        turn(c, Duration.ZERO, plan.warmup().multipliedBy(2), new Result());
      }
    }
    List<Contender> order = new ArrayList<>(contenders);
    for (int round = 0; round < plan.rounds(); round++) {
      for (Contender c : order) {
        Result r = results.get(c);
        r.samples.add(turn(c, plan.warmup(), plan.measure(), r));
      }
      Collections.rotate(order, -1);
    }
    return results;
  }

  /** One turn: warm-up, then {@code measure} counted; returns transactions per second. */
  private double turn(Contender c, Duration warmup, Duration measure, Result result)
      throws Exception {
    if (c.before() != null) {
      c.before().run();
    }
    try {
      CountDownLatch ready = new CountDownLatch(plan.clients());
      CountDownLatch go = new CountDownLatch(1);
      AtomicReference<long[]> window = new AtomicReference<>();
      AtomicLong counted = new AtomicLong();
      AtomicLong lastDone = new AtomicLong();
      List<Future<Long>> clients = new ArrayList<>();
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
                    // a turn counts at least one transaction, however late the threads woke up
                    if (began >= end && counted.get() > 0) {
                      break;
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
      return counted.get() / seconds;
    } finally {
      if (c.after() != null) {
        c.after().run();
      }
    }
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
