package dev.fencing.torture;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.torture.History.Issuance;
import dev.fencing.torture.History.Rejection;
import dev.fencing.torture.History.Write;
import dev.fencing.torture.Violation.Rule;
import dev.fencing.torture.WorkerLog.Ack;
import dev.fencing.torture.WorkerLog.Acquisition;
import dev.fencing.torture.WorkerLog.Refusal;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The checker on hand-made histories: a correct one passes, and each rule fires on its own. */
class CheckerTest {
  private static final String A = "a";
  private static final String B = "b";

  /**
   * A correct history: worker 0 holds a with token 1 and writes twice; worker 1 takes a over with
   * token 3 and writes; worker 0, now a zombie, is refused and the refusal is recorded; worker 1
   * writes b with token 2.
   */
  private static Builder correct() {
    Builder h = new Builder();
    h.acquired(0, A, 1).acquired(1, B, 2).acquired(1, A, 3);
    h.write(A, 1, 1, 0, 1, 1).write(A, 2, 1, 0, 2, 1).write(A, 3, 3, 1, 1, 3);
    h.write(B, 1, 2, 1, 2, 2);
    h.ack(0, A, 1, 1, 1).ack(0, A, 1, 2, 2).ack(1, A, 3, 1, 3).ack(1, B, 2, 2, 1);
    h.refused(0, A, 1, 3, "ZF001").recorded(A, 1L, "ZF001");
    return h;
  }

  @Test
  void aCorrectHistoryHasNoViolations() {
    assertThat(Checker.check(correct().build())).isEmpty();
  }

  @Test
  void commitOrderIsTheCounterNotTheListOrder() {
    Builder h = correct();
    List<Write> shuffled = new ArrayList<>(h.writes);
    java.util.Collections.reverse(shuffled);
    h.writes.clear();
    h.writes.addAll(shuffled);
    assertThat(Checker.check(h.build())).isEmpty();
  }

  @Test
  void aTokenDecreasingInCommitOrderIsFound() {
    // the zombie's write with token 1 committed after token 3's (it read max_seen before token 3)
    Builder h = correct().write(A, 4, 1, 0, 3, 1);
    h.refusals.clear();
    assertThat(rules(h)).containsExactly(Rule.TOKEN_DECREASED);
    assertThat(Checker.check(h.build()).get(0).detail())
        .contains(
            "write #4 (worker 0, seq 3) has token 1 after write #3 (worker 1, seq 1) with token 3");
  }

  @Test
  void aWriteBelowTheAcceptedTokenIsFoundEvenAsTheLastWrite() {
    // the zombie's write is the resource's first since token 3 was accepted by the acquisition:
    // the commit order alone cannot see it, the max_seen its transaction read can
    Builder h = new Builder();
    h.acquired(0, A, 1).acquired(1, A, 2);
    h.write(A, 1, 1, 0, 1, 2);
    assertThat(rules(h)).containsExactly(Rule.STALE_WRITE);
  }

  @Test
  void aTokenAcceptedBetweenTheLastStatementAndTheCommitIsFound() {
    // the zombie stopped after its INSERT, before its COMMIT: token 2 was accepted meanwhile (the
    // acquisition did not wait for the open transaction); the max_seen of its last statement was
    // still 1, the one read inside its COMMIT is 2, and no later write shows the order
    Builder h = new Builder();
    h.acquired(0, A, 1).acquired(1, A, 2);
    h.writes.add(new Write(A, 1, 1, 0, 1, 1, 2));
    assertThat(rules(h)).containsExactly(Rule.STALE_WRITE);
    assertThat(Checker.check(h.build()).get(0).detail()).contains("at its commit");
  }

  @Test
  void aTokenReturnedTwiceIsFound() {
    Builder h = correct().acquired(2, B, 3);
    h.issuances.add(new Issuance(B, 3, "w2"));
    assertThat(rules(h)).containsExactly(Rule.TOKEN_ISSUED_TWICE);
  }

