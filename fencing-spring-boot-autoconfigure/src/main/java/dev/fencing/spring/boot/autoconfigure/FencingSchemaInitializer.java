package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.migrations.FencingMigrationException;
import dev.fencing.migrations.FencingMigrations;
import java.sql.SQLException;
import java.util.Locale;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
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
 *
 * <p>A first migration refuses roles that already serve another database of the cluster (roles are
 * cluster-wide); start-up then fails naming the two properties that give the application roles of
 * its own.
 */
final class FencingSchemaInitializer implements InitializingBean {
  private static final Logger LOG = LoggerFactory.getLogger(FencingSchemaInitializer.class);

  /** What the migrations' refusal of shared roles says before the roles and their databases. */
  private static final String SHARED = "already serve another database: ";

  private static final String INSUFFICIENT_PRIVILEGE = "42501";

  private final FencingMigrations migrations;
  private final String schema;
  private final boolean migrate;
  private final String ownerRole;
  private final String applicationRole;
  private final @Nullable String applicationName;

  FencingSchemaInitializer(
      DataSource pool, FencingProperties properties, @Nullable String applicationName) {
    this.schema = properties.schema();
    this.migrate = properties.migrations().migrate();
    this.ownerRole = properties.migrations().ownerRole();
    this.applicationRole = properties.migrations().applicationRole();
    this.applicationName = applicationName;
    this.migrations =
        FencingMigrations.builder(pool)
            .schema(properties.schema())
            .applicationRole(applicationRole)
            .ownerRole(ownerRole)
            .build();
  }

  @Override
  public void afterPropertiesSet() {
    if (migrate) {
      int applied;
      try {
        applied = migrations.migrate();
      } catch (FencingMigrationException e) {
        String served = servedElsewhere(e);
        if (served == null) {
          throw e;
        }
        throw sharedRoles(served, e);
      }
      LOG.info("Fencing schema {}: {} migration(s) applied", schema, applied);
      return;
    }
    try {
      migrations.validate();
    } catch (FencingMigrationException e) {
      throw new StartUpException(
          "fencing.migrations.migrate=false, so the fence's schema '"
              + schema
              + "' must have been migrated before start-up (java -jar fencing-migrations-cli.jar"
              + " migrate), but it is not valid: "
              + e.getMessage(),
          "Migrate the fence before starting the application (java -jar"
              + " fencing-migrations-cli.jar migrate, with the schema and roles of fencing.schema"
              + " and fencing.migrations.*), or let it migrate at start-up:"
              + " fencing.migrations.migrate=true",
          e);
    }
    LOG.info("Fencing schema {} is valid", schema);
  }

  /** The start-up failure for roles that serve another database: what to set, and to what. */
  private StartUpException sharedRoles(String served, FencingMigrationException cause) {
    boolean defaults =
        ownerRole.equals(FencingMigrations.DEFAULT_OWNER_ROLE)
            && applicationRole.equals(FencingMigrations.DEFAULT_APPLICATION_ROLE);
    String prefix = rolePrefix(applicationName);
    String description =
        "fencing migrations refused at start-up, nothing was created: the fence's roles "
            + ownerRole
            + "/"
            + applicationRole
            + " (fencing.migrations.owner-role/fencing.migrations.application-role"
            + (defaults ? ", the defaults, which suit only the first application of a cluster" : "")
            + ") already serve another database of this PostgreSQL cluster: "
            + served
            + ". Roles are cluster-wide, and shared ones would let one application's logins call"
            + " the other's fence and its deployer own it.";
    String action =
        "Give this application two roles of its own: set fencing.migrations.owner-role and"
            + " fencing.migrations.application-role, e.g. fencing.migrations.owner-role="
            + prefix
            + "_fencing_owner and fencing.migrations.application-role="
            + prefix
            + "_fencing_app";
    return new StartUpException(description, action, cause);
  }

  /**
   * The roles and databases named by the migrations' refusal of roles that serve another database
   * (SQLSTATE 42501, raised by their preflight before anything is created), or null for any other
   * failure.
   */
  static @Nullable String servedElsewhere(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof SQLException e
          && INSUFFICIENT_PRIVILEGE.equals(e.getSQLState())
          && e.getMessage() != null
          && e.getMessage().contains(SHARED)) {
        String rest = e.getMessage().substring(e.getMessage().indexOf(SHARED) + SHARED.length());
        int end = rest.indexOf('\n');
        return (end < 0 ? rest : rest.substring(0, end)).strip();
      }
    }
    return null;
  }

  /** A role-name prefix made from {@code spring.application.name}, or {@code myapp}. */
  static String rolePrefix(@Nullable String applicationName) {
    String name =
        applicationName == null
            ? ""
            : applicationName.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_]+", "_");
    name = name.replaceAll("^[^a-z_]+", "").replaceAll("_+$", "");
    if (name.length() > 40) {
      name = name.substring(0, 40).replaceAll("_+$", "");
    }
    return name.isEmpty() ? "myapp" : name;
  }

  /**
   * The fence's schema stopped the start-up: reported by {@link FencingStartUpFailureAnalyzer} as
   * Spring Boot reports failed start-ups (what happened, then what to do).
   */
  static final class StartUpException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    private final String description;
    private final String action;

    StartUpException(String description, String action, @Nullable Throwable cause) {
      super(description + " " + action, cause);
      this.description = description;
      this.action = action;
    }

    String description() {
      return description;
    }

    String action() {
      return action;
    }
  }
}
