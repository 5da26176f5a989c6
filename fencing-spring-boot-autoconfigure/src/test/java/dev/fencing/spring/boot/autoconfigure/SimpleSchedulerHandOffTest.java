package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingExceptions;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.spring.boot.WithLease;
import dev.fencing.spring.boot.autoconfigure.FencingSchedulerPostProcessor.FencedSchedulerBuilder;
import dev.fencing.spring.boot.autoconfigure.ScheduledRuns.Run;
import dev.fencing.testing.TestDatabaseExtension;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.task.SimpleAsyncTaskSchedulerBuilder;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.concurrent.SimpleAsyncTaskScheduler;

/**
 * Boot's other scheduler, the {@code SimpleAsyncTaskScheduler} it makes with {@code
 * spring.threads.virtual.enabled=true} (Java 21; here built by the same {@code
 * SimpleAsyncTaskSchedulerBuilder} bean, so on platform threads): it applies its {@code
 * TaskDecorator} when a run fires, on its trigger thread, not when the task is scheduled, and not
 * at all to {@code scheduleWithFixedDelay} runs. Before, a task scheduled inside a {@code
 * WithLease} method therefore ran with nothing bound and wrote unchecked, a zombie's included.
 */
class SimpleSchedulerHandOffTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final String RESOURCE = "simple-scheduled";
  private static final String TABLE = "simple_scheduled_entry";
  private static final Duration PERIOD = Duration.ofMillis(20);

  private static ApplicationContextRunner runner;

  @BeforeAll
  static void application() throws SQLException {
    runner =
        ScheduledRuns.schedulingApplication(db, TABLE)
            .withUserConfiguration(SimpleSchedulingApplication.class);
  }

  @Test
  void aTaskScheduledByAWithLeaseMethodCarriesItsToken() {
    runner.run(
        context -> {
          assertThat(context).hasNotFailed();
          assertThat(context.getBean(SimpleAsyncTaskScheduler.class)).isNotNull();
          ScheduledRuns runs = new ScheduledRuns();
          JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
          Runnable write = runs.writer(jdbc, TABLE, RESOURCE, "carried");
          CountDownLatch ran = new CountDownLatch(1);
          FencingToken bound =
              context
                  .getBean(LeasedScheduler.class)
                  .scheduleAndWait(
                      () -> {
                        write.run();
                        ran.countDown();
                      },
                      ran);
          Run run = runs.next();
          assertThat(run.refused()).as("what the task's write threw").isNull();
          assertThat(run.seen()).as("the token bound in the task").contains(bound);
          assertThat(maxSeen(jdbc)).as("the write was checked with it").isEqualTo(bound.value());
        });
  }

  /**
   * The bean is the scheduler Boot's builder configured, down to its {@code final} getters: a class
   * proxy could not route those to its target and read its own unset fields.
   */
  @Test
  void theSchedulerKeepsWhatTheBuilderConfigured() {
    runner
        .withPropertyValues(
            "spring.task.scheduling.simple.concurrency-limit=3",
            "spring.task.scheduling.thread-name-prefix=fenced-scheduling-")
        .run(
            context -> {
              SimpleAsyncTaskScheduler scheduler = context.getBean(SimpleAsyncTaskScheduler.class);
              assertThat(scheduler.getThreadNamePrefix()).isEqualTo("fenced-scheduling-");
              assertThat(scheduler.isThrottleActive()).as("isThrottleActive").isTrue();
              assertThat(scheduler.getConcurrencyLimit()).as("getConcurrencyLimit").isEqualTo(3);
            });
  }

  /** The fenced builder keeps Boot's configuration only if it overrides all Boot's builder does. */
  @Test
  void theFencedBuilderOverridesEveryPublicMethodOfBoots() {
    for (Method method : SimpleAsyncTaskSchedulerBuilder.class.getDeclaredMethods()) {
      if (Modifier.isPublic(method.getModifiers()) && !Modifier.isStatic(method.getModifiers())) {
        assertThat(FencedSchedulerBuilder.class)
            .as(method.toString())
            .satisfies(
                builder -> builder.getDeclaredMethod(method.getName(), method.getParameterTypes()));
      }
    }
  }

  /** Every way to schedule a repeating task: a zombie's runs are all refused, none written. */
  @Test
  void repeatingTasksOfASupersededTokenAreRefusedAtEveryRun() {
    runner.run(
        context -> {
          TaskScheduler scheduler = context.getBean(TaskScheduler.class);
          JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
          ScheduledRuns rate = new ScheduledRuns();
          ScheduledRuns delay = new ScheduledRuns();
          ScheduledRuns later = new ScheduledRuns();
          List<ScheduledFuture<?>> tasks = new java.util.ArrayList<>();
          List<Run> seen = new java.util.ArrayList<>();
          FencingToken stale;
          try (Superseded zombie = Superseded.take(context.getBean(LeaseClient.class), RESOURCE)) {
            stale = zombie.stale();
            assertThat(
                    zombie.attempt(
                        () -> {
                          tasks.add(
                              scheduler.scheduleAtFixedRate(
                                  rate.writer(jdbc, TABLE, RESOURCE, "zombie"), PERIOD));
                          tasks.add(
                              scheduler.scheduleWithFixedDelay(
                                  delay.writer(jdbc, TABLE, RESOURCE, "zombie"), PERIOD));
                          tasks.add(
                              scheduler.schedule(
                                  later.writer(jdbc, TABLE, RESOURCE, "zombie"),
                                  Instant.now().plusMillis(50)));
                        }))
                .isNull();
            seen.addAll(rate.next(2));
            seen.addAll(delay.next(2));
            seen.addAll(later.next(1));
            tasks.forEach(task -> task.cancel(false));
          }
          for (Run run : seen) {
            assertThat(run.seen()).as("the token bound in the task").contains(stale);
            assertThat(FencingExceptions.find(run.refused()))
                .as("what the zombie's write threw: " + run.refused())
                .containsInstanceOf(StaleFencingTokenException.class);
          }
          assertThat(
                  jdbc.queryForObject(
                      "SELECT count(*) FROM " + TABLE + " WHERE text = 'zombie'", Long.class))
              .isZero();
        });
  }

  private static long maxSeen(JdbcTemplate jdbc) {
    return jdbc.queryForObject("SELECT max_seen FROM fencing.status(?)", Long.class, RESOURCE);
  }

  static class LeasedScheduler {
    private final TaskScheduler scheduler;

    LeasedScheduler(TaskScheduler scheduler) {
      this.scheduler = scheduler;
    }

    /**
     * Schedules {@code task} now and waits until it counted {@code ran} down, holding the lease.
     * Not on the {@code ScheduledFuture}: this scheduler completes it when the run is handed to its
     * own thread, before the task ran.
     */
    @WithLease(RESOURCE)
    public FencingToken scheduleAndWait(Runnable task, CountDownLatch ran) {
      scheduler.schedule(task, Instant.now());
      SchedulerHandOffTest.await(ran);
      return Fencing.current().token(RESOURCE).orElseThrow();
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableScheduling
  static class SimpleSchedulingApplication {
    /** What Boot's {@code taskScheduler} is with virtual threads enabled. */
    @Bean
    SimpleAsyncTaskScheduler taskScheduler(SimpleAsyncTaskSchedulerBuilder builder) {
      return builder.build();
    }

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
