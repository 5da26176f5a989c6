package dev.fencing.spring.boot.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.context.annotation.Conditional;

/**
 * Matches when the boolean property {@link #value()} is missing or true, read as Spring's binder
 * reads it into {@link FencingProperties}; a value that is no boolean fails start-up naming the
 * property ({@link FencingSwitchCondition}).
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
@Documented
@Conditional(FencingSwitchCondition.class)
@interface ConditionalOnFencingSwitch {
  /** The property, e.g. {@code fencing.enabled}. */
  String value();
}
