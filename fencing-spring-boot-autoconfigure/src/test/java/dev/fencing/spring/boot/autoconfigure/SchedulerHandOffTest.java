package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingExceptions;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.jdbc.LeaseLostException;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.spring.boot.WithLease;
import dev.fencing.spring.boot.autoconfigure.ScheduledRuns.Run;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * Work a {@code @WithLease} method (or any caller with tokens bound) hands to Boot's task scheduler
 * ({@code TaskScheduler.schedule}, {@code scheduleAtFixedRate}; the {@code ThreadPoolTaskScheduler}
 * Boot makes under {@code @EnableScheduling}): the starter's {@code TaskDecorator} is applied by
 * Boot's scheduler builder when the task is scheduled, so every run of it carries the scheduling
 * thread's tokens with their leases, and the scheduler's thread is restored after each run.
 */
class SchedulerHandOffTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final String RESOURCE = "scheduled";
  private static final String TABLE = "scheduled_entry";
  private static final Duration PERIOD = Duration.ofMillis(20);

  private static ApplicationContextRunner runner;

  @BeforeAll
  static void application() throws SQLException {
    runner =
        ScheduledRuns.schedulingApplication(db, TABLE)
            // one scheduler thread: every run, and the check after them, on the same thread
            .withPropertyValues("spring.task.scheduling.pool.size=1")
            .withUserConfiguration(SchedulingApplication.class);
  }

  @Test
  void aTaskScheduledByAWithLeaseMethodCarriesItsToken() {
    runner.run(
        context -> {
          assertThat(context).hasNotFailed();
          assertThat(context.getBean(TaskScheduler.class))
              .isInstanceOf(ThreadPoolTaskScheduler.class);
          ScheduledRuns runs = new ScheduledRuns();
          JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
          FencingToken bound =
              context
                  .getBean(LeasedScheduler.class)
                  .scheduleAndWait(runs.writer(jdbc, TABLE, RESOURCE, "carried"));
          Run run = runs.next();
          assertThat(run.refused()).as("what the task's write threw").isNull();
          assertThat(run.seen()).as("the token bound in the task").contains(bound);
          assertThat(count(jdbc, "carried")).isEqualTo(1);
          assertThat(maxSeen(jdbc)).as("the write was checked with it").isEqualTo(bound.value());
          assertNothingBoundAfter(context.getBean(ThreadPoolTaskScheduler.class), run.thread());
        });
  }

  /**
   * A task that runs after the {@code @WithLease} method returned carries a released lease: its
   * write is refused before anything is sent, and stays refused once another holder took the lease.
   */
  @Test
  void aTaskThatRunsAfterTheLeaseMethodReturnedIsRefusedBeforeSending() {
    runner.run(
        context -> {
          ScheduledRuns runs = new ScheduledRuns();
          JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
          CountDownLatch go = new CountDownLatch(1);
          Runnable write = runs.writer(jdbc, TABLE, RESOURCE, "late");
          FencingToken bound =
              context
                  .getBean(LeasedScheduler.class)
                  .scheduleAndReturn(
                      () -> {
                        await(go);
                        write.run();
                      });
          LeaseClient leases = context.getBean(LeaseClient.class);
          try (Lease newer = leases.tryAcquire(RESOURCE, Duration.ofSeconds(30)).orElseThrow()) {
            assertThat(newer.token().value()).isGreaterThan(bound.value());
            go.countDown();
            Run run = runs.next();
            assertThat(run.seen()).contains(bound);
            assertThat(FencingExceptions.find(run.refused()))
                .as("what the late task's write threw: " + run.refused())
                .containsInstanceOf(LeaseLostException.class);
          }
          assertThat(count(jdbc, "late")).isZero();
        });
  }

  /**
   * A repeating task scheduled inside a {@code @WithLease} method writes while the method holds the
   * lease; once it returned, every later run is refused before sending (the task keeps running
   * until cancelled, as the scheduler's error handling for repeating tasks does).
   */
  @Test
  void aRepeatingTaskWritesWhileTheLeaseIsHeldAndIsRefusedAfterItsRelease() {
    runner.run(
        context -> {
          ThreadPoolTaskScheduler scheduler = context.getBean(ThreadPoolTaskScheduler.class);
          ScheduledRuns runs = new ScheduledRuns();
          JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
          CountDownLatch whileHeld = new CountDownLatch(2);
          Runnable write = runs.writer(jdbc, TABLE, RESOURCE, "repeat");
          Repeating repeating =
              context
                  .getBean(LeasedScheduler.class)
                  .repeatWhileHeld(
                      () -> {
                        write.run();
                        whileHeld.countDown();
                      },
                      whileHeld);
          List<Run> seen = new ArrayList<>();
          while (seen.isEmpty() || seen.get(seen.size() - 1).refused() == null) {
            Run run = runs.next();
            assertThat(run.seen()).as("run %d's token", seen.size()).contains(repeating.bound());
            assertThat(seen).as("runs, none refused after the release").hasSizeLessThan(500);
            seen.add(run);
          }
          seen.addAll(runs.next(2)); // runs after the first refusal
          repeating.task().cancel(false);
          assertNothingBoundAfter(scheduler, seen.get(0).thread()); // the last run has ended
          seen.addAll(runs.drain());

          long wrote = seen.stream().filter(run -> run.refused() == null).count();
          assertThat(wrote).as("runs while the lease was held").isGreaterThanOrEqualTo(2);
          for (int i = 0; i < seen.size(); i++) {
            Run run = seen.get(i);
            assertThat(run.seen()).as("run %d's token", i).contains(repeating.bound());
            if (i >= wrote) {
              assertThat(FencingExceptions.find(run.refused()))
                  .as("run %d after the release threw: %s", i, run.refused())
                  .containsInstanceOf(LeaseLostException.class);
            } else {
              assertThat(run.refused()).as("run %d while held", i).isNull();
            }
          }
          assertThat(count(jdbc, "repeat")).isEqualTo(wrote);
          assertThat(maxSeen(jdbc)).isEqualTo(repeating.bound().value());
        });
  }

  /**
   * Repeating tasks scheduled by the current holder and by a zombie (its token superseded): every
   * run of the holder's writes, every run of the zombie's is refused by PostgreSQL.
   */
  @Test
  void aRepeatingTaskOfASupersededTokenIsRefusedAtEveryRunWhileTheHoldersWrites() {
    runner.run(
        context -> {
          ThreadPoolTaskScheduler scheduler = context.getBean(ThreadPoolTaskScheduler.class);
          JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
          ScheduledRuns holderRuns = new ScheduledRuns();
          ScheduledRuns zombieRuns = new ScheduledRuns();
          List<ScheduledFuture<?>> tasks = new ArrayList<>();
          List<Run> holder;
          List<Run> zombieSaw;
          FencingToken current;
          FencingToken stale;
          try (Superseded zombie = Superseded.take(context.getBean(LeaseClient.class), RESOURCE)) {
            current = zombie.newer().token();
            stale = zombie.stale();
            try (FencingScope scope = Fencing.bind(zombie.newer())) {
              tasks.add(
                  scheduler.scheduleAtFixedRate(
                      holderRuns.writer(jdbc, TABLE, RESOURCE, "holder"), PERIOD));
            }
            assertThat(
                    zombie.attempt(
                        () ->
                            tasks.add(
                                scheduler.scheduleAtFixedRate(
                                    zombieRuns.writer(jdbc, TABLE, RESOURCE, "zombie"), PERIOD))))
                .isNull();
            holder = new ArrayList<>(holderRuns.next(3));
            zombieSaw = new ArrayList<>(zombieRuns.next(3));
            tasks.forEach(task -> task.cancel(false));
            assertNothingBoundAfter(scheduler, holder.get(0).thread());
            holder.addAll(holderRuns.drain());
            zombieSaw.addAll(zombieRuns.drain());
          }
          for (Run run : holder) {
            assertThat(run.seen()).contains(current);
            assertThat(run.refused()).as("the holder's write").isNull();
          }
          for (Run run : zombieSaw) {
            assertThat(run.seen()).contains(stale);
            assertThat(FencingExceptions.find(run.refused()))
                .as("what the zombie's write threw: " + run.refused())
                .containsInstanceOf(StaleFencingTokenException.class);
          }
          assertThat(count(jdbc, "zombie")).as("the superseded token's writes").isZero();
          assertThat(count(jdbc, "holder")).isEqualTo(holder.size());
        });
  }

  /** A task that binds more and never closes its scope leaves nothing on the scheduler's thread. */
  @Test
  void nothingStaysBoundOnTheSchedulersThreadAfterATask() {
    runner.run(
        context -> {
          ThreadPoolTaskScheduler scheduler = context.getBean(ThreadPoolTaskScheduler.class);
          FencingToken token = FencingToken.of(RESOURCE, 7);
          String[] carrier = new String[1];
          try (FencingScope scope = Fencing.bind(token)) {
            scheduler
                .schedule(
                    () -> {
                      Fencing.bind(FencingToken.of("opened-in-task", 3));
                      assertThat(Fencing.current().token(RESOURCE)).contains(token);
                      carrier[0] = Thread.currentThread().getName();
                    },
                    Instant.now())
                .get(60, TimeUnit.SECONDS);
          }
          assertNothingBoundAfter(scheduler, carrier[0]);
        });
  }

  /** Runs a task with nothing bound on {@code scheduler}'s one thread: it sees nothing bound. */
  static void assertNothingBoundAfter(ThreadPoolTaskScheduler scheduler, String thread)
      throws Exception {
    String[] after = new String[2];
    scheduler
        .schedule(
            () -> {
              after[0] = Thread.currentThread().getName();
              after[1] = Fencing.current().toString();
            },
            Instant.now())
        .get(60, TimeUnit.SECONDS);
    assertThat(after[0]).as("the same scheduler thread").isEqualTo(thread);
    assertThat(after[1]).as("bound on it for the next task").isEqualTo("FencingContext[]");
  }

  private static long count(JdbcTemplate jdbc, String text) {
    return jdbc.queryForObject(
        "SELECT count(*) FROM " + TABLE + " WHERE text = ?", Long.class, text);
  }

  private static long maxSeen(JdbcTemplate jdbc) {
    return jdbc.queryForObject("SELECT max_seen FROM fencing.status(?)", Long.class, RESOURCE);
  }

  static void await(CountDownLatch latch) {
    try {
      if (!latch.await(60, TimeUnit.SECONDS)) {
        throw new IllegalStateException("never released");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** A repeating task, and the token the {@code @WithLease} method had bound. */
  record Repeating(FencingToken bound, ScheduledFuture<?> task) {}

  static class LeasedScheduler {
    private final TaskScheduler scheduler;

    LeasedScheduler(TaskScheduler scheduler) {
      this.scheduler = scheduler;
    }

    /** Schedules {@code task} now and waits for its run, holding the lease. */
    @WithLease(RESOURCE)
    public FencingToken scheduleAndWait(Runnable task) throws Exception {
      scheduler.schedule(task, Instant.now()).get(60, TimeUnit.SECONDS);
      return Fencing.current().token(RESOURCE).orElseThrow();
    }

    /** Schedules {@code task} now and returns at once, releasing the lease. */
    @WithLease(RESOURCE)
    public FencingToken scheduleAndReturn(Runnable task) {
      scheduler.schedule(task, Instant.now());
      return Fencing.current().token(RESOURCE).orElseThrow();
    }

    /** Repeats {@code task} at a fixed rate, returning (releasing the lease) once it ran enough. */
    @WithLease(RESOURCE)
    public Repeating repeatWhileHeld(Runnable task, CountDownLatch ranEnough) {
      ScheduledFuture<?> repeating = scheduler.scheduleAtFixedRate(task, PERIOD);
      await(ranEnough);
      return new Repeating(Fencing.current().token(RESOURCE).orElseThrow(), repeating);
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableScheduling
  static class SchedulingApplication {
    @Bean
    JdbcTemplate jdbcTemplate(DataSource dataSource) {
      return new JdbcTemplate(dataSource);
    }

    @Bean
    LeasedScheduler leasedScheduler(TaskScheduler scheduler) {
      return new LeasedScheduler(scheduler);
    }
  }
}
