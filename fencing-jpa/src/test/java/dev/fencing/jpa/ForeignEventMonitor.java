package dev.fencing.jpa;

import java.util.concurrent.atomic.AtomicInteger;
import org.hibernate.event.monitor.spi.DiagnosticEvent;
import org.jspecify.annotations.Nullable;

/**
 * Another library's {@code EventMonitor} (as hibernate-jfr's would be): a no-op (every event goes
 * to {@link DelegatingEventMonitor}'s no-op delegate) that counts the sessions it saw opened.
 * {@link EventMonitorTest} lists it for Hibernate's service loading, ahead of fencing-jpa's or
 * after it.
 */
public final class ForeignEventMonitor extends DelegatingEventMonitor {
  static final AtomicInteger SESSIONS_OPENED = new AtomicInteger();

  /** Called by service loading. */
  public ForeignEventMonitor() {}

  @Override
  public @Nullable DiagnosticEvent beginSessionOpenEvent() {
    SESSIONS_OPENED.incrementAndGet();
    return super.beginSessionOpenEvent();
  }
}
