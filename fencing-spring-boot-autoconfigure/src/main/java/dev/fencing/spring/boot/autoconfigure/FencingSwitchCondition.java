package dev.fencing.spring.boot.autoconfigure;

import java.util.Locale;
import java.util.Map;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.env.PropertyResolver;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * The condition of {@link ConditionalOnFencingSwitch}. Boot's {@code @ConditionalOnBooleanProperty}
 * matches only the text {@code true}, while the binder reads {@code yes}, {@code on}, {@code 1} and
 * {@code " true "} as true into {@link FencingProperties}, and the condition read anything else,
 * {@code ture} too, as false: {@code fencing.datasource.wrap=yes} left every {@code DataSource}
 * unfenced with a lease client and {@code @WithLease} working, and {@code fencing.enabled=ture}
 * switched fencing off, both without a word. Here the value is read as the binder reads a boolean,
 * and one that is none fails start-up.
 */
final class FencingSwitchCondition extends SpringBootCondition {

  @Override
  public ConditionOutcome getMatchOutcome(
      ConditionContext context, AnnotatedTypeMetadata metadata) {
    Map<String, Object> attributes =
        metadata.getAnnotationAttributes(ConditionalOnFencingSwitch.class.getName());
    String property = String.valueOf(attributes == null ? null : attributes.get("value"));
    return isOn(context.getEnvironment(), property)
        ? ConditionOutcome.match(property + " is true or not set")
        : ConditionOutcome.noMatch(property + " is false");
  }

  /**
   * Whether {@code property} is on: missing, or a spelling of true that Spring's binder accepts
   * ({@code true}, {@code on}, {@code yes}, {@code 1}, any case, around it what {@link
   * String#trim()} removes, as the binder does).
   *
   * @throws IllegalArgumentException naming the property when its value is no boolean
   */
  static boolean isOn(PropertyResolver environment, String property) {
    String value = environment.getProperty(property);
    if (value == null) {
      return true;
    }
    // trim(), as the binder's StringToBooleanConverter: strip() also took blanks the binder keeps
    // (U+3000, U+2003: "false\u3000" read as false left fencing off where the binder refuses it)
    // and kept control characters it trims ("\u0007true" refused where the binder reads true)
    return switch (value.trim().toLowerCase(Locale.ROOT)) {
      case "true", "on", "yes", "1" -> true;
      case "false", "off", "no", "0" -> false;
      default ->
          throw new IllegalArgumentException(
              property
                  + " must be true or false (or on/off, yes/no, 1/0, as Spring binds a boolean), was '"
                  + value
                  + "'");
    };
  }
}
