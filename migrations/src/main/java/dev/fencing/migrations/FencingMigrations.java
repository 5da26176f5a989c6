package dev.fencing.migrations;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.output.ValidateResult;

/**
 * Applies and checks the fence's schema: the token sequence, the resource, lease, issuance and
 * rejection tables, and the SQL functions that are the only way to touch them.
 *
 * <p>The migrations live in {@value #LOCATION}, in their own schema (default {@value
 * #DEFAULT_SCHEMA}) with their own history table ({@value #HISTORY_TABLE}), so they coexist with an
 * application's own Flyway migrations. They create two {@code NOLOGIN} roles: an owner role the
 * {@code SECURITY DEFINER} functions run as, and an application role allowed to execute the API
 * functions only; grant the application role to your application's login role.
 *
 * <p>The migrating user need not be a superuser (managed PostgreSQL has none). It needs {@code
 * CREATE} on the database (owning it is enough) unless the schema exists, and either {@code
 * CREATEROLE} or the two roles created beforehand with the owner role granted to it. Before the
 * first pending migration, {@link #migrate()} checks all of this in a transaction it rolls back
 * (the same SQL that the Flyway callback {@code beforeEachMigrate.sql} then runs for real): a
 * missing privilege is named, with the statement that grants it, before anything is created. Roles
 * that already serve another database of the cluster are refused on a first migration: give each
 * application its own ({@link Builder#ownerRole}, {@link Builder#applicationRole}). What only a
 * superuser can create (the event trigger that protects partitions attached later) is skipped and
 * listed by {@link #absentOptionalFeatures()}.
 *
 * <pre>{@code
 * FencingMigrations.migrate(dataSource);            // defaults
 * FencingMigrations.builder(dataSource).schema("locks").build().migrate();
 * }</pre>
 */
public final class FencingMigrations {
  /** Where the migrations are on the classpath. */
  public static final String LOCATION = "classpath:db/fencing";

  /** The schema used unless {@link Builder#schema(String)} says otherwise. */
  public static final String DEFAULT_SCHEMA = "fencing";

  /** The Flyway history table of these migrations, in their schema. */
  public static final String HISTORY_TABLE = "fencing_schema_history";

  /** The application role used unless {@link Builder#applicationRole(String)} says otherwise. */
  public static final String DEFAULT_APPLICATION_ROLE = "fencing_app";

  /** The owner role used unless {@link Builder#ownerRole(String)} says otherwise. */
  public static final String DEFAULT_OWNER_ROLE = "fencing_owner";

  /** The event trigger of migration V4, which only a superuser can create. */
  static final String PARTITION_TRIGGER = "fencing_protect_new_partitions";

  private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

  private final DataSource dataSource;
  private final String schema;
  private final String ownerRole;
  private final String applicationRole;
  private final Flyway flyway;

  private FencingMigrations(Builder builder) {
    this.dataSource = builder.dataSource;
    this.schema = builder.schema;
    this.ownerRole = builder.ownerRole;
    this.applicationRole = builder.applicationRole;
    this.flyway =
        Flyway.configure(FencingMigrations.class.getClassLoader())
            .dataSource(builder.dataSource)
            .schemas(builder.schema)
            .defaultSchema(builder.schema)
            .table(HISTORY_TABLE)
            .locations(LOCATION)
            .failOnMissingLocations(true)
            .placeholders(
                Map.of("app_role", builder.applicationRole, "owner_role", builder.ownerRole))
            .load();
  }

  /** Starts a configuration over {@code dataSource}. */
  public static Builder builder(DataSource dataSource) {
    return new Builder(dataSource);
  }

  /** Applies pending migrations with the default schema and roles; returns how many ran. */
  public static int migrate(DataSource dataSource) {
    return builder(dataSource).build().migrate();
  }

  /** {@link #info()} with the default schema and roles. */
  public static List<String> info(DataSource dataSource) {
    return builder(dataSource).build().info();
  }

  /** {@link #validate()} with the default schema and roles. */
  public static List<String> validate(DataSource dataSource) {
    return builder(dataSource).build().validate();
  }

