package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.jdbc.Fencing;
import java.util.Set;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.concurrent.SimpleAsyncTaskScheduler;

/**
 * Carries the scheduling thread's tokens into the tasks of a {@link SimpleAsyncTaskScheduler} bean
 * (Boot's {@code taskScheduler} with {@code spring.threads.virtual.enabled=true}). That scheduler
 * applies its {@code TaskDecorator} ({@link FencingTaskDecorator}) only when a run fires, on its
 * trigger thread where nothing is bound, and not at all to {@code scheduleWithFixedDelay} runs, so
 * a task scheduled inside a {@code @WithLease} method ran with nothing bound and wrote unchecked.
 * The bean is proxied (by class, so it keeps its type): each {@link TaskScheduler} {@code
 * schedule*} call wraps its task in {@link Fencing#current()} taken on the calling thread ({@link
 * dev.fencing.jdbc.FencingContext#wrap(Runnable)}), bound around every run and the running thread's
 * own binding restored after it.
 *
 * <p>{@code ThreadPoolTaskScheduler} (Boot's default) needs no proxy: it decorates a task when it
 * is scheduled.
 */
final class FencingSchedulerPostProcessor implements BeanPostProcessor {
  private static final Set<String> SCHEDULING =
      Set.of("schedule", "scheduleAtFixedRate", "scheduleWithFixedDelay");

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    if (!(bean instanceof SimpleAsyncTaskScheduler)) {
      return bean;
    }
    ProxyFactory proxy = new ProxyFactory(bean);
    proxy.setProxyTargetClass(true);
    proxy.addAdvice(new CarryTokens());
    return proxy.getProxy(bean.getClass().getClassLoader());
  }

  /** Wraps the task of a {@code schedule*} call in the calling thread's binding. */
  private static final class CarryTokens implements MethodInterceptor {
    @Override
    public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
      Object[] arguments = invocation.getArguments();
      if (SCHEDULING.contains(invocation.getMethod().getName())
          && arguments.length > 0
          && arguments[0] instanceof Runnable task) {
        arguments[0] = Fencing.current().wrap(task);
      }
      return invocation.proceed();
    }
  }
}
