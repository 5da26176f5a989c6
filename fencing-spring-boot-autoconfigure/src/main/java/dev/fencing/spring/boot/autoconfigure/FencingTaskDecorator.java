package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.jdbc.Fencing;
import org.springframework.core.task.TaskDecorator;

/**
 * Carries the tokens bound on the thread that submits a task (a {@code @WithLease} method calling
 * an {@code @Async} one, an {@code executor.submit}) into the task, wherever it runs: {@link
 * Fencing#current()} taken when the executor decorates the task (on the submitting thread), bound
 * around the task's run ({@link dev.fencing.jdbc.FencingContext#wrap(Runnable)}), and the running
 * thread's own binding restored after it, even if the task left a scope open, so nothing stays on a
 * pooled thread. Boot applies it to the executors and schedulers its builders make ({@code
 * applicationTaskExecutor}, {@code taskScheduler}), composed with the application's own {@code
 * TaskDecorator} beans; a scheduler or executor the application builds without Boot's builders is
 * not covered.
 *
 * <p>Boot's {@code ThreadPoolTaskScheduler} decorates a task when it is scheduled: every run of a
 * {@code scheduleAtFixedRate} / {@code scheduleWithFixedDelay} task, and of a {@code Trigger}'s,
 * carries what was bound on the thread that scheduled it. Its {@code SimpleAsyncTaskScheduler}
 * (virtual threads) decorates only when a run fires, so Boot's builder makes a {@link
 * FencedTaskScheduler} ({@link FencingSchedulerPostProcessor}), which wraps each task when it is
 * scheduled instead.
 *
 * <p>The binding carries each token with its lease, as on the submitting thread: a task that runs
 * after the lease was released (the {@code @WithLease} method returned first) or lost is refused
 * before anything is sent ({@code LeaseLostException}), and PostgreSQL refuses a token another
 * holder's acquisition has superseded ({@code StaleFencingTokenException}). A repeating task keeps
 * its lease and token for good: once the method that scheduled it returned, each run is refused
 * (the scheduler's error handler logs it and the task goes on) until the task is cancelled. A job
 * that should write at every run takes its own lease there ({@code @Scheduled} with {@code
 * WithLease} or {@code @SchedulerLock}).
 */
final class FencingTaskDecorator implements TaskDecorator {
  @Override
  public Runnable decorate(Runnable task) {
    return Fencing.current().wrap(task);
  }
}
