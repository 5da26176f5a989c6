package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingExceptions;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.jdbc.LeaseLostException;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.spring.boot.WithLease;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.task.TaskDecorator;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;

/**
 * Work a {@code @WithLease} method (or any caller with tokens bound) hands to Boot's task executor
 * ({@code @Async}, {@code applicationTaskExecutor}): before, the task ran on a pool thread with
 * nothing bound, so its writes went unchecked, a superseded token's included. The starter's {@code
 * TaskDecorator} carries the submitting thread's tokens into the task and restores the pool thread
 * after it.
 */
class AsyncHandOffTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final String RESOURCE = "async";

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  DataSourceAutoConfiguration.class,
                  TaskExecutionAutoConfiguration.class,
                  FencingAutoConfiguration.class))
          .withPropertyValues(PerClassDatabase.properties(db.database()))
          // one pool thread: the task after another runs on the same thread
          .withPropertyValues(
              "spring.task.execution.pool.core-size=1", "spring.task.execution.pool.max-size=1")
          .withUserConfiguration(AsyncApplication.class);

  @BeforeAll
  static void table() throws SQLException {
    PerClassDatabase.execute(db.database(), "CREATE TABLE async_entry (text text NOT NULL)");
  }

  @Test
  void anAsyncTaskOfAWithLeaseMethodCarriesItsToken() {
    runner.run(
        context -> {
          assertThat(context).hasNotFailed();
          Handed handed = context.getBean(LeasedCaller.class).handOffAndWait("carried");
          assertThat(handed.seenInTask())
              .as("the token bound in the task")
              .contains(handed.bound());
          JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
          assertThat(count(jdbc, "carried")).isEqualTo(1);
          assertThat(
                  jdbc.queryForObject(
                      "SELECT max_seen FROM fencing.status(?)", Long.class, RESOURCE))
              .as("the task's write was checked with it")
              .isEqualTo(handed.bound().value());
        });
  }

  @Test
  void anAsyncTaskCarryingASupersededTokenIsRefusedByTheDatabase() {
    runner.run(
        context -> {
          AsyncWriter writer = context.getBean(AsyncWriter.class);
          try (Superseded zombie = Superseded.take(context.getBean(LeaseClient.class), RESOURCE)) {
            Throwable refused = zombie.attempt(() -> writer.write("zombie").join());
            assertThat(FencingExceptions.find(refused))
                .as("what the task's write threw: " + refused)
                .containsInstanceOf(StaleFencingTokenException.class);
          }
          assertThat(count(context.getBean(JdbcTemplate.class), "zombie"))
              .as("the superseded token's write")
              .isZero();
        });
  }

  /**
   * A task still running after the {@code @WithLease} method returned carries a released lease: its
   * write is refused (the lease is lost, nothing is sent), and stays refused once another holder
   * took the lease.
   */
  @Test
  void aTaskThatOutlivesTheLeaseIsRefused() {
    runner.run(
        context -> {
          CountDownLatch go = new CountDownLatch(1);
          Pending pending = context.getBean(LeasedCaller.class).handOffAndReturn("late", go);
          LeaseClient leases = context.getBean(LeaseClient.class);
          try (Lease newer = leases.tryAcquire(RESOURCE, Duration.ofSeconds(30)).orElseThrow()) {
            assertThat(newer.token().value()).isGreaterThan(pending.bound().value());
            go.countDown();
            Throwable refused = catchThrowable(() -> pending.task().get(60, TimeUnit.SECONDS));
            assertThat(FencingExceptions.find(refused))
                .as("what the late task's write threw: " + refused)
                .containsInstanceOf(LeaseLostException.class);
          }
          assertThat(count(context.getBean(JdbcTemplate.class), "late")).isZero();
        });
  }

  @Test
  void nothingStaysBoundOnThePooledThreadAfterATask() {
    runner.run(
        context -> {
          ThreadPoolTaskExecutor executor =
              context.getBean("applicationTaskExecutor", ThreadPoolTaskExecutor.class);
          FencingToken token = FencingToken.of(RESOURCE, 7);
          String carrier;
          try (FencingScope scope = Fencing.bind(token)) {
            carrier =
                executor
                    .submit(
                        () -> {
                          // a task that binds more and never closes its scope
                          Fencing.bind(FencingToken.of("opened-in-task", 3));
                          assertThat(Fencing.current().token(RESOURCE)).contains(token);
                          return Thread.currentThread().getName();
                        })
                    .get(60, TimeUnit.SECONDS);
          }
          String[] after = new String[2];
          executor
              .submit(
                  () -> {
                    after[0] = Thread.currentThread().getName();
                    after[1] = Fencing.current().toString();
                  })
              .get(60, TimeUnit.SECONDS);
          assertThat(after[0]).as("the same pooled thread").isEqualTo(carrier);
          assertThat(after[1]).as("bound on it for the next task").isEqualTo("FencingContext[]");
        });
  }

  /**
   * Boot composes every {@code TaskDecorator} bean; the application's own still applies, and is the
   * one a single {@code TaskDecorator} injection point gets.
   */
  @Test
  void anApplicationsOwnTaskDecoratorIsComposedWithTheStarters() {
    runner
        .withUserConfiguration(OwnDecorator.class)
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context.getBean(OwnDecorator.class).injected)
                  .isSameAs(OwnDecorator.MARKING);
              Handed handed = context.getBean(LeasedCaller.class).handOffAndWait("both");
              assertThat(handed.seenInTask()).contains(handed.bound());
              assertThat(handed.marked()).as("the application's decorator ran too").isTrue();
            });
  }

  private static long count(JdbcTemplate jdbc, String text) {
    return jdbc.queryForObject("SELECT count(*) FROM async_entry WHERE text = ?", Long.class, text);
  }

  /** What the task saw, and the token the {@code @WithLease} method had bound. */
  record Handed(FencingToken bound, Optional<FencingToken> seenInTask, boolean marked) {}

  /** A task still running, and the token the {@code @WithLease} method had bound. */
  record Pending(FencingToken bound, CompletableFuture<Seen> task) {}

  /** What a task saw bound. */
  record Seen(Optional<FencingToken> token, boolean marked) {}

  static class AsyncWriter {
    static final ThreadLocal<Boolean> MARK = ThreadLocal.withInitial(() -> false);

    private final JdbcTemplate jdbc;

    AsyncWriter(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @Async
    public CompletableFuture<Seen> write(String text) {
      return write(text, null);
    }

    @Async
    public CompletableFuture<Seen> write(String text, CountDownLatch go) {
      Seen seen = new Seen(Fencing.current().token(RESOURCE), MARK.get());
      if (go != null) {
        await(go);
      }
      jdbc.update("INSERT INTO async_entry (text) VALUES (?)", text);
      return CompletableFuture.completedFuture(seen);
    }

    private static void await(CountDownLatch go) {
      try {
        if (!go.await(60, TimeUnit.SECONDS)) {
          throw new IllegalStateException("never released");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
  }

  static class LeasedCaller {
    private final AsyncWriter writer;

    LeasedCaller(AsyncWriter writer) {
      this.writer = writer;
    }

    /** Hands the write off and waits for it, holding the lease. */
    @WithLease(RESOURCE)
    public Handed handOffAndWait(String text) {
      Seen seen = writer.write(text).join();
      return new Handed(
          Fencing.current().token(RESOURCE).orElseThrow(), seen.token(), seen.marked());
    }

    /** Hands the write off and returns at once, releasing the lease while the task waits. */
    @WithLease(RESOURCE)
    public Pending handOffAndReturn(String text, CountDownLatch go) {
      return new Pending(Fencing.current().token(RESOURCE).orElseThrow(), writer.write(text, go));
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableAsync
  static class AsyncApplication {
    @Bean
    JdbcTemplate jdbcTemplate(DataSource dataSource) {
      return new JdbcTemplate(dataSource);
    }

    @Bean
    AsyncWriter asyncWriter(JdbcTemplate jdbc) {
      return new AsyncWriter(jdbc);
    }

    @Bean
    LeasedCaller leasedCaller(AsyncWriter writer) {
      return new LeasedCaller(writer);
    }
  }

  /** An application's own decorator, and a bean that takes "the" TaskDecorator. */
  @Configuration(proxyBeanMethods = false)
  static class OwnDecorator {
    static final TaskDecorator MARKING =
        task ->
            () -> {
              AsyncWriter.MARK.set(true);
              try {
                task.run();
              } finally {
                AsyncWriter.MARK.remove();
              }
            };

    TaskDecorator injected;

    @Bean
    TaskDecorator markingTaskDecorator() {
      return MARKING;
    }

    @Bean
    Object takesTheTaskDecorator(TaskDecorator decorator) {
      injected = decorator;
      return decorator;
    }
  }
}
