package dev.fencing.examples.springboot;

/** The outside service that approves a closing balance: the slow part of the closing job. */
public interface Auditor {
  /** Approves {@code total}; may take a while. */
  void approve(long total);
}
