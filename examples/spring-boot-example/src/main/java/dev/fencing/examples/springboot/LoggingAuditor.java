package dev.fencing.examples.springboot;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/** Stands in for a real auditing service. */
@Component
class LoggingAuditor implements Auditor {
  private static final Logger LOG = LoggerFactory.getLogger(LoggingAuditor.class);

  @Override
  public void approve(long total) {
    LOG.info("Closing balance {} approved", total);
  }
}
