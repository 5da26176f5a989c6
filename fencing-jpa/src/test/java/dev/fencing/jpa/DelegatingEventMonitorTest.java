package dev.fencing.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import org.hibernate.event.monitor.internal.EmptyEventMonitor;
import org.junit.jupiter.api.Test;

/**
 * fencing-jpa's monitor passes what it does not handle to any other monitor, but never to itself or
 * another of its own kind ({@link DelegatingEventMonitor#delegateTo}).
 */
class DelegatingEventMonitorTest {
  @Test
  void fencingJpasMonitorRefusesToDelegateToItselfOrAnotherOfItsKind() {
    FencingEventMonitor ours = new FencingEventMonitor();
    EmptyEventMonitor before = new EmptyEventMonitor();
    ours.delegateTo(before);

    assertThat(catchThrowable(() -> ours.delegateTo(ours)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("cannot delegate to another " + ours);
    FencingEventMonitor another = new FencingEventMonitor();
    assertThat(catchThrowable(() -> ours.delegateTo(another)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("cannot delegate to another " + another);
    assertThat(ours.delegate()).as("unchanged by a refusal").isSameAs(before);

    // another library's monitor, whatever it extends, is a delegate like any other
    ForeignEventMonitor foreign = new ForeignEventMonitor();
    ours.delegateTo(foreign);
    assertThat(ours.delegate()).isSameAs(foreign);
  }
}