  @Test
  void aTokenMissingFromTheIssuanceLogIsFound() {
    Builder h = correct();
    h.issuances.removeIf(i -> i.token() == 3);
    // worker 1 received it and wrote with it
    assertThat(Checker.check(h.build()))
        .extracting(Violation::rule)
        .containsExactly(Rule.ISSUANCE_LOST, Rule.ISSUANCE_LOST);
  }

  @Test
  void anAcknowledgedWriteMissingFromTheDataIsFound() {
    Builder h = correct().ack(1, B, 2, 7, 2);
    assertThat(rules(h)).containsExactly(Rule.ACKNOWLEDGED_WRITE_LOST);
  }

  @Test
  void anAcknowledgedWriteRecordedDifferentlyIsFound() {
    Builder h = correct();
    h.acks.set(0, new Ack(0, A, 1, 1, 2)); // acknowledged as #2, the data says #1
    assertThat(rules(h)).containsExactly(Rule.ACKNOWLEDGED_WRITE_LOST);
  }

  @Test
  void aWriteSeenRefusedThatIsInTheDataIsFound() {
    // worker 1 saw seq 4 refused (the rejection is recorded), yet the data holds that write: its
    // token is the resource's newest, so neither the commit order nor max_seen can tell
    Builder h = correct().refused(1, A, 3, 4, "ZF005").recorded(A, 3L, "ZF005");
    h.write(A, 4, 3, 1, 4, 3);
    assertThat(rules(h)).containsExactly(Rule.REFUSED_WRITE_COMMITTED);
    assertThat(Checker.check(h.build()).get(0).detail())
        .contains(
            "worker 1 saw seq 4 to a with token 3 refused (ZF005); the data holds it as write #4");
  }

  @Test
  void aStaleWriteNobodySawCommittedIsFoundInTheData() {
    // the zombie's commit went through but its acknowledgement was lost (connection cut after the
    // commit, worker killed before its log line): the data alone convicts it
    Builder h = correct().write(A, 4, 1, 0, 3, 3);
    h.refusals.clear();
    h.rejections.clear();
    assertThat(rules(h)).containsExactlyInAnyOrder(Rule.STALE_WRITE, Rule.TOKEN_DECREASED);
  }

  @Test
  void aWriteWhoseOutcomeTheWorkerDidNotKnowIsJudgedByTheData() {
    // seq 3 of worker 1 (token 3) and seq 3 of worker 0 (token 1, a zombie) ended in errors at
    // commit, results unknown: absent from the data neither is a violation, present each is judged
    // like any other write
    Builder h = correct();
    h.refusals.clear();
    h.rejections.clear();
    assertThat(rules(h)).isEmpty();
    h.write(A, 4, 3, 1, 3, 3);
    assertThat(rules(h)).isEmpty();
    h.write(A, 5, 1, 0, 3, 3);
    assertThat(rules(h)).containsExactlyInAnyOrder(Rule.STALE_WRITE, Rule.TOKEN_DECREASED);
  }

  @Test
  void aRefusalMissingFromTheRejectionLogIsFound() {
    Builder h = correct();
    h.rejections.clear();
    assertThat(rules(h)).containsExactly(Rule.REFUSAL_NOT_RECORDED);
  }

  @Test
  void eachRecordedRejectionAccountsForOneRefusalOnly() {
    Builder h = correct().refused(0, A, 1, 4, "ZF001");
    assertThat(rules(h)).containsExactly(Rule.REFUSAL_NOT_RECORDED);
    h.recorded(A, 1L, "ZF001");
    assertThat(rules(h)).isEmpty();
  }

  @Test
  void aMissingTokenRefusalIsMatchedWithoutTheTokenTheWorkerHeld() {
    // a replayed marker: the worker held token 4, the trigger saw no token and logged none
    Builder h = correct().refused(1, A, 4, 9, "ZF002");
    assertThat(rules(h)).containsExactly(Rule.REFUSAL_NOT_RECORDED);
    h.recorded(B, null, "ZF002");
    assertThat(rules(h)).as("another resource's").containsExactly(Rule.REFUSAL_NOT_RECORDED);
    h.recorded(A, null, "ZF002");
    assertThat(rules(h)).isEmpty();
  }

