package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.migrations.FencingMigrationException;
import dev.fencing.migrations.FencingMigrations;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.InitializingBean;

/**
 * Brings the fence's schema up to date when the application starts: its own Flyway instance and
 * history table ({@link FencingMigrations}), never a {@code Flyway} bean (that would switch the
 * application's own {@code spring.flyway.*} migrations off). Detected as a database initializer
 * ({@link FencingDatabaseInitializerDetector}), so JPA, {@code JdbcTemplate} and the application's
 * own Flyway wait for it. With {@code fencing.migrations.migrate=false} it only validates, and
 * start-up fails if the fence is missing, behind or was changed by hand.
 */
final class FencingSchemaInitializer implements InitializingBean {
  private static final Logger LOG = LoggerFactory.getLogger(FencingSchemaInitializer.class);

  private final FencingMigrations migrations;
  private final String schema;
  private final boolean migrate;

  FencingSchemaInitializer(DataSource pool, FencingProperties properties) {
    this.schema = properties.schema();
    this.migrate = properties.migrations().migrate();
    this.migrations =
        FencingMigrations.builder(pool)
            .schema(properties.schema())
            .applicationRole(properties.migrations().applicationRole())
            .ownerRole(properties.migrations().ownerRole())
            .build();
  }

  @Override
  public void afterPropertiesSet() {
    if (migrate) {
      int applied = migrations.migrate();
      LOG.info("Fencing schema {}: {} migration(s) applied", schema, applied);
      return;
    }
    try {
      migrations.validate();
    } catch (FencingMigrationException e) {
      throw new IllegalStateException(
          "fencing.migrations.migrate=false, so the fence's schema '"
              + schema
              + "' must have been migrated before start-up (java -jar fencing-migrations-cli.jar"
              + " migrate), but it is not valid: "
              + e.getMessage(),
          e);
    }
    LOG.info("Fencing schema {} is valid", schema);
  }
}
