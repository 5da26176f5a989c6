package dev.fencing.examples.springboot;

import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * A ledger kept by several instances of one application: deposits to accounts ({@link
 * AccountService}, {@code @WithLease} per account) and a nightly closing job that only one instance
 * may run ({@link ClosingJob}, {@code @Scheduled} + {@code @SchedulerLock}). With
 * fencing-spring-boot-starter on the classpath, every write to a {@code @Fenced} entity carries the
 * token of the lease it was made under, and PostgreSQL refuses it once another instance took the
 * lease over.
 */
@SpringBootApplication
@EnableScheduling
@EnableSchedulerLock(defaultLockAtMostFor = "PT10M")
public class LedgerApplication {
  public static void main(String[] args) {
    SpringApplication.run(LedgerApplication.class, args);
  }
}
