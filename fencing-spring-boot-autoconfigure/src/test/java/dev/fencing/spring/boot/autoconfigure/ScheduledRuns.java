package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * What the runs of a scheduled task saw and did, in order: the token bound for a resource when the
 * run started, and what its write threw (null: the row was written).
 */
final class ScheduledRuns {
  /** One run. */
  record Run(Optional<FencingToken> seen, @Nullable Throwable refused, String thread) {}

  private final BlockingQueue<Run> runs = new LinkedBlockingQueue<>();

  /**
   * An application on {@code db} with Boot's data source and task scheduling and the fencing
   * auto-configuration, plus {@code more}; {@code table} (one {@code text} column) created.
   */
  static ApplicationContextRunner schedulingApplication(
      TestDatabaseExtension db, String table, Class<?>... more) throws SQLException {
    PerClassDatabase.execute(db.database(), "CREATE TABLE " + table + " (text text NOT NULL)");
    List<Class<?>> configurations =
        new ArrayList<>(
            List.of(
                DataSourceAutoConfiguration.class,
                TaskSchedulingAutoConfiguration.class,
                FencingAutoConfiguration.class));
    configurations.addAll(List.of(more));
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(configurations.toArray(Class<?>[]::new)))
        .withPropertyValues(PerClassDatabase.properties(db.database()));
  }

  /**
   * A task that inserts {@code text} into {@code table} (one {@code text} column) with whatever is
   * bound on the thread, and records the run.
   */
  Runnable writer(JdbcTemplate jdbc, String table, String resource, String text) {
    return () -> {
      Optional<FencingToken> seen = Fencing.current().token(resource);
      Throwable refused = null;
      try {
        jdbc.update("INSERT INTO " + table + " (text) VALUES (?)", text);
      } catch (RuntimeException e) {
        refused = e;
      }
      runs.add(new Run(seen, refused, Thread.currentThread().getName()));
    };
  }

  /** Records a run that wrote. */
  void wrote(Optional<FencingToken> seen) {
    runs.add(new Run(seen, null, Thread.currentThread().getName()));
  }

  /** The next run, waiting for it up to a minute. */
  Run next() throws InterruptedException {
    Run run = runs.poll(60, TimeUnit.SECONDS);
    if (run == null) {
      throw new AssertionError("no run within a minute");
    }
    return run;
  }

  /** The next {@code count} runs. */
  List<Run> next(int count) throws InterruptedException {
    List<Run> next = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      next.add(next());
    }
    return next;
  }

  /** The runs recorded and not yet taken. */
  List<Run> drain() {
    List<Run> drained = new ArrayList<>();
    runs.drainTo(drained);
    return drained;
  }
}
