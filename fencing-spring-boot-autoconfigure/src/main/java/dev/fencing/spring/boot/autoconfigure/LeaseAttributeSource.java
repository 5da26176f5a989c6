package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.spring.boot.WithLease;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Finds and caches {@link WithLease} on methods; the pointcut of {@link LeaseAdvisor}. A class
 * whose {@code @WithLease} sits on a method no proxy can intercept (final, private, static) is
 * refused when it is first matched: the method would run with no lease and no token bound.
 */
final class LeaseAttributeSource extends StaticMethodMatcherPointcut {
  private final ConfigurableBeanFactory beanFactory;
  private final ConcurrentMap<MethodClassKey, Optional<LeaseAttribute>> cache =
      new ConcurrentHashMap<>();
  private final Set<Class<?>> advisable = ConcurrentHashMap.newKeySet();

  LeaseAttributeSource(ConfigurableBeanFactory beanFactory) {
    this.beanFactory = beanFactory;
  }

  @Override
  public boolean matches(Method method, Class<?> targetClass) {
    requireAdvisable(targetClass);
    return get(method, targetClass) != null;
  }

  /**
   * Fails if {@code targetClass} has {@code @WithLease} on a method a proxy never intercepts. All
   * of its methods are looked at: Spring stops matching a class at its first advised method.
   *
   * @throws IllegalStateException naming the method
   */
  private void requireAdvisable(Class<?> targetClass) {
    if (advisable.contains(targetClass)) {
      return;
    }
    ReflectionUtils.doWithMethods(
        targetClass,
        method -> {
          int modifiers = method.getModifiers();
          String why =
              Modifier.isStatic(modifiers)
                  ? "static"
                  : Modifier.isPrivate(modifiers)
                      ? "private"
                      : Modifier.isFinal(modifiers) ? "final" : null;
          if (why != null && AnnotatedElementUtils.hasAnnotation(method, WithLease.class)) {
            throw new IllegalStateException(
                "@WithLease on "
                    + LeaseAttribute.describe(method)
                    + " is never applied: the method is "
                    + why
                    + ", so no Spring proxy intercepts it and it would run with no lease and no"
                    + " token bound. Make it a non-final, non-private instance method, called"
                    + " through the bean");
          }
        });
    advisable.add(targetClass);
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
