package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.jdbc.FencingToken;
import dev.fencing.spring.boot.WithLease;
import dev.fencing.spring.boot.WithLease.WhenHeld;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.Expression;
import org.springframework.expression.ParserContext;
import org.springframework.expression.common.CompositeStringExpression;
import org.springframework.expression.common.LiteralExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;

/**
 * One method's {@link WithLease}, parsed and checked once (when the bean is proxied, so a bad
 * annotation fails start-up naming the method).
 */
final class LeaseAttribute {
  private static final SpelExpressionParser PARSER = new SpelExpressionParser();
  private static final ParameterNameDiscoverer NAMES = new DefaultParameterNameDiscoverer();
  private static final Duration MAX = Duration.ofDays(7);

  private final Method method;
  private final List<Expression> resourceParts;
  private final @Nullable Duration ttl;
  private final @Nullable Duration maxWait;
  private final WhenHeld whenHeld;
  private final ConfigurableBeanFactory beanFactory;

  private LeaseAttribute(
      Method method,
      List<Expression> resourceParts,
      @Nullable Duration ttl,
      @Nullable Duration wait,
      WhenHeld whenHeld,
      ConfigurableBeanFactory beanFactory) {
    this.method = method;
    this.resourceParts = resourceParts;
    this.ttl = ttl;
    this.maxWait = wait;
    this.whenHeld = whenHeld;
    this.beanFactory = beanFactory;
  }

  /**
   * Parses {@code annotation} of {@code method}.
   *
   * @throws IllegalStateException naming the method and what is wrong
   */
  static LeaseAttribute parse(
      WithLease annotation, Method method, ConfigurableBeanFactory beanFactory) {
    try {
      String value = resolve(beanFactory, annotation.value());
      if (value.isEmpty()) {
        throw new IllegalArgumentException("the resource (value) is empty");
      }
      Expression parsed = PARSER.parseExpression(value, ParserContext.TEMPLATE_EXPRESSION);
      List<Expression> parts =
          parsed instanceof CompositeStringExpression composite
              ? List.of(composite.getExpressions())
              : List.of(parsed);
      if (parsed instanceof LiteralExpression) {
        FencingToken.requireValidResource(value);
      }
      Duration ttl = duration(beanFactory, "ttl", annotation.ttl(), Duration.ofMillis(1));
      Duration wait = duration(beanFactory, "maxWait", annotation.maxWait(), Duration.ZERO);
      checkReturnType(method, annotation.whenHeld());
      return new LeaseAttribute(method, parts, ttl, wait, annotation.whenHeld(), beanFactory);
    } catch (RuntimeException e) {
      throw new IllegalStateException(
          "@WithLease on " + describe(method) + " is invalid: " + e.getMessage(), e);
    }
  }

  /**
   * The resource for one call.
   *
   * @throws IllegalArgumentException if an expression is null or the name is invalid
   */
  String resource(@Nullable Object target, Object[] arguments) {
    if (resourceParts.size() == 1 && resourceParts.get(0) instanceof LiteralExpression literal) {
      return literal.getExpressionString();
    }
    MethodBasedEvaluationContext context =
        new MethodBasedEvaluationContext(target, method, arguments, NAMES);
    context.setBeanResolver(new BeanFactoryResolver(beanFactory));
    StringBuilder name = new StringBuilder();
    for (Expression part : resourceParts) {
      if (part instanceof LiteralExpression literal) {
        name.append(literal.getExpressionString());
        continue;
      }
      Object value = part.getValue(context);
      if (value == null) {
        throw new IllegalArgumentException(
            "@WithLease on "
                + describe(method)
                + ": #{"
                + part.getExpressionString()
                + "} is null, so the resource has no name");
      }
      name.append(value);
    }
    try {
      return FencingToken.requireValidResource(name.toString());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "@WithLease on " + describe(method) + ": \"" + name + "\": " + e.getMessage(), e);
    }
  }

  /** The annotation's ttl, or {@code fallback} if it has none. */
  Duration ttl(Duration fallback) {
    return ttl == null ? fallback : ttl;
  }

  /** The annotation's maxWait, or {@code fallback} if it has none. */
  Duration maxWait(Duration fallback) {
    return maxWait == null ? fallback : maxWait;
  }

  WhenHeld whenHeld() {
    return whenHeld;
  }

  /** What a skipped call returns. */
  @Nullable Object skipped() {
    return method.getReturnType() == Optional.class ? Optional.empty() : null;
  }

  static String describe(Method method) {
    return method.getDeclaringClass().getName() + "." + method.getName();
  }

  private static String resolve(ConfigurableBeanFactory beanFactory, String value) {
    String resolved = beanFactory.resolveEmbeddedValue(value);
    return resolved == null ? "" : resolved;
  }

  private static @Nullable Duration duration(
      ConfigurableBeanFactory beanFactory, String attribute, String text, Duration min) {
    String value = resolve(beanFactory, text);
    if (value.isEmpty()) {
      return null;
    }
    Duration d;
    try {
      d = DurationStyle.detectAndParse(value);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(attribute + " '" + value + "' is not a duration", e);
    }
    if (d.compareTo(min) < 0 || d.compareTo(MAX) > 0) {
      throw new IllegalArgumentException(
          attribute + " must be between " + min + " and 7 days, was " + value);
    }
    return d;
  }

  private static void checkReturnType(Method method, WhenHeld whenHeld) {
    Class<?> type = method.getReturnType();
    if (CompletionStage.class.isAssignableFrom(type)
        || Future.class.isAssignableFrom(type)
        || type.getName().equals("org.reactivestreams.Publisher")
        || implementsByName(type, "org.reactivestreams.Publisher")) {
      throw new IllegalArgumentException(
          "it returns "
              + type.getSimpleName()
              + ": the token is bound on the calling thread only, so the method must do its work"
              + " before it returns");
    }
    if (whenHeld == WhenHeld.SKIP && type.isPrimitive() && type != void.class) {
      throw new IllegalArgumentException(
          "whenHeld = SKIP needs a method returning void, an object or an Optional; it returns "
              + type.getName());
    }
  }

  private static boolean implementsByName(Class<?> type, String name) {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      for (Class<?> i : c.getInterfaces()) {
        if (i.getName().equals(name) || implementsByName(i, name)) {
          return true;
        }
      }
    }
    return false;
  }
}
