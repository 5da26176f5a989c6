package dev.fencing.torture;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/** A finished run in words: the Markdown report file and the summary printed on stdout. */
final class Report {
  private static final int LISTED_VIOLATIONS = 50;

  private Report() {}

  static String markdown(TortureRun.Result r, Duration planned) {
    StringBuilder md = new StringBuilder();
    TortureRun.Settings s = r.settings();
    md.append("# Torture test report\n\n");
    if (r.violations().isEmpty() && !r.inconclusive().isEmpty()) {
      md.append("**INCONCLUSIVE: this run proves nothing.** ");
      md.append(String.join("; ", r.inconclusive())).append(".\n\n");
    }
    md.append("| setting | value |\n|---|---|\n");
    md.append("| seed | ").append(s.seed()).append(" |\n");
    md.append("| fencing | ")
        .append(
            s.fenced()
                ? "on (LeaseClient + FencedDataSource)"
                : "OFF (plain lease, client trusts itself, plain DataSource)")
        .append(" |\n");
    md.append("| workers (JVMs) | ").append(s.workers()).append(" |\n");
    md.append("| resources | ").append(s.resources()).append(" |\n");
    md.append("| lease ttl | ").append(s.ttl().toMillis()).append(" ms |\n");
    md.append("| duration | planned ")
        .append(human(planned))
        .append(", ran ")
        .append(human(r.elapsed()))
        .append(" |\n");
    md.append("| database | ").append(r.database()).append(" |\n\n");

    md.append("## Faults injected\n\n| fault | count |\n|---|---|\n");
    r.faults()
        .forEach(
            (fault, n) -> md.append("| ").append(fault).append(" | ").append(n).append(" |\n"));
    for (String why : r.skipped()) {
      md.append("\nSkipped: ").append(why).append('\n');
    }

    md.append("\n## Activity\n\n| what | count |\n|---|---|\n");
    md.append("| tokens received (acquisitions) | ").append(r.acquisitions()).append(" |\n");
    md.append("| writes committed (in the data) | ").append(r.writes()).append(" |\n");
    md.append("| writes acknowledged to workers | ").append(r.acks()).append(" |\n");
    md.append("| refusals seen by workers | ")
        .append(total(r.refusals()))
        .append(' ')
        .append(r.refusals().isEmpty() ? "" : r.refusals().toString())
        .append(" |\n");
    md.append("| refusals recorded (fencing.rejection) | ")
        .append(r.rejectionsRecorded())
        .append(" |\n");
    if (r.faults().getOrDefault(TortureRun.Fault.FAILOVER, 0) > 0) {
      Checker.Loss loss = r.lostToFailover();
      md.append("| lost to asynchronous failover (allowed, not violations): acknowledged writes,")
          .append(" issuance rows, rejection rows | ")
          .append(loss.acks())
          .append(", ")
          .append(loss.issuances())
          .append(", ")
          .append(loss.rejections())
          .append(" |\n");
    }
    md.append("| other worker errors (connections lost, server down) | ")
        .append(r.workerErrors())
        .append(" |\n");

    md.append("\n## Violations: ")
        .append(r.violations().size())
        .append("\n\n| rule | count |\n|---|---|\n");
    r.violationsByRule()
        .forEach((rule, n) -> md.append("| ").append(rule).append(" | ").append(n).append(" |\n"));
    List<Violation> listed =
        r.violations().subList(0, Math.min(LISTED_VIOLATIONS, r.violations().size()));
    if (!listed.isEmpty()) {
      md.append('\n');
      listed.forEach(v -> md.append("- ").append(v).append('\n'));
      if (r.violations().size() > listed.size()) {
        md.append("- ... and ").append(r.violations().size() - listed.size()).append(" more\n");
      }
    }
    return md.toString();
  }

  static String summary(TortureRun.Result r) {
    String inconclusive =
        r.violations().isEmpty() && !r.inconclusive().isEmpty()
            ? "INCONCLUSIVE (" + String.join("; ", r.inconclusive()) + "): "
            : "";
    return inconclusive
        + String.format(
            "seed %d, fencing %s, %d workers, %s: faults %s%s; %d writes committed, %d acknowledged,"
                + " %d refusals %s (%d recorded), %d other errors %s;%s %d violations %s",
            r.settings().seed(),
            r.settings().fenced() ? "on" : "OFF",
            r.settings().workers(),
            human(r.elapsed()),
            r.faults(),
            r.skipped().isEmpty() ? "" : " (skipped: " + String.join("; ", r.skipped()) + ")",
            r.writes(),
            r.acks(),
            total(r.refusals()),
            r.refusals(),
            r.rejectionsRecorded(),
            total(r.workerErrors()),
            r.workerErrors(),
            r.faults().getOrDefault(TortureRun.Fault.FAILOVER, 0) == 0
                ? ""
                : String.format(
                    " lost to asynchronous failover (allowed): %d acknowledged writes, %d issuance"
                        + " rows, %d rejection rows;",
                    r.lostToFailover().acks(),
                    r.lostToFailover().issuances(),
                    r.lostToFailover().rejections()),
            r.violations().size(),
            r.violationsByRule());
  }

  private static int total(Map<String, Integer> counts) {
    return counts.values().stream().mapToInt(Integer::intValue).sum();
  }

  static String human(Duration d) {
    long s = d.toSeconds();
    return s >= 60 ? (s / 60) + " min " + (s % 60) + " s" : d.toMillis() / 1000.0 + " s";
  }
}
