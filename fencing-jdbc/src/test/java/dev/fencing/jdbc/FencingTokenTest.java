package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** FencingToken's written-out hashCode keeps the record's contract. */
class FencingTokenTest {
  @Test
  void equalTokensHashAlikeAndSetsFindThem() {
    FencingToken a = FencingToken.of("ledger", 42);
    FencingToken same = FencingToken.of(new String("ledger".toCharArray()), 42);
    assertThat(same).isEqualTo(a);
    assertThat(same.hashCode()).isEqualTo(a.hashCode());

    Set<FencingToken> set = new HashSet<>();
    set.add(a);
    assertThat(set).contains(same);
    assertThat(set).doesNotContain(FencingToken.of("ledger", 43), FencingToken.of("ledger2", 42));
    assertThat(FencingToken.of("ledger", 43).hashCode()).isNotEqualTo(a.hashCode());
    assertThat(FencingToken.of("ledgeR", 42).hashCode()).isNotEqualTo(a.hashCode());
  }
}