  @Test
  void aRejectionOfAnotherKindDoesNotAccountForARefusal() {
    Builder h = correct();
    h.rejections.clear();
    h.recorded(A, 1L, "ZF005");
    assertThat(rules(h)).containsExactly(Rule.REFUSAL_NOT_RECORDED);
  }

  @Test
  void whatAsynchronousFailoverLostBeforeThePromotionIsReportedNotAViolation() {
    // worker 1 saw token 5 and a write with it, and a refusal, all before the failover; the
    // promoted server holds none of them
    Builder h = correct();
    h.acquired(1, B, 5).ack(1, B, 5, 3, 2).refused(1, A, 3, 4, "ZF001");
    h.issuances.removeIf(i -> i.token() == 5);
    History withLoss = h.build();
    WorkerLog.Entries before =
        new WorkerLog.Entries(
            List.of(new Acquisition(1, B, 5)),
            List.of(new Ack(1, B, 5, 3, 2)),
            List.of(new Refusal(1, A, 3, 4, "ZF001")),
            java.util.Map.of());
    History afterFailover =
        new History(
            withLoss.writes(),
            withLoss.issuances(),
            withLoss.rejections(),
            withLoss.acquisitions(),
            withLoss.acks(),
            withLoss.refusals(),
            before);

    Checker.Verdict verdict = Checker.judge(afterFailover);

    assertThat(verdict.violations()).isEmpty();
    assertThat(verdict.loss()).isEqualTo(new Checker.Loss(1, 1, 1));
    // the same losses seen after the promotion are violations
    assertThat(rules(h))
        .containsExactlyInAnyOrder(
            Rule.ISSUANCE_LOST, Rule.ACKNOWLEDGED_WRITE_LOST, Rule.REFUSAL_NOT_RECORDED);
  }

  @Test
  void aTokenIssuedTwiceAcrossAFailoverIsAViolation() {
    // token 3 received from the old primary before the failover, and again from the promoted one
    Builder h = correct().acquired(0, B, 3);
    h.issuances.add(new Issuance(B, 3, "w0")); // the promoted server's issuance of it
    History history = h.build();
    History afterFailover =
        new History(
            history.writes(),
            history.issuances(),
            history.rejections(),
            history.acquisitions(),
            history.acks(),
            history.refusals(),
            new WorkerLog.Entries(
                List.of(new Acquisition(1, A, 3)), List.of(), List.of(), java.util.Map.of()));

    assertThat(Checker.judge(afterFailover).violations())
        .extracting(Violation::rule)
        .containsExactly(Rule.TOKEN_ISSUED_TWICE);
  }

  private static List<Rule> rules(Builder h) {
    return Checker.check(h.build()).stream().map(Violation::rule).toList();
  }

  /** A hand-made history; acquisitions are also entered in the issuance log. */
  private static final class Builder {
    final List<Write> writes = new ArrayList<>();
    final List<Issuance> issuances = new ArrayList<>();
    final List<Rejection> rejections = new ArrayList<>();
    final List<Acquisition> acquisitions = new ArrayList<>();
    final List<Ack> acks = new ArrayList<>();
    final List<Refusal> refusals = new ArrayList<>();

    Builder acquired(int worker, String resource, long token) {
      acquisitions.add(new Acquisition(worker, resource, token));
      if (issuances.stream().noneMatch(i -> i.token() == token)) {
        issuances.add(new Issuance(resource, token, "w" + worker));
      }
      return this;
    }

    Builder write(String resource, long n, long token, int worker, long seq, long maxSeen) {
      writes.add(new Write(resource, n, token, worker, seq, maxSeen));
      return this;
    }

    Builder ack(int worker, String resource, long token, long seq, long n) {
      acks.add(new Ack(worker, resource, token, seq, n));
      return this;
    }

    Builder refused(int worker, String resource, long token, long seq, String sqlState) {
      refusals.add(new Refusal(worker, resource, token, seq, sqlState));
      return this;
    }

    Builder recorded(String resource, Long token, String sqlState) {
      rejections.add(new Rejection(resource, token, sqlState));
      return this;
    }

    History build() {
      return new History(writes, issuances, rejections, acquisitions, acks, refusals);
    }
  }
}
