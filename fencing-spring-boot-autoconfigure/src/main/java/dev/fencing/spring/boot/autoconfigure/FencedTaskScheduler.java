package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.jdbc.Fencing;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ScheduledFuture;
import org.springframework.scheduling.Trigger;
import org.springframework.scheduling.concurrent.SimpleAsyncTaskScheduler;

/**
 * A {@link SimpleAsyncTaskScheduler} whose {@code schedule*} calls wrap the task in {@link
 * Fencing#current()} taken on the calling thread ({@link
 * dev.fencing.jdbc.FencingContext#wrap(Runnable)}): bound around every run, the running thread's
 * own binding restored after it. The plain scheduler applies its {@code TaskDecorator} only when a
 * run fires, on its trigger thread where nothing is bound, and not at all to {@code
 * scheduleWithFixedDelay} runs. Made by Boot's builder ({@link FencingSchedulerPostProcessor}), so
 * it is the configured scheduler itself, every getter included. Its own calls do not go through
 * these methods, so a task is wrapped once.
 */
class FencedTaskScheduler extends SimpleAsyncTaskScheduler {
  @Override
  public ScheduledFuture<?> schedule(Runnable task, Trigger trigger) {
    return super.schedule(carry(task), trigger);
  }

  @Override
  public ScheduledFuture<?> schedule(Runnable task, Instant startTime) {
    return super.schedule(carry(task), startTime);
  }

  @Override
  public ScheduledFuture<?> scheduleAtFixedRate(Runnable task, Instant startTime, Duration period) {
    return super.scheduleAtFixedRate(carry(task), startTime, period);
  }

  @Override
  public ScheduledFuture<?> scheduleAtFixedRate(Runnable task, Duration period) {
    return super.scheduleAtFixedRate(carry(task), period);
  }

  @Override
  public ScheduledFuture<?> scheduleWithFixedDelay(
      Runnable task, Instant startTime, Duration delay) {
    return super.scheduleWithFixedDelay(carry(task), startTime, delay);
  }

  @Override
  public ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, Duration delay) {
    return super.scheduleWithFixedDelay(carry(task), delay);
  }

  private static Runnable carry(Runnable task) {
    return Fencing.current().wrap(task);
  }
}
