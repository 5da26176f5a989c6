package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.spring.boot.autoconfigure.FencingSchemaInitializer.StartUpException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports a start-up that the fence's schema stopped (roles that already serve another database, a
 * missing or changed schema in validate-only mode) as Spring Boot reports failed start-ups
 * ("APPLICATION FAILED TO START": what happened, then the action, naming the properties to set).
 * Registered in {@code META-INF/spring.factories}.
 */
final class FencingStartUpFailureAnalyzer extends AbstractFailureAnalyzer<StartUpException> {
  @Override
  protected FailureAnalysis analyze(Throwable rootFailure, StartUpException cause) {
    return new FailureAnalysis(cause.description(), cause.action(), cause);
  }
}
