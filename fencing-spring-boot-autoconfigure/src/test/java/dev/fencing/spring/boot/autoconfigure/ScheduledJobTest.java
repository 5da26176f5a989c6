package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.spring.boot.LeaseNotAcquiredException;
import dev.fencing.spring.boot.WithLease;
import dev.fencing.spring.boot.autoconfigure.ScheduledRuns.Run;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.task.ThreadPoolTaskSchedulerCustomizer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.task.TaskDecorator;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * Jobs the scheduler runs on its own ({@code @Scheduled}): one that is itself {@code @WithLease}
 * (the "leader job") takes the lease, writes fenced and releases it at every run, and fails with
 * {@link LeaseNotAcquiredException} while another instance holds it; a {@code @SchedulerLock} job
 * carries its ShedLock lock's token, and is skipped while another instance holds the lock. Neither
 * leaves anything bound on the scheduler's thread.
 */
class ScheduledJobTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final String LEADER = "leader-job";
  private static final String SHED = "shed-job";
  private static final String TABLE = "job_entry";

  private static ApplicationContextRunner runner;

  @BeforeAll
  static void application() throws SQLException {
    runner =
        ScheduledRuns.schedulingApplication(db, TABLE, FencingShedLockAutoConfiguration.class)
            .withPropertyValues("spring.task.scheduling.pool.size=1")
            .withUserConfiguration(Observed.class);
  }

  @Test
  void aScheduledWithLeaseJobTakesTheLeaseWritesFencedAndReleasesItAtEachRun() {
    runner
        .withUserConfiguration(LeaderApplication.class)
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
              ScheduledRuns runs = context.getBean(LeaderJob.class).runs();
              List<Run> ran = runs.next(3);
              for (int i = 0; i < ran.size(); i++) {
                assertThat(ran.get(i).seen()).as("run %d's token", i).isPresent();
                if (i > 0) {
                  assertThat(ran.get(i).seen().orElseThrow().value())
                      .as("a new lease at each run")
                      .isGreaterThan(ran.get(i - 1).seen().orElseThrow().value());
                }
              }
              assertThat(count(jdbc, "leader")).isGreaterThanOrEqualTo(3);
              assertThat(maxSeen(jdbc, LEADER))
                  .isGreaterThanOrEqualTo(ran.get(2).seen().orElseThrow().value());

              Observed observed = context.getBean(Observed.class);
              try (LeaseClient other = otherInstance();
                  Lease held =
                      other.acquire(LEADER, Duration.ofMinutes(5), Duration.ofMinutes(1))) {
                runs.drain(); // runs that wrote before the release this acquisition waited for
                long before = count(jdbc, "leader");
                observed.errors.clear();
                for (int i = 0; i < 2; i++) {
                  Throwable error = observed.errors.poll(60, TimeUnit.SECONDS);
                  assertThat(error)
                      .as("run %d while another instance holds the lease", i)
                      .isInstanceOf(LeaseNotAcquiredException.class)
                      .hasMessageContaining(LEADER);
                }
                assertThat(runs.drain()).as("runs that reached the method's body").isEmpty();
                assertThat(count(jdbc, "leader")).isEqualTo(before);
              }
              assertThat(runs.next().seen())
                  .as("a run after the other instance released")
                  .isPresent();
              SchedulerHandOffTest.assertNothingBoundAfter(
                  context.getBean(ThreadPoolTaskScheduler.class), ran.get(0).thread());
            });
  }

  @Test
  void aScheduledShedLockJobCarriesItsLocksTokenAndIsSkippedWhileAnotherInstanceHoldsIt() {
    runner
        .withUserConfiguration(ShedLockApplication.class)
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
              ScheduledRuns runs = context.getBean(ShedLockJob.class).runs();
              List<Run> ran = runs.next(2);
              for (Run run : ran) {
                assertThat(run.seen()).as("the lock's token").isPresent();
              }
              assertThat(ran.get(1).seen().orElseThrow().value())
                  .isGreaterThan(ran.get(0).seen().orElseThrow().value());
              assertThat(maxSeen(jdbc, SHED))
                  .isGreaterThanOrEqualTo(ran.get(1).seen().orElseThrow().value());

              Observed observed = context.getBean(Observed.class);
              try (LeaseClient other = otherInstance();
                  Lease held = other.acquire(SHED, Duration.ofMinutes(5), Duration.ofMinutes(1))) {
                runs.drain();
                long before = count(jdbc, "shed");
                observed.finished.drainPermits();
                assertThat(observed.finished.tryAcquire(3, 60, TimeUnit.SECONDS))
                    .as("scheduler runs while another instance holds the lock")
                    .isTrue();
                assertThat(runs.drain()).as("runs that reached the method's body").isEmpty();
                assertThat(observed.errors).isEmpty();
                assertThat(count(jdbc, "shed")).isEqualTo(before);
              }
              assertThat(runs.next().seen())
                  .as("a run after the other instance released")
                  .isPresent();
              SchedulerHandOffTest.assertNothingBoundAfter(
                  context.getBean(ThreadPoolTaskScheduler.class), ran.get(0).thread());
            });
  }

  private static LeaseClient otherInstance() {
    return LeaseClient.builder(db.database().dataSource()).holder("other-instance").build();
  }

  private static long count(JdbcTemplate jdbc, String text) {
    return jdbc.queryForObject(
        "SELECT count(*) FROM " + TABLE + " WHERE text = ?", Long.class, text);
  }

  private static long maxSeen(JdbcTemplate jdbc, String resource) {
    return jdbc.queryForObject("SELECT max_seen FROM fencing.status(?)", Long.class, resource);
  }

  /** What the scheduler's runs threw (its error handler), and how many runs finished. */
  @Configuration(proxyBeanMethods = false)
  static class Observed {
    final BlockingQueue<Throwable> errors = new LinkedBlockingQueue<>();
    final Semaphore finished = new Semaphore(0);

    @Bean
    ThreadPoolTaskSchedulerCustomizer recordingErrorHandler() {
      return scheduler -> scheduler.setErrorHandler(errors::add);
    }

    @Bean
    TaskDecorator countingTaskDecorator() {
      return task ->
          () -> {
            try {
              task.run();
            } finally {
              finished.release();
            }
          };
    }

    @Bean
    JdbcTemplate jdbcTemplate(DataSource dataSource) {
      return new JdbcTemplate(dataSource);
    }
  }

  /** The "leader job": only the instance holding the lease runs it. */
  static class LeaderJob {
    private final ScheduledRuns runs = new ScheduledRuns();
    private final JdbcTemplate jdbc;

    LeaderJob(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    /** The runs (a method: the bean is a proxy). */
    public ScheduledRuns runs() {
      return runs;
    }

    @Scheduled(fixedDelay = 20)
    @WithLease(LEADER)
    public void lead() {
      jdbc.update("INSERT INTO " + TABLE + " (text) VALUES ('leader')");
      runs.wrote(Fencing.current().token(LEADER));
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableScheduling
  static class LeaderApplication {
    @Bean
    LeaderJob leaderJob(JdbcTemplate jdbc) {
      return new LeaderJob(jdbc);
    }
  }

  /** A ShedLock job: the lock is a fencing lease of the resource named as the lock. */
  static class ShedLockJob {
    private final ScheduledRuns runs = new ScheduledRuns();
    private final JdbcTemplate jdbc;

    ShedLockJob(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    /** The runs (a method: the bean is a proxy). */
    public ScheduledRuns runs() {
      return runs;
    }

    @Scheduled(fixedDelay = 20)
    @SchedulerLock(name = SHED, lockAtMostFor = "PT1M")
    public void run() {
      FencingToken token = Fencing.current().token(SHED).orElse(null);
      jdbc.update("INSERT INTO " + TABLE + " (text) VALUES ('shed')");
      runs.wrote(java.util.Optional.ofNullable(token));
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableScheduling
  @EnableSchedulerLock(defaultLockAtMostFor = "PT1M")
  static class ShedLockApplication {
    @Bean
    ShedLockJob shedLockJob(JdbcTemplate jdbc) {
      return new ShedLockJob(jdbc);
    }
  }
}
