package dev.fencing.spring.boot.autoconfigure;

import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.task.SimpleAsyncTaskSchedulerBuilder;
import org.springframework.boot.task.SimpleAsyncTaskSchedulerCustomizer;
import org.springframework.core.task.TaskDecorator;
import org.springframework.scheduling.concurrent.SimpleAsyncTaskScheduler;

/**
 * Makes the {@link SimpleAsyncTaskScheduler}s that Boot's {@link SimpleAsyncTaskSchedulerBuilder}
 * bean builds (Boot's {@code taskScheduler} with {@code spring.threads.virtual.enabled=true}, and
 * an application's {@code builder.build()}) {@link FencedTaskScheduler}s, which carry the
 * scheduling thread's tokens into their tasks. The builder bean is replaced by one that builds a
 * {@code FencedTaskScheduler} and configures it as the original would ({@code configure}, with
 * every property and customizer); each {@code with}-style call keeps that. The scheduler is
 * therefore not a proxy: every method, the {@code final} getters of {@code SimpleAsyncTaskExecutor}
 * included, answers from the configured instance. A class proxy of the scheduler (before) read
 * those from its own unset fields.
 *
 * <p>{@code ThreadPoolTaskScheduler} (Boot's default) needs none of this: it decorates a task when
 * it is scheduled.
 */
final class FencingSchedulerPostProcessor implements BeanPostProcessor {
  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    if (bean instanceof SimpleAsyncTaskSchedulerBuilder builder
        && !(bean instanceof FencedSchedulerBuilder)) {
      return new FencedSchedulerBuilder(builder);
    }
    return bean;
  }

  /**
   * Boot's builder, building a {@link FencedTaskScheduler}. It overrides every public method of
   * {@link SimpleAsyncTaskSchedulerBuilder} (its own fields are the defaults; {@code
   * SimpleSchedulerHandOffTest} fails if Boot adds one this class does not override).
   */
  static final class FencedSchedulerBuilder extends SimpleAsyncTaskSchedulerBuilder {
    private final SimpleAsyncTaskSchedulerBuilder configured;

    FencedSchedulerBuilder(SimpleAsyncTaskSchedulerBuilder configured) {
      this.configured = configured;
    }

    @Override
    public SimpleAsyncTaskScheduler build() {
      return configured.configure(new FencedTaskScheduler());
    }

    @Override
    public <T extends SimpleAsyncTaskScheduler> T configure(T taskScheduler) {
      return configured.configure(taskScheduler);
    }

    @Override
    public SimpleAsyncTaskSchedulerBuilder threadNamePrefix(@Nullable String threadNamePrefix) {
      return new FencedSchedulerBuilder(configured.threadNamePrefix(threadNamePrefix));
    }

    @Override
    public SimpleAsyncTaskSchedulerBuilder concurrencyLimit(@Nullable Integer concurrencyLimit) {
      return new FencedSchedulerBuilder(configured.concurrencyLimit(concurrencyLimit));
    }

    @Override
    public SimpleAsyncTaskSchedulerBuilder virtualThreads(@Nullable Boolean virtualThreads) {
      return new FencedSchedulerBuilder(configured.virtualThreads(virtualThreads));
    }

    @Override
    public SimpleAsyncTaskSchedulerBuilder taskTerminationTimeout(
        @Nullable Duration taskTerminationTimeout) {
      return new FencedSchedulerBuilder(configured.taskTerminationTimeout(taskTerminationTimeout));
    }

    @Override
    public SimpleAsyncTaskSchedulerBuilder taskDecorator(@Nullable TaskDecorator taskDecorator) {
      return new FencedSchedulerBuilder(configured.taskDecorator(taskDecorator));
    }

    @Override
    public SimpleAsyncTaskSchedulerBuilder customizers(
        SimpleAsyncTaskSchedulerCustomizer... customizers) {
      return new FencedSchedulerBuilder(configured.customizers(customizers));
    }

    @Override
    public SimpleAsyncTaskSchedulerBuilder customizers(
        Iterable<? extends SimpleAsyncTaskSchedulerCustomizer> customizers) {
      return new FencedSchedulerBuilder(configured.customizers(customizers));
    }

    @Override
    public SimpleAsyncTaskSchedulerBuilder additionalCustomizers(
        SimpleAsyncTaskSchedulerCustomizer... customizers) {
      return new FencedSchedulerBuilder(configured.additionalCustomizers(customizers));
    }

    @Override
    public SimpleAsyncTaskSchedulerBuilder additionalCustomizers(
        Iterable<? extends SimpleAsyncTaskSchedulerCustomizer> customizers) {
      return new FencedSchedulerBuilder(configured.additionalCustomizers(customizers));
    }
  }
}
