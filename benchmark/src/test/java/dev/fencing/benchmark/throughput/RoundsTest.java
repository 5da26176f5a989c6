package dev.fencing.benchmark.throughput;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.fencing.benchmark.throughput.Rounds.Contender;
import dev.fencing.benchmark.throughput.Rounds.Pair;
import dev.fencing.benchmark.throughput.Rounds.Turn;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

/** The pairing schedule: each variant measured in slices adjacent to its own baseline's. */
class RoundsTest {
  private static Contender contender(String id, String baseline) {
    return new Contender(id, id, baseline, null, r -> {}, null, null);
  }

  private static final Contender UNFENCED = contender("tpcb/unfenced", null);
  private static final Contender FENCED = contender("tpcb/fenced-1000", "tpcb/unfenced");
  private static final Contender FLOOR = contender("tpcb/floor-1000", "tpcb/unfenced");
  private static final List<Pair> PAIRS =
      List.of(
          Pair.of(FENCED, UNFENCED),
          Pair.of(FLOOR, UNFENCED),
          new Pair("tpcb/check-vs-floor-1000", "check vs floor", FENCED, FLOOR, 0.97));

  @Test
  void everyRoundGivesEachPairOneTurnOfFourAdjacentSlicesAbbaThenBaab() {
    for (int round = 0; round < 6; round++) {
      List<Turn> turns = Rounds.schedule(PAIRS, round);
      assertThat(turns).extracting(Turn::pair).containsExactlyInAnyOrderElementsOf(PAIRS);
      for (Turn turn : turns) {
        Contender variant = turn.pair().variant();
        Contender baseline = turn.pair().baseline();
        assertThat(turn.slices())
            .as("round %d, %s", round, turn.pair().id())
            .containsExactlyElementsOf(
                round % 2 == 0
                    ? List.of(baseline, variant, variant, baseline)
                    : List.of(variant, baseline, baseline, variant));
      }
    }
  }

  @Test
  void aVariantThatFailsStopsTheRunNamingIt() throws Exception {
    Contender failing =
        new Contender(
            "tpcb/fenced-1000",
            "fenced",
            "tpcb/unfenced",
            null,
            r -> {
              throw new IllegalStateException("UPDATE of account 1 changed 0 rows, not 1");
            },
            null,
            null);
    ExecutorService pool = Executors.newFixedThreadPool(Plan.tiny().clients());
    try {
      assertThatThrownBy(
              () ->
                  new Rounds(Plan.tiny(), pool)
                      .run(List.of(UNFENCED, failing), List.of(Pair.of(failing, UNFENCED))))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("tpcb/fenced-1000 (fenced): a client failed")
          .hasMessageContaining("changed 0 rows");
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aVariantWhoseEveryTransactionIsRetriedStopsTheRunInsteadOfSpinning() throws Exception {
    Contender spinning =
        new Contender(
            "tpcb/fenced-1000",
            "fenced",
            "tpcb/unfenced",
            null,
            r -> {
              throw new SQLException("could not serialize access", "40001");
            },
            null,
            null);
    ExecutorService pool = Executors.newFixedThreadPool(Plan.tiny().clients());
    try {
      assertTimeoutPreemptively(
          Duration.ofSeconds(60),
          () ->
              assertThatThrownBy(
                      () ->
                          new Rounds(Plan.tiny(), pool)
                              .run(
                                  List.of(UNFENCED, spinning),
                                  List.of(Pair.of(spinning, UNFENCED))))
                  .hasMessageContaining("tpcb/fenced-1000 (fenced)")
                  .hasMessageContaining("no transaction succeeded"));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void theOrderOfPairsRotatesByOnePerRound() {
    List<List<String>> orders = new ArrayList<>();
    for (int round = 0; round < PAIRS.size(); round++) {
      orders.add(Rounds.schedule(PAIRS, round).stream().map(t -> t.pair().id()).toList());
    }
    assertThat(orders)
        .containsExactly(
            List.of("tpcb/fenced-1000", "tpcb/floor-1000", "tpcb/check-vs-floor-1000"),
            List.of("tpcb/floor-1000", "tpcb/check-vs-floor-1000", "tpcb/fenced-1000"),
            List.of("tpcb/check-vs-floor-1000", "tpcb/fenced-1000", "tpcb/floor-1000"));
  }
}
