package dev.fencing.spring.boot.autoconfigure.app.jobs;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.persistence.autoconfigure.EntityScan;
import org.springframework.context.annotation.Import;
import org.springframework.transaction.annotation.EnableTransactionManagement;

/**
 * A JPA application whose transaction advice is declared on the application class and whose
 * ShedLock configuration is a class of its own: Spring then runs ShedLock's method advice inside
 * the transaction's, so {@code unlock()} comes before the commit.
 */
@SpringBootConfiguration
@EnableAutoConfiguration(
    excludeName = "org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration")
@EnableTransactionManagement
@EntityScan(basePackageClasses = Tally.class)
@Import({TallyJob.class, SchedulingConfiguration.class})
public class JobsApplication {}
