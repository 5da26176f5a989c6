package dev.fencing.examples.springboot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import dev.fencing.jdbc.FencingExceptions;
import dev.fencing.jdbc.FencingRefusedException;
import dev.fencing.spring.boot.FencingRefusedDataAccessException;
import dev.fencing.testing.TestDatabaseExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Two instances of the application against one PostgreSQL. Instance A's closing job stalls in the
 * auditor (held on a latch) past its lock's {@code lockAtMostFor}; instance B takes the lock over
 * and closes the books; A resumes, and its late writes are refused: nothing of them is in the
 * database.
 */
class TwoInstancesTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private ConfigurableApplicationContext a;
  private ConfigurableApplicationContext b;

  @BeforeEach
  void startTwoInstances() {
    // A's lock must outlast its first write ("closing started") before it stalls, and B's its
    // whole job: at load 40 on 2 cores (CI) a 1 s lock did neither reliably. B never stalls.
    a = start("instance-a", "PT5S");
    b = start("instance-b", "PT10M");
  }

  @AfterEach
  void stop() {
    if (b != null) {
      b.close();
    }
    if (a != null) {
      a.close();
    }
  }

  @Test
  void aStalledJobIsFencedOffOnceTheOtherInstanceTookOver() throws Exception {
    a.getBean(AccountService.class).deposit("7", 100);
    StallingAuditor stall = a.getBean(StallingAuditor.class);
    stall.armed = true; // only instance A's auditor stalls
    CompletableFuture<Void> jobA =
        CompletableFuture.runAsync(a.getBean(ClosingJob.class)::closeBooks);
    assertThat(stall.entered.await(60, TimeUnit.SECONDS)).as("A is in the auditor").isTrue();

    // A holds the lock past lockAtMostFor: its lease expires on the database clock
    JdbcTemplate sql = new JdbcTemplate(db.dataSource());
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                !sql.queryForObject(
                    "SELECT lease_valid FROM fencing.status('ledger')", Boolean.class));
    b.getBean(ClosingJob.class).closeBooks(); // B takes the lock over and closes the books
    assertThat(entries(sql)).contains("closing balance 0 by instance-b");

    stall.resume.countDown();
    Throwable refused = catchThrowable(() -> jobA.get(60, TimeUnit.SECONDS)).getCause();

    assertThat(refused).isInstanceOf(FencingRefusedDataAccessException.class);
    assertThat(FencingExceptions.find(refused)).get().isInstanceOf(FencingRefusedException.class);
    assertThat(entries(sql))
        .containsExactly(
            "closing started by instance-a",
            "closing started by instance-b",
            "closing balance 0 by instance-b");
    assertThat(
            sql.queryForObject(
                "SELECT count(*) FROM fencing.rejection WHERE resource = 'ledger' AND holder = 'instance-a'",
                Long.class))
        .isEqualTo(1);
  }

  @Test
  void depositsFromBothInstancesAreFencedPerAccount() {
    assertThat(a.getBean(AccountService.class).deposit("42", 10)).isEqualTo(10);
    assertThat(b.getBean(AccountService.class).deposit("42", 5)).isEqualTo(15);

    // outside a lease, the protected table refuses the write
    Throwable refused =
        catchThrowable(() -> a.getBean(AccountRepository.class).save(new Account("43")));
    assertThat(refused).isInstanceOf(FencingRefusedDataAccessException.class);
    assertThat(
            new JdbcTemplate(db.dataSource())
                .queryForList("SELECT number FROM account ORDER BY number", String.class))
        .containsExactly("42");
  }

  private static List<String> entries(JdbcTemplate sql) {
    return sql.queryForList(
        "SELECT text || ' by ' || written_by FROM ledger_entry ORDER BY id", String.class);
  }

  private static ConfigurableApplicationContext start(String instance, String lockAtMostFor) {
    return new SpringApplicationBuilder(LedgerApplication.class, StallingAuditor.Config.class)
        .web(WebApplicationType.NONE)
        .run(
            "--spring.datasource.url=" + db.jdbcUrl(),
            "--spring.datasource.username=" + db.migrationUser(),
            "--spring.datasource.password=" + db.password(),
            // the test database's own roles (the cluster is shared; see application.properties)
            "--fencing.migrations.owner-role=" + db.ownerRole(),
            "--fencing.migrations.application-role=" + db.appRole(),
            "--spring.main.banner-mode=off",
            "--fencing.lease.holder=" + instance,
            "--ledger.closing.cron=-",
            "--ledger.closing.lock-at-most-for=" + lockAtMostFor);
  }

  /** An auditor that, once armed, stalls its first call until released. */
  static final class StallingAuditor implements Auditor {
    final CountDownLatch entered = new CountDownLatch(1);
    final CountDownLatch resume = new CountDownLatch(1);
    volatile boolean armed;

    @Override
    public void approve(long total) {
      if (!armed || entered.getCount() == 0) {
        return;
      }
      entered.countDown();
      try {
        if (!resume.await(120, TimeUnit.SECONDS)) {
          throw new IllegalStateException("never resumed");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }

    @Configuration(proxyBeanMethods = false)
    static class Config {
      @Bean
      @Primary
      StallingAuditor stallingAuditor() {
        return new StallingAuditor();
      }
    }
  }
}
