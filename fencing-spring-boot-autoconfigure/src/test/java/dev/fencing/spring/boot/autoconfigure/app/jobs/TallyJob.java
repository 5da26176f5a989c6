package dev.fencing.spring.boot.autoconfigure.app.jobs;

import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.springframework.transaction.annotation.Transactional;

/**
 * A transactional ShedLock job whose only write is a persist that Hibernate flushes at the commit:
 * no SQL runs while the method does.
 */
public class TallyJob {
  @PersistenceContext private EntityManager em;

  /** Signals {@code started}, waits for {@code resume}, then persists a tally (assigned id). */
  @Transactional
  @SchedulerLock(name = "ledger", lockAtMostFor = "PT2S")
  public void count(long id, long count, CountDownLatch started, CountDownLatch resume)
      throws InterruptedException {
    started.countDown();
    if (!resume.await(2, TimeUnit.MINUTES)) {
      throw new IllegalStateException("never resumed");
    }
    em.persist(new Tally(id, count));
  }

  /** Persists a tally under a lock that outlasts the test. */
  @Transactional
  @SchedulerLock(name = "ledger", lockAtMostFor = "PT5M")
  public void countUnderALongLock(long id, long count) {
    em.persist(new Tally(id, count));
  }
}
