package dev.fencing.testing;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * The PostgreSQL server that every test in this JVM runs against, chosen once, in one place.
 *
 * <p>{@link #get()} chooses the first of these that works, and logs (INFO) which one and why:
 *
 * <ol>
 *   <li>an explicit URL: environment variable {@code FENCING_TEST_JDBC_URL} or system property
 *       {@code fencing.test.jdbcUrl}, with optional {@code FENCING_TEST_USER}/{@code
 *       fencing.test.user} and {@code FENCING_TEST_PASSWORD}/{@code fencing.test.password}. The URL
 *       names an admin database on a server where that user may {@code CREATE DATABASE} and {@code
 *       CREATE ROLE};
 *   <li>the local server at {@code 127.0.0.1:5432} (user {@code postgres}, database {@code
 *       postgres}, no password) if something accepts connections there. Only a refusal (nothing
 *       listens, or the server refuses that user or database) moves on to the next kind; a server
 *       that is slow, starting up or out of connection slots is waited for (up to five minutes) and
 *       then fails the JVM: under load (40 on 2 cores was seen) a slow local server must not
 *       silently turn into another one, say the embedded PostgreSQL 14;
 *   <li>a Testcontainers {@code postgres:15} container, if Docker is available;
 *   <li>an embedded PostgreSQL (zonky) started once for this JVM and stopped by a shutdown hook.
 * </ol>
 *
 * <p>Environment variable {@code FENCING_TEST_SOURCE} or system property {@code
 * fencing.test.source} ({@code auto} (default), {@code url}, {@code local}, {@code testcontainers}
 * or {@code embedded}) restricts the choice to one kind; the JVM then fails if that kind is
 * unavailable.
 *
 * <p>Tests do not normally use this class directly: {@link TestDatabase} and {@link
 * TestDatabaseExtension} create an isolated database on it.
 */
public final class TestPostgres {

  private static final Logger LOG = LoggerFactory.getLogger(TestPostgres.class);

  private static final String LOCAL_HOST = "127.0.0.1";
  private static final int LOCAL_PORT = 5432;
  private static final int LOCAL_TIMEOUT_SECONDS = 2;

  /**
   * How long one login to a local server that accepted the connection may take to answer: long,
   * because one that accepts is there, and a loaded machine (load 40 on 2 cores was seen) answers
   * slowly; giving up sooner would silently pick the embedded PostgreSQL 14 instead.
   */
  private static final int LOCAL_LOGIN_TIMEOUT_SECONDS = 60;

  /** How long a local server that is there but not answering yet is waited for, in all. */
  private static final long LOCAL_PATIENCE_NANOS = TimeUnit.MINUTES.toNanos(5);

  private static final long LOCAL_RETRY_MILLIS = 500;

  /**
   * SQLSTATE classes and codes by which the local server refuses us for good: invalid authorization
   * or no such role (class 28), no such database (3D000), a password wanted that we do not have
   * (pgjdbc's 08004), no CONNECT privilege (42501), a database that allows no connections (55000).
   * Anything else (a timeout, 53300 too many connections, 57P03 starting up) means the server is
   * there and busy.
   */
  private static final List<String> REFUSED_FOR_GOOD =
      List.of("28", "3D000", "08004", "42501", "55000");

  private static final String POSTGRES = "postgres";
  private static final String URL_PREFIX = "jdbc:postgresql://";
  private static final String CONTAINER_IMAGE = "postgres:15";

  /** The choice, made once per JVM: a failure too, so that no later test class waits again. */
  private static final Once<TestPostgres> CHOICE = new Once<>(TestPostgres::choose);

  private final String source;
  private final String serverPrefix;
  private final String urlParameters;
  private final String adminDatabase;
  private final String user;
  private final String password;

  private TestPostgres(
      String source,
      String serverPrefix,
      String urlParameters,
      String adminDatabase,
      String user,
      String password) {
    this.source = source;
    this.serverPrefix = serverPrefix;
    this.urlParameters = urlParameters;
    this.adminDatabase = adminDatabase;
    this.user = user;
    this.password = password;
  }

  /**
   * Returns the server for this JVM, choosing (and if need be starting) it on the first call.
   *
   * @throws IllegalStateException if no server could be had, then on every later call too (at once:
   *     a local server waited for in vain is not waited for again by the next test class)
   */
  public static TestPostgres get() {
    return CHOICE.get();
  }

  /**
   * JDBC URL of {@code database} on this server, without credentials (see {@link #user()} and
   * {@link #password()}); parameters given in an explicit URL are kept.
   */
  public String jdbcUrl(String database) {
    return serverPrefix + database + urlParameters;
  }

  /** A user that may create databases and roles on this server. */
  public String user() {
    return user;
  }

  /** The password of {@link #user()}; empty when none is needed. */
  public String password() {
    return password;
  }

  /** Which server was chosen, for logs and messages, e.g. {@code "local 127.0.0.1:5432"}. */
  public String source() {
    return source;
  }

  /** A new connection, as {@link #user()}, to the admin database; the caller closes it. */
  public Connection adminConnection() throws SQLException {
    return connect(adminDatabase, user);
  }

  /** A new connection to {@code database} as {@code role}, with this server's password if any. */
  Connection connect(String database, String role) throws SQLException {
    return DriverManager.getConnection(jdbcUrl(database), credentials(role, password));
  }

  @Override
  public String toString() {
    return "TestPostgres[" + source + "]";
  }

  private static Properties credentials(String user, String password) {
    Properties properties = new Properties();
    properties.setProperty("user", user);
    if (!password.isEmpty()) {
      properties.setProperty("password", password);
    }
    return properties;
  }

  private static @Nullable String setting(String environmentVariable, String systemProperty) {
    String value = System.getProperty(systemProperty);
    if (value == null || value.isBlank()) {
      value = System.getenv(environmentVariable);
    }
    return value == null || value.isBlank() ? null : value.trim();
  }

  private static TestPostgres choose() {
    String wanted = setting("FENCING_TEST_SOURCE", "fencing.test.source");
    String only = wanted == null ? "auto" : wanted.toLowerCase(Locale.ROOT);
    if (!List.of("auto", "url", "local", "testcontainers", "embedded").contains(only)) {
      throw new IllegalStateException(
          "fencing.test.source / FENCING_TEST_SOURCE must be one of auto, url, local,"
              + " testcontainers, embedded; got '"
              + wanted
              + "'");
    }
    List<String> reasons = new ArrayList<>();
    if (!only.equals("auto")) {
      reasons.add("restricted to '" + only + "' by fencing.test.source / FENCING_TEST_SOURCE");
    }
    TestPostgres chosen = null;
    String url = setting("FENCING_TEST_JDBC_URL", "fencing.test.jdbcUrl");
    if (url != null && (only.equals("auto") || only.equals("url"))) {
      chosen = explicit(url);
      reasons.add("FENCING_TEST_JDBC_URL / fencing.test.jdbcUrl is set");
    } else if (url != null) {
      reasons.add("explicit URL ignored");
    } else {
      reasons.add("no FENCING_TEST_JDBC_URL / fencing.test.jdbcUrl");
    }
    if (chosen == null && (only.equals("auto") || only.equals("local"))) {
      chosen = local(reasons);
    }
    if (chosen == null && (only.equals("auto") || only.equals("testcontainers"))) {
      chosen = testcontainers(reasons);
    }
    if (chosen == null && (only.equals("auto") || only.equals("embedded"))) {
      chosen = embedded(reasons);
    }
    if (chosen == null) {
      throw new IllegalStateException("No PostgreSQL for tests: " + String.join("; ", reasons));
    }
    LOG.info("Tests use PostgreSQL: {} (because: {})", chosen.source, String.join("; ", reasons));
    return chosen;
  }

  private static TestPostgres explicit(String url) {
    if (!url.startsWith(URL_PREFIX)) {
      throw new IllegalStateException(
          "FENCING_TEST_JDBC_URL / fencing.test.jdbcUrl must start with "
              + URL_PREFIX
              + ": "
              + url);
    }
    int query = url.indexOf('?');
    String base = query < 0 ? url : url.substring(0, query);
    String parameters = query < 0 ? "" : url.substring(query);
    int slash = base.indexOf('/', URL_PREFIX.length());
    String prefix = slash < 0 ? base + "/" : base.substring(0, slash + 1);
    String database = slash < 0 ? "" : base.substring(slash + 1);
    String user = setting("FENCING_TEST_USER", "fencing.test.user");
    String password = setting("FENCING_TEST_PASSWORD", "fencing.test.password");
    return new TestPostgres(
        "explicit URL " + base,
        prefix,
        parameters,
        database.isEmpty() ? POSTGRES : database,
        user == null ? POSTGRES : user,
        password == null ? "" : password);
  }

  private static @Nullable TestPostgres local(List<String> reasons) {
    String where = LOCAL_HOST + ":" + LOCAL_PORT;
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(LOCAL_HOST, LOCAL_PORT), LOCAL_TIMEOUT_SECONDS * 1000);
    } catch (SocketTimeoutException e) {
      // Not a refusal: on loopback only a server too busy to accept times out. Log in below.
      LOG.info("Connecting to {} took over {} s; waiting for it", where, LOCAL_TIMEOUT_SECONDS);
    } catch (IOException e) {
      reasons.add("nothing accepts connections on " + where + " (" + e.getMessage() + ")");
      return null;
    }
    Properties properties = credentials(POSTGRES, "");
    properties.setProperty("connectTimeout", Integer.toString(LOCAL_LOGIN_TIMEOUT_SECONDS));
    properties.setProperty("loginTimeout", Integer.toString(LOCAL_LOGIN_TIMEOUT_SECONDS));
    properties.setProperty("socketTimeout", Integer.toString(LOCAL_LOGIN_TIMEOUT_SECONDS));
    String url = URL_PREFIX + where + "/" + POSTGRES;
    long deadline = System.nanoTime() + LOCAL_PATIENCE_NANOS;
    while (true) {
      try (Connection connection = DriverManager.getConnection(url, properties);
          Statement statement = connection.createStatement();
          ResultSet rs = statement.executeQuery("SELECT 1")) {
        rs.next();
        break;
      } catch (SQLException e) {
        if (refusedForGood(e)) {
          reasons.add("local server " + where + " refused user postgres (" + e.getMessage() + ")");
          return null;
        }
        if (System.nanoTime() - deadline > 0) {
          throw new IllegalStateException(
              "A PostgreSQL server accepts connections on "
                  + where
                  + " but did not let user postgres log in and answer within "
                  + TimeUnit.NANOSECONDS.toMinutes(LOCAL_PATIENCE_NANOS)
                  + " minutes; not falling back to another server (set FENCING_TEST_SOURCE or"
                  + " FENCING_TEST_JDBC_URL to choose one)",
              e);
        }
        LOG.info("Local server {} not answering yet ({}); trying again", where, e.getMessage());
        pause();
      }
    }
    reasons.add("local server " + where + " accepts user postgres");
    return new TestPostgres("local " + where, URL_PREFIX + where + "/", "", POSTGRES, POSTGRES, "");
  }

  /** Whether {@code e} is the local server refusing us (not a slow or busy server). */
  static boolean refusedForGood(SQLException e) {
    String state = e.getSQLState();
    return state != null && REFUSED_FOR_GOOD.stream().anyMatch(state::startsWith);
  }

  private static void pause() {
    try {
      Thread.sleep(LOCAL_RETRY_MILLIS); // between logins to a busy server, not synchronisation
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted waiting for the local PostgreSQL", e);
    }
  }

  @SuppressWarnings("resource") // stopped by a shutdown hook
  private static @Nullable TestPostgres testcontainers(List<String> reasons) {
    boolean docker;
    try {
      docker = DockerClientFactory.instance().isDockerAvailable();
    } catch (Throwable e) {
      reasons.add("Docker check failed (" + e + ")");
      return null;
    }
    if (!docker) {
      reasons.add("Docker is not available");
      return null;
    }
    try {
      PostgreSQLContainer container = new PostgreSQLContainer(CONTAINER_IMAGE);
      container.start();
      Runtime.getRuntime()
          .addShutdownHook(new Thread(container::stop, "fencing-test-postgres-container-stop"));
      String where = container.getHost() + ":" + container.getMappedPort(5432);
      reasons.add("Docker is available");
      return new TestPostgres(
          "testcontainers " + CONTAINER_IMAGE + " at " + where,
          URL_PREFIX + where + "/",
          "",
          container.getDatabaseName(),
          container.getUsername(),
          container.getPassword());
    } catch (RuntimeException e) {
      LOG.warn("Docker is available but the {} container did not start", CONTAINER_IMAGE, e);
      reasons.add("Docker is available but the container did not start (" + e + ")");
      return null;
    }
  }

  private static @Nullable TestPostgres embedded(List<String> reasons) {
    EmbeddedPostgres postgres;
    try {
      postgres = EmbeddedPostgres.builder().start();
    } catch (IOException | RuntimeException e) {
      LOG.warn("Embedded PostgreSQL did not start", e);
      reasons.add("embedded PostgreSQL did not start (" + e + ")");
      return null;
    }
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    postgres.close();
                  } catch (IOException e) {
                    LOG.warn("Could not stop the embedded PostgreSQL", e);
                  }
                },
                "fencing-test-postgres-embedded-stop"));
    String where = "localhost:" + postgres.getPort();
    reasons.add("started an embedded PostgreSQL for this JVM");
    return new TestPostgres(
        "embedded (zonky) " + where, URL_PREFIX + where + "/", "", POSTGRES, POSTGRES, "");
  }
}
