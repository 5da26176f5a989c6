package dev.fencing.examples.springboot;

import dev.fencing.jdbc.LeaseClient;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * Closes the books: one instance at a time (ShedLock), and fenced: the lock is the lease on {@code
 * ledger}, so if this instance stalls past {@code lockAtMostFor} (a GC pause, a hung auditor) and
 * another instance takes over, the stalled run's remaining writes are refused by PostgreSQL.
 */
@Component
public class ClosingJob {
  private final Bookkeeper bookkeeper;
  private final Auditor auditor;
  private final String instance;

  public ClosingJob(Bookkeeper bookkeeper, Auditor auditor, LeaseClient leases) {
    this.bookkeeper = bookkeeper;
    this.auditor = auditor;
    this.instance = leases.holder();
  }

  @Scheduled(cron = "${ledger.closing.cron}")
  @SchedulerLock(name = "ledger", lockAtMostFor = "${ledger.closing.lock-at-most-for}")
  public void closeBooks() {
    bookkeeper.record("closing started", 0, instance);
    long total = bookkeeper.total();
    auditor.approve(total);
    bookkeeper.record("closing balance " + total, 0, instance);
  }
}
