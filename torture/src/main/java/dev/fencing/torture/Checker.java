package dev.fencing.torture;

import dev.fencing.torture.Violation.Rule;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * Judges a {@link History}: returns every violation of the rules in {@link Rule}, each with its
 * evidence. An empty list means the history is one a correct fence could have produced.
 *
 * <p>After a failover to an asynchronous replica, what the workers saw before it ({@link
 * History#beforeFailover()}) may be missing from the promoted server: an acknowledged write, the
 * issuance row of a token received, the rejection row of a refusal. That is the loss asynchronous
 * replication documents; it is counted in {@link Loss}, not as a violation. A token received twice
 * is a violation whenever it happened, and so is any loss of what was seen after the failover.
 */
final class Checker {
  private Checker() {}

  /**
   * What a failover to an asynchronous replica lost, as allowed.
   *
   * @param acks writes acknowledged before the failover, absent from the promoted server
   * @param issuances tokens received before the failover whose issuance row it lacks
   * @param rejections refusals seen before the failover whose rejection row it lacks
   */
  record Loss(int acks, int issuances, int rejections) {
    static final Loss NONE = new Loss(0, 0, 0);

    int total() {
      return acks + issuances + rejections;
    }
  }

  /** The violations and the loss a failover accounts for. */
  record Verdict(List<Violation> violations, Loss loss) {}

  static List<Violation> check(History history) {
    return judge(history).violations();
  }

  static Verdict judge(History history) {
    List<Violation> violations = new ArrayList<>();
    int[] loss = new int[3];
    commitOrder(history, violations);
    staleWrites(history, violations);
    issuance(history, violations, loss);
    acknowledgements(history, violations, loss);
    refusals(history, violations, loss);
    refusedWrites(history, violations);
    return new Verdict(violations, new Loss(loss[0], loss[1], loss[2]));
  }

  private static void commitOrder(History history, List<Violation> violations) {
    Map<String, List<History.Write>> byResource =
        history.writes().stream()
            .collect(
                Collectors.groupingBy(
                    History.Write::resource, Collectors.toCollection(ArrayList::new)));
    byResource.forEach(
        (resource, writes) -> {
          writes.sort(Comparator.comparingLong(History.Write::n));
          for (int i = 1; i < writes.size(); i++) {
            History.Write before = writes.get(i - 1);
            History.Write after = writes.get(i);
            if (after.token() < before.token()) {
              violations.add(
                  new Violation(
                      Rule.TOKEN_DECREASED,
                      String.format(
                          "%s: write #%d (worker %d, seq %d) has token %d after write #%d (worker"
                              + " %d, seq %d) with token %d",
                          resource,
                          after.n(),
                          after.worker(),
                          after.seq(),
                          after.token(),
                          before.n(),
                          before.worker(),
                          before.seq(),
                          before.token())));
            }
          }
        });
  }

  private static void staleWrites(History history, List<Violation> violations) {
    // Judged by the higher of the max_seen its last statement read and the one read inside its
    // COMMIT: a token accepted between the two (the zombie stopped after its last statement) shows
    // only in the second.
    for (History.Write w : history.writes()) {
      long accepted = Math.max(w.maxSeen(), w.maxSeenAtCommit());
      if (w.token() < accepted) {
        violations.add(
            new Violation(
                Rule.STALE_WRITE,
                String.format(
                    "%s: write #%d (worker %d, seq %d) committed with token %d although the"
                        + " resource had accepted token %d%s",
                    w.resource(),
                    w.n(),
                    w.worker(),
                    w.seq(),
                    w.token(),
                    accepted,
                    w.maxSeen() < accepted
                        ? " (seen at its commit, not at its last statement)"
                        : "")));
      }
    }
  }

  private static void issuance(History history, List<Violation> violations, int[] loss) {
    Set<WorkerLog.Acquisition> beforeFailover =
        new HashSet<>(history.beforeFailover().acquisitions());
    Map<Long, WorkerLog.Acquisition> first = new HashMap<>();
    for (WorkerLog.Acquisition a : history.acquisitions()) {
      WorkerLog.Acquisition earlier = first.putIfAbsent(a.token(), a);
      if (earlier != null) {
        violations.add(
            new Violation(
                Rule.TOKEN_ISSUED_TWICE,
                String.format(
                    "token %d was returned to worker %d for %s and to worker %d for %s",
                    a.token(), earlier.worker(), earlier.resource(), a.worker(), a.resource())));
      }
    }
    Set<String> issued = new HashSet<>();
    for (History.Issuance i : history.issuances()) {
      issued.add(i.resource() + " " + i.token());
    }
    for (WorkerLog.Acquisition a : history.acquisitions()) {
      if (!issued.contains(a.resource() + " " + a.token())) {
        if (beforeFailover.contains(a)) {
          loss[1]++;
          continue;
        }
        violations.add(
            new Violation(
                Rule.ISSUANCE_LOST,
                String.format(
                    "worker %d received token %d for %s, which the issuance log does not hold",
                    a.worker(), a.token(), a.resource())));
      }
    }
    for (History.Write w : history.writes()) {
      if (!issued.contains(w.resource() + " " + w.token())) {
        violations.add(
            new Violation(
                Rule.ISSUANCE_LOST,
                String.format(
                    "%s: write #%d (worker %d, seq %d) carries token %d, which the issuance log"
                        + " does not hold",
                    w.resource(), w.n(), w.worker(), w.seq(), w.token())));
      }
    }
  }

  private static void acknowledgements(History history, List<Violation> violations, int[] loss) {
    Set<WorkerLog.Ack> beforeFailover = new HashSet<>(history.beforeFailover().acks());
    Map<String, History.Write> byAttempt = new HashMap<>();
    for (History.Write w : history.writes()) {
      byAttempt.put(w.worker() + " " + w.seq(), w);
    }
    for (WorkerLog.Ack ack : history.acks()) {
      History.Write w = byAttempt.get(ack.worker() + " " + ack.seq());
      if (w == null && beforeFailover.contains(ack)) {
        loss[0]++;
        continue;
      }
      if (w == null
          || !w.resource().equals(ack.resource())
          || w.token() != ack.token()
          || w.n() != ack.n()) {
        violations.add(
            new Violation(
                Rule.ACKNOWLEDGED_WRITE_LOST,
                String.format(
                    "worker %d saw seq %d committed as write #%d to %s with token %d; the data"
                        + " holds %s",
                    ack.worker(),
                    ack.seq(),
                    ack.n(),
                    ack.resource(),
                    ack.token(),
                    w == null
                        ? "no such write"
                        : "write #" + w.n() + " to " + w.resource() + " with token " + w.token())));
      }
    }
  }

  // A write the worker saw refused must not be in the data, whatever its token: the refusal told
  // the application that nothing of the transaction committed. Neither the commit order nor
  // max_seen can see such a write when its token is the resource's newest (a refusal of a lease
  // the client knows lost, or one raised after the commit went through).
  private static void refusedWrites(History history, List<Violation> violations) {
    Map<String, History.Write> byAttempt = new HashMap<>();
    for (History.Write w : history.writes()) {
      byAttempt.put(w.worker() + " " + w.seq(), w);
    }
    for (WorkerLog.Refusal refusal : history.refusals()) {
      History.Write w = byAttempt.get(refusal.worker() + " " + refusal.seq());
      if (w != null) {
        violations.add(
            new Violation(
                Rule.REFUSED_WRITE_COMMITTED,
                String.format(
                    "worker %d saw seq %d to %s with token %d refused (%s); the data holds it as"
                        + " write #%d to %s with token %d",
                    refusal.worker(),
                    refusal.seq(),
                    refusal.resource(),
                    refusal.token(),
                    refusal.sqlState(),
                    w.n(),
                    w.resource(),
                    w.token())));
      }
    }
  }

  private static void refusals(History history, List<Violation> violations, int[] loss) {
    Set<WorkerLog.Refusal> beforeFailover = new HashSet<>(history.beforeFailover().refusals());
    Map<String, Integer> recorded = new HashMap<>();
    for (History.Rejection r : history.rejections()) {
      recorded.merge(refusalKey(r.resource(), r.token(), r.sqlState()), 1, Integer::sum);
    }
    for (WorkerLog.Refusal refusal : history.refusals()) {
      String key = refusalKey(refusal.resource(), refusal.token(), refusal.sqlState());
      int left = recorded.getOrDefault(key, 0);
      if (left == 0 && beforeFailover.contains(refusal)) {
        loss[2]++;
      } else if (left == 0) {
        violations.add(
            new Violation(
                Rule.REFUSAL_NOT_RECORDED,
                String.format(
                    "worker %d saw seq %d to %s with token %d refused (%s); the rejection log"
                        + " does not hold it",
                    refusal.worker(),
                    refusal.seq(),
                    refusal.resource(),
                    refusal.token(),
                    refusal.sqlState())));
      } else {
        recorded.put(key, left - 1);
      }
    }
  }

  /**
   * What a refusal and its row in the rejection log share: resource, token, SQLSTATE; a {@code
   * ZF002} (no token presented, such as a write whose marker the trigger did not accept) names no
   * token in the log, whichever one the worker held, so it is matched by resource and SQLSTATE.
   */
  private static String refusalKey(String resource, @Nullable Long token, String sqlState) {
    return resource + " " + (sqlState.equals("ZF002") ? "-" : token) + " " + sqlState;
  }
}
