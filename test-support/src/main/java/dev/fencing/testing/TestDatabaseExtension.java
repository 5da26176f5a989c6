package dev.fencing.testing;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension that gives each test class its own {@link TestDatabase}, named after the class.
 *
 * <pre>{@code
 * @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();
 *
 * @Test void works() throws SQLException {
 *   try (Connection c = db.connect()) { ... }
 * }
 * }</pre>
 *
 * <p>Registered on a {@code static} field, the database lives from before the first test of the
 * class until after the last one (and {@code @Nested} classes share it). Registered on an instance
 * field, each test method gets a fresh database, dropped after the method.
 */
public final class TestDatabaseExtension
    implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {

  private volatile @Nullable TestDatabase database;
  private volatile @Nullable String owner;

  /** Creates the extension; the database is created when the tests start. */
  public TestDatabaseExtension() {}

  @Override
  public void beforeAll(ExtensionContext context) {
    open(context, context.getRequiredTestClass().getSimpleName());
  }

  @Override
  public void afterAll(ExtensionContext context) {
    closeIfOwner(context);
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    open(
        context,
        context.getRequiredTestClass().getSimpleName()
            + "_"
            + context.getRequiredTestMethod().getName());
  }

  @Override
  public void afterEach(ExtensionContext context) {
    closeIfOwner(context);
  }

  private synchronized void open(ExtensionContext context, String hint) {
    if (database == null) {
      database = TestDatabase.create(hint);
      owner = context.getUniqueId();
    }
  }

  private synchronized void closeIfOwner(ExtensionContext context) {
    TestDatabase current = database;
    if (current != null && context.getUniqueId().equals(owner)) {
      database = null;
      owner = null;
      current.close();
    }
  }

  /**
   * The current test's database.
   *
   * @throws IllegalStateException outside a test run by this extension
   */
  public TestDatabase database() {
    TestDatabase current = database;
    if (current == null) {
      throw new IllegalStateException(
          "No test database: use the extension from @RegisterExtension, inside a test");
    }
    return current;
  }

  /** See {@link TestDatabase#name()}. */
  public String name() {
    return database().name();
  }

  /** See {@link TestDatabase#jdbcUrl()}. */
  public String jdbcUrl() {
    return database().jdbcUrl();
  }

  /** See {@link TestDatabase#user()}. */
  public String user() {
    return database().user();
  }

  /** See {@link TestDatabase#password()}. */
  public String password() {
    return database().password();
  }

  /** See {@link TestDatabase#ownerRole()}. */
  public String ownerRole() {
    return database().ownerRole();
  }

  /** See {@link TestDatabase#appRole()}. */
  public String appRole() {
    return database().appRole();
  }

  /** See {@link TestDatabase#role(String)}. */
  public String role(String suffix) {
    return database().role(suffix);
  }

  /** See {@link TestDatabase#migrationUser()}. */
  public String migrationUser() {
    return database().migrationUser();
  }

  /** See {@link TestDatabase#migrationDataSource()}. */
  public DataSource migrationDataSource() {
    return database().migrationDataSource();
  }

  /** See {@link TestDatabase#dataSource()}. */
  public DataSource dataSource() {
    return database().dataSource();
  }

  /** See {@link TestDatabase#connect()}. */
  public Connection connect() throws SQLException {
    return database().connect();
  }

  /** See {@link TestDatabase#connect(String)}. */
  public Connection connect(String role) throws SQLException {
    return database().connect(role);
  }
}
