package dev.fencing.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * How {@link TestPostgres} keeps its choice of server for the JVM: a value once, and a failure once
 * (a local server waited for in vain for minutes is not waited for again by every test class).
 */
class OnceTest {
  @Test
  void aValueIsComputedOnce() {
    AtomicInteger calls = new AtomicInteger();
    Once<String> once = new Once<>(() -> "server " + calls.incrementAndGet());

    assertThat(once.get()).isEqualTo("server 1");
    assertThat(once.get()).isEqualTo("server 1");
    assertThat(calls).hasValue(1);
  }

  @Test
  void aFailureIsNotComputedAgainButThrownAgain() {
    AtomicInteger calls = new AtomicInteger();
    IllegalStateException slow = new IllegalStateException("did not answer within 5 minutes");
    Once<String> once =
        new Once<>(
            () -> {
              calls.incrementAndGet();
              throw slow;
            });

    assertThat(catchThrowable(once::get)).isSameAs(slow);
    Throwable again = catchThrowable(once::get);

    assertThat(calls).as("computed (waited for) once").hasValue(1);
    assertThat(again)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("did not answer within 5 minutes")
        .hasCause(slow);
  }
}
