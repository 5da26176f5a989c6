package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * A {@link TestDatabase} per {@code @SpringBootTest} class. Declare
 * {@code @ExtendWith(PerClassDatabase.class)} before {@code @SpringBootTest} so that the database
 * is dropped only after Spring closed the context ({@code @DirtiesContext}), and point the context
 * at it with {@link #register}.
 */
final class PerClassDatabase implements BeforeAllCallback, AfterAllCallback {
  private static final Map<Class<?>, TestDatabase> DATABASES = new ConcurrentHashMap<>();

  @Override
  public void beforeAll(ExtensionContext context) {
    Class<?> test = context.getRequiredTestClass();
    DATABASES.put(test, TestDatabase.create(test.getSimpleName()));
  }

  @Override
  public void afterAll(ExtensionContext context) {
    TestDatabase db = DATABASES.remove(context.getRequiredTestClass());
    if (db != null) {
      db.close();
    }
  }

  /** The database of {@code test}. */
  static TestDatabase of(Class<?> test) {
    TestDatabase db = DATABASES.get(test);
    if (db == null) {
      throw new IllegalStateException(
          "no database for " + test + ": @ExtendWith(PerClassDatabase.class)?");
    }
    return db;
  }

  /**
   * {@code spring.datasource.*} of {@code test}'s database, as its migration user (the starter
   * migrates through the application's data source), and the database's own fence roles ({@code
   * fencing.migrations.*}): roles are cluster-wide, and the defaults may serve another database.
   */
  static void register(DynamicPropertyRegistry registry, Class<?> test) {
    registry.add("spring.datasource.url", () -> of(test).jdbcUrl());
    registry.add("spring.datasource.username", () -> of(test).migrationUser());
    registry.add("spring.datasource.password", () -> of(test).password());
    registry.add("fencing.migrations.owner-role", () -> of(test).ownerRole());
    registry.add("fencing.migrations.application-role", () -> of(test).appRole());
  }

  /** Runs {@code sql} (DDL the test needs) in {@code db} as its migration user. */
  static void execute(TestDatabase db, String sql) throws SQLException {
    try (Connection c = db.connect(db.migrationUser());
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  /**
   * {@code name=value} pairs for a context of {@code db}: its data source as its migration user and
   * its own fence roles (see {@link #register}).
   */
  static String[] properties(TestDatabase db) {
    return new String[] {
      "spring.datasource.url=" + db.jdbcUrl(),
      "spring.datasource.username=" + db.migrationUser(),
      "spring.datasource.password=" + db.password(),
      "fencing.migrations.owner-role=" + db.ownerRole(),
      "fencing.migrations.application-role=" + db.appRole()
    };
  }
}
