package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingRefusedException;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.shedlock.FencedLockProvider;
import dev.fencing.spring.boot.FencingRefusedDataAccessException;
import dev.fencing.spring.boot.autoconfigure.app.jobs.JobsApplication;
import dev.fencing.spring.boot.autoconfigure.app.jobs.TallyJob;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A {@code @Transactional @SchedulerLock} job whose ShedLock advice runs inside the transaction's
 * (transaction management declared on the application class, ShedLock on a configuration of its
 * own, so ShedLock's {@code unlock()} comes before the commit): the lock's token stays bound until
 * the transaction completed, so what Hibernate flushes at the commit is fenced even when no SQL ran
 * while the method did. A job that stalled past {@code lockAtMostFor} while another holder took the
 * lease over has its commit-time insert refused, not applied unchecked; a current holder's passes,
 * and the lock is released and the job's thread unbound after the transaction.
 */
@ExtendWith(PerClassDatabase.class)
@SpringBootTest(
    classes = JobsApplication.class,
    properties = "spring.jpa.hibernate.ddl-auto=create")
@DirtiesContext
class ShedLockTransactionTest {
  @Autowired TallyJob job;
  @Autowired LeaseClient leases;
  @Autowired JdbcTemplate jdbc;
  @Autowired FencedLockProvider locks;

  @DynamicPropertySource
  static void database(DynamicPropertyRegistry registry) {
    PerClassDatabase.register(registry, ShedLockTransactionTest.class);
  }

  @Test
  @SuppressWarnings("try")
  void aStalledJobsWriteAtTheCommitIsRefusedOnceAnotherHolderTookTheLockOver() throws Exception {
    jdbc.update("INSERT INTO tally (id, count) VALUES (2, 0)");
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch resume = new CountDownLatch(1);
    AtomicBoolean unboundAfter = new AtomicBoolean();
    CompletableFuture<Void> zombie =
        CompletableFuture.runAsync(() -> runJob(1, 99, started, resume, unboundAfter));
    assertThat(started.await(2, TimeUnit.MINUTES)).isTrue();

    // the job's lease (lockAtMostFor 2 s) runs out on the database's clock; another holder takes
    // it and writes under its newer token
    try (Lease taken = leases.acquire("ledger", Duration.ofMinutes(5), Duration.ofMinutes(2));
        FencingScope scope = Fencing.bind(taken)) {
      jdbc.update("UPDATE tally SET count = 7 WHERE id = 2");
    }
    resume.countDown();

    assertThat(zombie)
        .failsWithin(Duration.ofMinutes(2))
        .withThrowableThat()
        .havingCause()
        .isInstanceOf(FencingRefusedDataAccessException.class)
        .havingCause()
        .isInstanceOf(FencingRefusedException.class);
    assertThat(jdbc.queryForObject("SELECT count(*) FROM tally WHERE id = 1", Long.class)).isZero();
    assertThat(unboundAfter).as("the job's thread is unbound after the transaction").isTrue();
    assertThat(locks.heldLeases()).isEmpty();
  }

  @Test
  void theCurrentHoldersCommitTimeWritePassesAndTheLockIsReleasedAfterIt() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch resume = new CountDownLatch(0);
    AtomicBoolean unboundAfter = new AtomicBoolean();
    CompletableFuture.runAsync(() -> runJob(3, 42, started, resume, unboundAfter))
        .get(2, TimeUnit.MINUTES);
    assertThat(jdbc.queryForObject("SELECT count FROM tally WHERE id = 3", Long.class))
        .isEqualTo(42);
    assertThat(unboundAfter).as("the job's thread is unbound after the transaction").isTrue();
    assertThat(locks.heldLeases()).isEmpty();
    try (Lease next = leases.tryAcquire("ledger", Duration.ofMinutes(1)).orElseThrow()) {
      assertThat(next.resource()).isEqualTo("ledger"); // the job's lease was released
    }
  }

  /** Runs the job; records whether the thread had no token bound afterwards. */
  private void runJob(
      long id, long count, CountDownLatch started, CountDownLatch resume, AtomicBoolean unbound) {
    try {
      if (resume.getCount() == 0) {
        job.countUnderALongLock(id, count);
      } else {
        job.count(id, count, started, resume);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } finally {
      unbound.set(Fencing.current().isEmpty());
    }
  }
}
