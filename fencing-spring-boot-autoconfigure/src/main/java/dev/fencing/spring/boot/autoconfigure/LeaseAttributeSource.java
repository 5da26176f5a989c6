package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.spring.boot.WithLease;
import java.lang.reflect.Method;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;

/** Finds and caches {@link WithLease} on methods; the pointcut of {@link LeaseAdvisor}. */
final class LeaseAttributeSource extends StaticMethodMatcherPointcut {
  private final ConfigurableBeanFactory beanFactory;
  private final ConcurrentMap<MethodClassKey, Optional<LeaseAttribute>> cache =
      new ConcurrentHashMap<>();

  LeaseAttributeSource(ConfigurableBeanFactory beanFactory) {
    this.beanFactory = beanFactory;
  }

  @Override
  public boolean matches(Method method, Class<?> targetClass) {
    return get(method, targetClass) != null;
  }

  /** The parsed annotation, or null if the method has none. */
  @Nullable LeaseAttribute get(Method method, @Nullable Class<?> targetClass) {
    return cache
        .computeIfAbsent(new MethodClassKey(method, targetClass), k -> find(method, targetClass))
        .orElse(null);
  }

  private Optional<LeaseAttribute> find(Method method, @Nullable Class<?> targetClass) {
    Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
    WithLease annotation = AnnotatedElementUtils.findMergedAnnotation(specific, WithLease.class);
    if (annotation == null && specific != method) {
      annotation = AnnotatedElementUtils.findMergedAnnotation(method, WithLease.class);
    }
    return annotation == null
        ? Optional.empty()
        : Optional.of(LeaseAttribute.parse(annotation, specific, beanFactory));
  }
}
