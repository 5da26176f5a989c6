package dev.fencing.spring.boot.autoconfigure.app;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.persistence.autoconfigure.EntityScan;
import org.springframework.context.annotation.Import;
import org.springframework.data.jpa.repository.config.EnableJpaRepositories;

/** A JPA application with Spring Data repositories and Flyway migrations of its own. */
@SpringBootConfiguration
@EnableAutoConfiguration
@EntityScan(basePackageClasses = LedgerEntry.class)
@EnableJpaRepositories(basePackageClasses = LedgerEntryRepository.class)
@Import(JpaLedgerService.class)
public class JpaTestApplication {}
