package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.jdbc.Lease;
import dev.fencing.migrations.FencingMigrationException;
import dev.fencing.migrations.FencingMigrations;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Health contributor {@code fencing}: DOWN when the fence's schema is missing, behind or was
 * changed by hand ({@link FencingMigrations#validate()}); its details list the leases this instance
 * holds right now ({@code @WithLease} methods and ShedLock jobs).
 */
final class FencingHealthIndicator extends AbstractHealthIndicator {
  private final FencingMigrations migrations;
  private final String schema;
  private final Supplier<List<Lease>> leases;

  FencingHealthIndicator(
      FencingMigrations migrations, String schema, Supplier<List<Lease>> leases) {
    super("Fencing health check failed");
    this.migrations = migrations;
    this.schema = schema;
    this.leases = leases;
  }

  @Override
  protected void doHealthCheck(Health.Builder builder) {
    builder.withDetail("schema", schema).withDetail("leases", describe(leases.get()));
    try {
      migrations.validate();
      builder.up();
    } catch (FencingMigrationException e) {
      builder.down().withDetail("error", e.getMessage());
    }
  }

  private static List<Map<String, Object>> describe(List<Lease> held) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (Lease lease : held) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("resource", lease.resource());
      m.put("token", lease.token().value());
      m.put("holder", lease.holder());
      m.put("expiresAt", lease.expiresAt().toString());
      m.put("lost", lease.isLost());
      out.add(m);
    }
    return out;
  }
}