  /**
   * Applies pending migrations; returns how many ran (0 when the schema is up to date).
   *
   * <p>When something is pending, a preflight first checks, in a transaction it rolls back, that
   * the migrating user may create the schema, the roles and every object and hand them to the owner
   * role; a refusal names the missing privilege and leaves the database as it was. What was skipped
   * for want of a superuser: {@link #absentOptionalFeatures()}.
   *
   * @throws FencingMigrationException naming what failed, or the privilege that is missing
   */
  public int migrate() {
    try {
      if (flyway.info().pending().length > 0) {
        Preflight.check(dataSource, schema, ownerRole, applicationRole, HISTORY_TABLE);
      }
      return flyway.migrate().migrationsExecuted;
    } catch (FlywayException e) {
      throw new FencingMigrationException("fencing migrations failed: " + e.getMessage(), e);
    }
  }

  /**
   * What the migrations left out because the migrating user was not a superuser, one sentence each
   * with what to do instead; empty when nothing is missing (or nothing is migrated yet). Today
   * there is one such feature: the event trigger that protects partitions attached to a protected
   * table later (migration V4).
   *
   * @throws FencingMigrationException if the catalog cannot be read
   */
  public List<String> absentOptionalFeatures() {
    try (Connection c = dataSource.getConnection()) {
      return partitionTrigger(c, new ArrayList<>());
    } catch (SQLException e) {
      throw new FencingMigrationException("cannot read schema " + schema + ": " + e, e);
    }
  }

