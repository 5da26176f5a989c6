package dev.fencing.benchmark.lease;

import java.util.List;

/** Where an acquire+release spends its time: the analysis behind the figures (see the docs). */
final class LeaseFindings {
  private LeaseFindings() {}

  static List<String> whereTheTimeGoes() {
    return List.of();
  }
}
