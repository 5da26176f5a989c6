package dev.fencing.spring.boot.autoconfigure;

import org.aopalliance.aop.Advice;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;

/**
 * Applies {@link LeaseInterceptor} to {@code @WithLease} methods. Ordered before Spring's
 * transaction advice (whose default order is the lowest precedence), so by default the lease is
 * taken before the transaction begins and released after it ended.
 */
final class LeaseAdvisor extends AbstractPointcutAdvisor {
  private static final long serialVersionUID = 1L;

  /** The advisor's default order: just outside Spring's transaction advice. */
  static final int ORDER = LOWEST_PRECEDENCE - 1000;

  private final transient LeaseAttributeSource pointcut;
  private final transient LeaseInterceptor interceptor;

  LeaseAdvisor(LeaseAttributeSource pointcut, LeaseInterceptor interceptor) {
    this.pointcut = pointcut;
    this.interceptor = interceptor;
    setOrder(ORDER);
  }

  @Override
  public Pointcut getPointcut() {
    return pointcut;
  }

  @Override
  public Advice getAdvice() {
    return interceptor;
  }
}