  static boolean exists(Connection c, String sql, String argument) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, argument);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  /** One line per migration: version, description, state and when it was applied. */
  public List<String> info() {
    MigrationInfo[] all;
    try {
      all = flyway.info().all();
    } catch (FlywayException e) {
      throw new FencingMigrationException("cannot read fencing migrations: " + e.getMessage(), e);
    }
    List<String> lines = new ArrayList<>();
    for (MigrationInfo m : all) {
      lines.add(
          String.format(
              "%-4s %-28s %-10s %s",
              m.getVersion() == null ? "R" : m.getVersion().getVersion(),
              m.getDescription(),
              m.getState().getDisplayName(),
              m.getInstalledOn() == null ? "" : m.getInstalledOn().toInstant()));
    }
    return lines;
  }

  /**
   * Checks the applied schema: Flyway's checksums of the applied migrations, that nothing is
   * pending, that no function, table or grant of the schema was changed by hand since the
   * migrations left it, the token sequence's durability settings, and that the partition event
   * trigger, if present, is enabled and calls the fence's function.
   *
   * @return notes, not problems (empty when there is nothing to say): the {@linkplain
   *     #absentOptionalFeatures() optional features that are absent}, and, for token epochs, that
   *     the operator's {@code advance_epoch()} is due (the epoch's counter half used or exhausted)
   *     or that the fence was restored into a new cluster and adopts a new epoch at its next
   *     issuance
   * @throws FencingMigrationException naming every problem found
   */
  public List<String> validate() {
    List<String> problems = new ArrayList<>();
    ValidateResult result;
    try {
      result = flyway.validateWithResult();
    } catch (FlywayException e) {
      throw new FencingMigrationException(
          "cannot validate fencing migrations: " + e.getMessage(), e);
    }
    if (!result.validationSuccessful) {
      result.invalidMigrations.forEach(
          m -> problems.add("migration " + m.version + ": " + m.errorDetails.errorMessage));
      if (result.invalidMigrations.isEmpty() && result.errorDetails != null) {
        problems.add(result.errorDetails.errorMessage);
      }
    }
    List<String> absent = List.of();
    if (problems.isEmpty()) {
      try (Connection c = dataSource.getConnection()) {
        problems.addAll(changedObjects(c));
        problems.addAll(sequenceProblems(c));
        absent = new ArrayList<>(partitionTrigger(c, problems));
        absent.addAll(EpochCheck.notes(c, schema));
      } catch (SQLException e) {
        throw new FencingMigrationException("cannot read schema " + schema + ": " + e, e);
      }
    }
    if (!problems.isEmpty()) {
      throw new FencingMigrationException(
          "fencing schema " + schema + " is not as migrated: " + String.join("; ", problems));
    }
    return absent;
  }

  /**
   * The V4 event trigger: absent (a non-superuser migrated) is a note, returned; present but
   * disabled or calling another function is a problem, added to {@code problems}.
   */
  private List<String> partitionTrigger(Connection c, List<String> problems) throws SQLException {
    String function = schema + ".protect_new_partitions()";
    if (!exists(c, "SELECT FROM pg_catalog.pg_proc WHERE oid = to_regprocedure(?)", function)) {
      return List.of(); // V4 not applied yet
    }
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT evtenabled <> 'D', evtfoid = to_regprocedure(?)"
                + " FROM pg_catalog.pg_event_trigger WHERE evtname = ?")) {
      ps.setString(1, function);
      ps.setString(2, PARTITION_TRIGGER);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return List.of(
              "optional, absent: event trigger "
                  + PARTITION_TRIGGER
                  + " (only a superuser can create it; the migrating user was not one): after"
                  + " creating or attaching a partition of a protected table, run protect() or"
                  + " protect_rows() on the table again, or TRUNCATE of that partition is not"
                  + " refused");
        }
        if (!rs.getBoolean(1)) {
          problems.add("event trigger " + PARTITION_TRIGGER + " is disabled");
        }
        if (!rs.getBoolean(2)) {
          problems.add("event trigger " + PARTITION_TRIGGER + " does not call " + function);
        }
      }
    }
    return List.of();
  }

  private List<String> changedObjects(Connection c) throws SQLException {
    String sql =
        "SELECT coalesce(now_.object, then_.object),"
            + " CASE WHEN then_.object IS NULL THEN 'added'"
            + "      WHEN now_.object IS NULL THEN 'dropped' ELSE 'changed' END"
            + " FROM "
            + schema
            + ".catalog_fingerprint() now_ FULL JOIN "
            + schema
            + ".catalog_checksum then_ ON then_.object = now_.object"
            + " WHERE now_.fingerprint IS DISTINCT FROM then_.fingerprint ORDER BY 1";
    List<String> changed = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(sql);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        changed.add(rs.getString(1) + " was " + rs.getString(2) + " since migration");
      }
    }
    return changed;
  }

  private List<String> sequenceProblems(Connection c) throws SQLException {
    String sql =
        "SELECT s.seqtypid = 'bigint'::regtype, s.seqcache = 1, NOT s.seqcycle,"
            + " cl.relpersistence = 'p'"
            + " FROM pg_catalog.pg_sequence s JOIN pg_catalog.pg_class cl ON cl.oid = s.seqrelid"
            + " WHERE cl.oid = to_regclass(?)";
    List<String> problems = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, schema + ".token_seq");
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          problems.add("token sequence " + schema + ".token_seq is missing");
          return problems;
        }
        String[] names = {"bigint", "CACHE 1", "NO CYCLE", "logged"};
        for (int i = 0; i < names.length; i++) {
          if (!rs.getBoolean(i + 1)) {
            problems.add("token sequence is not " + names[i]);
          }
        }
      }
    }
    return problems;
  }

  /** Immutable configuration of {@link FencingMigrations}; validated when built. */
  public static final class Builder {
    private final DataSource dataSource;
    private String schema = DEFAULT_SCHEMA;
    private String applicationRole = DEFAULT_APPLICATION_ROLE;
    private String ownerRole = DEFAULT_OWNER_ROLE;

    private Builder(DataSource dataSource) {
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    /** The schema of the fence's objects and history table (lower-case SQL identifier). */
    public Builder schema(String schema) {
      this.schema = identifier("schema", schema);
      return this;
    }

    /** The NOLOGIN role allowed to execute the fence's API functions. */
    public Builder applicationRole(String role) {
      this.applicationRole = identifier("applicationRole", role);
      return this;
    }

    /** The NOLOGIN, non-superuser role that owns the fence's objects. */
    public Builder ownerRole(String role) {
      this.ownerRole = identifier("ownerRole", role);
      return this;
    }

    /** Validates the combination and builds. */
    public FencingMigrations build() {
      if (applicationRole.equals(ownerRole)) {
        throw new IllegalArgumentException(
            "applicationRole and ownerRole must differ, both are " + ownerRole);
      }
      return new FencingMigrations(this);
    }

    private static String identifier(String field, String value) {
      Objects.requireNonNull(value, field);
      if (!IDENTIFIER.matcher(value).matches()) {
        throw new IllegalArgumentException(
            field
                + " must be a lower-case SQL identifier of at most 63 characters"
                + " ([a-z_][a-z0-9_]*), was '"
                + value
                + "'");
      }
      return value;
    }
  }
}
