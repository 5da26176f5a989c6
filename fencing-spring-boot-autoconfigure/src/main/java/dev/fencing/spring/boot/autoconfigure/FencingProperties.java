package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.jdbc.FencingToken;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.ConstructorBinding;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Configuration of fencing in a Spring Boot application, prefix {@code fencing}. Every value is
 * checked when it is bound: a bad one fails start-up with a message naming the property.
 *
 * @param enabled whether fencing is configured at all
 * @param schema the schema of the fence's objects: a lower-case SQL identifier
 * @param migrations how the fence's schema is brought up to date at start-up
 * @param datasource how the application's {@code DataSource} beans are fenced
 * @param lease defaults of the leases this application takes
 * @param shedlock the ShedLock lock provider backed by leases
 * @param metrics the fence's Micrometer meters
 */
@ConfigurationProperties("fencing")
public record FencingProperties(
    @DefaultValue("true") boolean enabled,
    @DefaultValue("fencing") String schema,
    @DefaultValue Migrations migrations,
    @DefaultValue DataSourceFencing datasource,
    @DefaultValue Lease lease,
    @DefaultValue ShedLock shedlock,
    @DefaultValue Metrics metrics) {

  private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]{0,62}");
  private static final Duration MIN_TTL = Duration.ofMillis(1);
  private static final Duration MAX_TTL = Duration.ofDays(7);
  private static final Duration MIN_HANDOVER = Duration.ofMillis(1);
  private static final Duration MAX_HANDOVER = Duration.ofHours(1);

  /**
   * Checks the schema name.
   *
   * @param enabled see {@link #enabled()}
   * @param schema see {@link #schema()}
   * @param migrations see {@link #migrations()}
   * @param datasource see {@link #datasource()}
   * @param lease see {@link #lease()}
   * @param shedlock see {@link #shedlock()}
   * @param metrics see {@link #metrics()}
   * @throws IllegalArgumentException naming the property of a bad value
   */
  public FencingProperties {
    identifier("fencing.schema", schema);
  }

  /**
   * How the fence's schema is brought up to date at start-up, prefix {@code fencing.migrations}.
   *
   * @param migrate true: apply the fence's pending migrations at start-up (own Flyway history table
   *     in the fence's schema, before JPA and before the application's own Flyway); false: only
   *     validate them, and fail start-up if the schema is missing, behind or was changed by hand
   *     (deployments that migrate in a pipeline step with the migrations CLI)
   * @param applicationRole the role allowed to execute the fence's functions (migration
   *     placeholder)
   * @param ownerRole the role that owns the fence's objects (migration placeholder)
   */
  public record Migrations(
      @DefaultValue("true") boolean migrate,
      @DefaultValue("fencing_app") String applicationRole,
      @DefaultValue("fencing_owner") String ownerRole) {

    /**
     * Checks the role names.
     *
     * @param migrate see {@link #migrate()}
     * @param applicationRole see {@link #applicationRole()}
     * @param ownerRole see {@link #ownerRole()}
     * @throws IllegalArgumentException naming the property of a bad value
     */
    public Migrations {
      identifier("fencing.migrations.application-role", applicationRole);
      identifier("fencing.migrations.owner-role", ownerRole);
      if (applicationRole.equals(ownerRole)) {
        throw new IllegalArgumentException(
            "fencing.migrations.application-role and fencing.migrations.owner-role must differ,"
                + " both are '"
                + ownerRole
                + "'");
      }
    }
  }

  /**
   * How the application's {@code DataSource} beans are fenced, prefix {@code fencing.datasource}.
   *
   * @param wrap whether every {@code DataSource} bean is wrapped in a {@code FencedDataSource}
   * @param exclude names of {@code DataSource} beans not to wrap, and of beans ({@code
   *     JdbcTemplate}, transaction managers) allowed to use a {@code DataSource} that is not fenced
   * @param requireToken refuse every write made with no token bound ({@code
   *     MissingFencingTokenException}); the application's own Flyway migrates through the unfenced
   *     pool, but Hibernate's {@code ddl-auto} and {@code spring.sql.init} scripts are refused
   * @param recordRejections record refusals in the fence's rejection log
   * @param resources which resources live in the database of each {@code DataSource} bean, by bean
   *     name ({@code FencedDataSource.Builder#resources}): resource names, or name prefixes ending
   *     in {@code *}; tokens bound for other resources are not checked, carried or required by that
   *     bean's connections. A bean without an entry checks every resource bound
   */
  public record DataSourceFencing(
      @DefaultValue("true") boolean wrap,
      @DefaultValue List<String> exclude,
      @DefaultValue("false") boolean requireToken,
      @DefaultValue("true") boolean recordRejections,
      @DefaultValue Map<String, List<String>> resources) {

    /**
     * Checks the excluded bean names and the resources of each bean.
     *
     * @param wrap see {@link #wrap()}
     * @param exclude see {@link #exclude()}
     * @param requireToken see {@link #requireToken()}
     * @param recordRejections see {@link #recordRejections()}
     * @param resources see {@link #resources()}
     * @throws IllegalArgumentException naming the property of a bad value
     */
    @ConstructorBinding
    public DataSourceFencing {
      exclude = List.copyOf(exclude);
      for (int i = 0; i < exclude.size(); i++) {
        if (exclude.get(i).isBlank()) {
          throw new IllegalArgumentException(
              "fencing.datasource.exclude[" + i + "] must be a bean name, was blank");
        }
      }
      Map<String, List<String>> placed = new LinkedHashMap<>();
      for (Map.Entry<String, List<String>> bean : resources.entrySet()) {
        String property = "fencing.datasource.resources." + bean.getKey();
        if (exclude.contains(bean.getKey())) {
          throw new IllegalArgumentException(
              property + ": the bean is not fenced (fencing.datasource.exclude)");
        }
        if (bean.getValue().isEmpty()) {
          throw new IllegalArgumentException(
              property + " must list resource names or prefixes ending in *, was empty");
        }
        for (int i = 0; i < bean.getValue().size(); i++) {
          ResourcePlacement.check(property + "[" + i + "]", bean.getValue().get(i));
        }
        placed.put(bean.getKey(), List.copyOf(bean.getValue()));
      }
      resources = Collections.unmodifiableMap(placed);
    }

    /**
     * Every resource in the database of every bean (the configuration before {@code resources}).
     *
     * @param wrap see {@link #wrap()}
     * @param exclude see {@link #exclude()}
     * @param requireToken see {@link #requireToken()}
     * @param recordRejections see {@link #recordRejections()}
     */
    public DataSourceFencing(
        boolean wrap, List<String> exclude, boolean requireToken, boolean recordRejections) {
      this(wrap, exclude, requireToken, recordRejections, Map.of());
    }
  }

  /**
   * Defaults of the leases this application takes ({@code @WithLease}, ShedLock), prefix {@code
   * fencing.lease}.
   *
   * @param holder who holds the leases, as recorded in the database: 1 to 200 characters, no
   *     control characters; unset: {@code hostname/pid/random}
   * @param ttl how long a lease is granted at each acquisition and renewal, 1 ms to 7 days
   * @param maxWait how long a {@code @WithLease(whenHeld = WAIT)} method waits for the lease, 0 to
   *     7 days
   * @param handoverTimeout how long an acquisition waits for the previous holder's fenced
   *     transactions to end (then {@code ZF007}), 1 ms to 1 hour
   * @param keepAlive renew {@code @WithLease} leases in the background while the method runs
   *     (ShedLock's locks are never kept alive: {@code lockAtMostFor} is their limit)
   * @param renewFraction with keep-alive, renew every {@code ttl} times this, 0.001 to 0.5
   */
  public record Lease(
      @Nullable String holder,
      @DefaultValue("30s") Duration ttl,
      @DefaultValue("10s") Duration maxWait,
      @DefaultValue("5s") Duration handoverTimeout,
      @DefaultValue("true") boolean keepAlive,
      @DefaultValue("0.3333333333333333") double renewFraction) {

    /**
     * Checks every value.
     *
     * @param holder see {@link #holder()}
     * @param ttl see {@link #ttl()}
     * @param maxWait see {@link #maxWait()}
     * @param handoverTimeout see {@link #handoverTimeout()}
     * @param keepAlive see {@link #keepAlive()}
     * @param renewFraction see {@link #renewFraction()}
     * @throws IllegalArgumentException naming the property of a bad value
     */
    public Lease {
      if (holder != null
          && (holder.isEmpty()
              || holder.length() > 200
              || holder.codePoints().anyMatch(Character::isISOControl))) {
        throw new IllegalArgumentException(
            "fencing.lease.holder must be 1 to 200 characters without control characters, was '"
                + holder
                + "'");
      }
      range("fencing.lease.ttl", ttl, MIN_TTL, MAX_TTL, "1ms and 7d");
      range("fencing.lease.max-wait", maxWait, Duration.ZERO, MAX_TTL, "0 and 7d");
      range(
          "fencing.lease.handover-timeout",
          handoverTimeout,
          MIN_HANDOVER,
          MAX_HANDOVER,
          "1ms and 1h");
      if (!(renewFraction >= 0.001 && renewFraction <= 0.5)) {
        // LeaseClient.Builder's range (B138)
        throw new IllegalArgumentException(
            "fencing.lease.renew-fraction must be between 0.001 and 0.5, was " + renewFraction);
      }
    }
  }

  /**
   * The ShedLock {@code LockProvider} backed by leases, prefix {@code fencing.shedlock}; used when
   * ShedLock is on the classpath and the application defines no {@code LockProvider} of its own.
   *
   * @param enabled whether the fenced lock provider is configured
   * @param resourcePrefix put before each lock name to make the fenced resource's name (empty: the
   *     lock {@code "ledger"} fences the resource {@code "ledger"})
   */
  public record ShedLock(
      @DefaultValue("true") boolean enabled, @DefaultValue("") String resourcePrefix) {

    /**
     * Checks the prefix.
     *
     * @param enabled see {@link #enabled()}
     * @param resourcePrefix see {@link #resourcePrefix()}
     * @throws IllegalArgumentException naming the property of a bad value
     */
    public ShedLock {
      if (!resourcePrefix.isEmpty()) {
        try {
          FencingToken.requireValidResource(resourcePrefix);
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(
              "fencing.shedlock.resource-prefix: "
                  + e.getMessage()
                  + ", was '"
                  + resourcePrefix
                  + "'",
              e);
        }
        if (resourcePrefix.length() > 100) {
          throw new IllegalArgumentException(
              "fencing.shedlock.resource-prefix must be at most 100 characters, was "
                  + resourcePrefix.length());
        }
      }
    }
  }

  /**
   * The fence's Micrometer meters ({@code fencing.checks}, {@code fencing.advances}, {@code
   * fencing.refusals}, {@code fencing.check.latency}), prefix {@code fencing.metrics}.
   *
   * @param enabled whether they are registered with the application's {@code MeterRegistry}
   */
  public record Metrics(@DefaultValue("true") boolean enabled) {}

  private static void identifier(String property, String value) {
    if (!IDENTIFIER.matcher(value).matches()) {
      throw new IllegalArgumentException(
          property
              + " must be a lower-case SQL identifier of at most 63 characters ([a-z_][a-z0-9_]*),"
              + " was '"
              + value
              + "'");
    }
  }

  private static void range(
      String property, Duration value, Duration min, Duration max, String bounds) {
    if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
      throw new IllegalArgumentException(
          property + " must be between " + bounds + ", was " + value);
    }
  }
}
