package dev.fencing.spring.boot.autoconfigure;

import java.util.Set;
import org.springframework.boot.sql.init.dependency.AbstractBeansOfTypeDatabaseInitializerDetector;

/**
 * Tells Boot that {@link FencingSchemaInitializer} initializes the database, before every other
 * initializer (the application's Flyway or Liquibase, {@code spring.sql.init} scripts, Hibernate's
 * schema generation), so their migrations may use the fence (e.g. {@code fencing.protect}) and
 * everything that depends on database initialization (JPA, {@code JdbcTemplate}) waits for it.
 * Registered in {@code META-INF/spring.factories}.
 */
final class FencingDatabaseInitializerDetector
    extends AbstractBeansOfTypeDatabaseInitializerDetector {
  /** Before Flyway (0) and its initializer (1), Liquibase, scripts and JPA. */
  static final int ORDER = -100;

  @Override
  protected Set<Class<?>> getDatabaseInitializerBeanTypes() {
    return Set.of(FencingSchemaInitializer.class);
  }

  @Override
  public int getOrder() {
    return ORDER;
  }
}
