package dev.fencing.testing;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fresh, uniquely named database on the {@linkplain TestPostgres#get() shared test server},
 * dropped again by {@link #close()}.
 *
 * <pre>{@code
 * try (TestDatabase db = TestDatabase.create("lease-client")) {
 *   try (Connection c = db.connect()) { ... }
 * }
 * }</pre>
 *
 * <p>The name is {@code fencing_<hint>_<8 random hex digits>}, where the hint is lower-cased, every
 * character other than {@code [a-z0-9_]} becomes {@code _}, and it is cut to 30 characters.
 *
 * <p>Each database has its own fence roles, {@link #ownerRole()} and {@link #appRole()} (roles are
 * cluster-wide, and the migrations refuse roles that serve another database), dropped by {@link
 * #close()} with the database. Migrate with {@link #migrationDataSource()}: as {@link #user()} (a
 * superuser), or, when {@code fencing.test.migrateAs} / {@code FENCING_TEST_MIGRATE_AS} is {@code
 * deployer}, as a role of its own that is no superuser but owns the database and has {@code
 * CREATEROLE} (managed PostgreSQL's administrator).
 */
public final class TestDatabase implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(TestDatabase.class);
  private static final int MAX_HINT_LENGTH = 30;

  private final TestPostgres server;
  private final String name;
  private final @Nullable String deployer;
  private final Set<String> roles = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean closed = new AtomicBoolean();

  private TestDatabase(TestPostgres server, String name, @Nullable String deployer) {
    this.server = server;
    this.name = name;
    this.deployer = deployer;
  }

  /**
   * Whether tests migrate as a non-superuser deployer: {@code fencing.test.migrateAs} / {@code
   * FENCING_TEST_MIGRATE_AS} is {@code deployer} (else {@code superuser}, the default).
   *
   * @throws IllegalStateException for any other value
   */
  public static boolean migratesAsDeployer() {
    String value = System.getProperty("fencing.test.migrateAs");
    if (value == null || value.isBlank()) {
      value = System.getenv("FENCING_TEST_MIGRATE_AS");
    }
    if (value == null || value.isBlank() || value.trim().equals("superuser")) {
      return false;
    }
    if (value.trim().equals("deployer")) {
      return true;
    }
    throw new IllegalStateException(
        "fencing.test.migrateAs / FENCING_TEST_MIGRATE_AS must be superuser or deployer, was '"
            + value
            + "'");
  }

  /**
   * Creates a new database on the shared test server.
   *
   * @param hint a readable part of the name, e.g. the test class's simple name
   * @throws IllegalStateException if the database cannot be created
   */
  public static TestDatabase create(String hint) {
    TestPostgres server = TestPostgres.get();
    String name =
        "fencing_"
            + sanitize(hint)
            + "_"
            + String.format(Locale.ROOT, "%08x", ThreadLocalRandom.current().nextInt());
    String deployer = migratesAsDeployer() ? name + "_deployer" : null;
    try (Connection admin = server.adminConnection();
        Statement statement = admin.createStatement()) {
      if (deployer != null) {
        statement.execute(
            "CREATE ROLE "
                + quote(deployer)
                + " LOGIN NOSUPERUSER CREATEROLE"
                + (server.password().isEmpty()
                    ? ""
                    : " PASSWORD '" + server.password().replace("'", "''") + "'"));
      }
      // template0: nobody can be connected to it, so concurrent creations never collide
      statement.execute(
          "CREATE DATABASE "
              + quote(name)
              + " TEMPLATE template0"
              + (deployer == null ? "" : " OWNER " + quote(deployer)));
    } catch (SQLException e) {
      throw new IllegalStateException(
          "Could not create database " + name + " on " + server.source(), e);
    }
    LOG.debug("Created database {} on {}", name, server.source());
    return new TestDatabase(server, name, deployer);
  }

  /** This database's fence owner role ({@code <name>_owner}): pass it to the migrations. */
  public String ownerRole() {
    return name + "_owner";
  }

  /** This database's fence application role ({@code <name>_app}): pass it to the migrations. */
  public String appRole() {
    return name + "_app";
  }

  /**
   * A role name of this database's own, {@code <name>_<suffix>}, e.g. for the application's login:
   * {@link #close()} drops it (if it was created) after the database.
   *
   * @param suffix lower-case letters, digits and {@code _}
   */
  public String role(String suffix) {
    if (!suffix.matches("[a-z0-9_]{1,8}")) {
      throw new IllegalArgumentException("role suffix: 1 to 8 of [a-z0-9_], was '" + suffix + "'");
    }
    String role = name + "_" + suffix;
    roles.add(role);
    return role;
  }

  /**
   * Who migrates: {@link #user()}, or the non-superuser deployer when {@link
   * #migratesAsDeployer()}.
   */
  public String migrationUser() {
    return deployer == null ? user() : deployer;
  }

  /** A new, unpooled data source for this database as {@link #migrationUser()}. */
  public DataSource migrationDataSource() {
    PGSimpleDataSource dataSource = new PGSimpleDataSource();
    dataSource.setURL(jdbcUrl());
    dataSource.setUser(migrationUser());
    if (!password().isEmpty()) {
      dataSource.setPassword(password());
    }
    return dataSource;
  }

  /** The database's name. */
  public String name() {
    return name;
  }

  /** JDBC URL of this database, without credentials. */
  public String jdbcUrl() {
    return server.jdbcUrl(name);
  }

  /** The user to connect as: it owns the database and may create roles. */
  public String user() {
    return server.user();
  }

  /** The password of {@link #user()}; empty when none is needed. */
  public String password() {
    return server.password();
  }

  /** A new, unpooled {@link PGSimpleDataSource} for this database as {@link #user()}. */
  public DataSource dataSource() {
    PGSimpleDataSource dataSource = new PGSimpleDataSource();
    dataSource.setURL(jdbcUrl());
    dataSource.setUser(user());
    if (!password().isEmpty()) {
      dataSource.setPassword(password());
    }
    return dataSource;
  }

  /** A new connection to this database as {@link #user()}; the caller closes it. */
  public Connection connect() throws SQLException {
    return server.connect(name, user());
  }

  /**
   * A new connection to this database as another role, e.g. one a privilege test created.
   *
   * <p>It sends {@link #password()} (if any) as that role's password, so it assumes the server
   * trusts local connections (as the local, embedded and most CI servers do) or that the role was
   * given the same password.
   */
  public Connection connect(String role) throws SQLException {
    return server.connect(name, role);
  }

  /**
   * Drops the database, disconnecting whoever is still connected ({@code WITH (FORCE)}), then its
   * roles ({@link #ownerRole()}, {@link #appRole()}, the deployer). Closing twice is harmless.
   *
   * @throws IllegalStateException if the database or a role cannot be dropped
   */
  @Override
  public void close() {
    if (closed.getAndSet(true)) {
      return;
    }
    try (Connection admin = server.adminConnection();
        Statement statement = admin.createStatement()) {
      statement.execute("DROP DATABASE IF EXISTS " + quote(name) + " WITH (FORCE)");
      for (String role : roles) {
        statement.execute("DROP ROLE IF EXISTS " + quote(role));
      }
      statement.execute("DROP ROLE IF EXISTS " + quote(ownerRole()));
      statement.execute("DROP ROLE IF EXISTS " + quote(appRole()));
      if (deployer != null) {
        statement.execute("DROP ROLE IF EXISTS " + quote(deployer));
      }
    } catch (SQLException e) {
      throw new IllegalStateException(
          "Could not drop database " + name + " on " + server.source(), e);
    }
    LOG.debug("Dropped database {} on {}", name, server.source());
  }

  @Override
  public String toString() {
    return "TestDatabase[" + name + " on " + server.source() + "]";
  }

  static String sanitize(String hint) {
    String cleaned = hint.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_]", "_");
    if (cleaned.length() > MAX_HINT_LENGTH) {
      cleaned = cleaned.substring(0, MAX_HINT_LENGTH);
    }
    return cleaned.isEmpty() ? "db" : cleaned;
  }

  private static String quote(String identifier) {
    return '"' + identifier.replace("\"", "\"\"") + '"';
  }
}
