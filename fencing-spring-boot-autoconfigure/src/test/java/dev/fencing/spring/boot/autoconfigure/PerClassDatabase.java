package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.testing.TestDatabase;
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

  /** {@code spring.datasource.*} of {@code test}'s database. */
  static void register(DynamicPropertyRegistry registry, Class<?> test) {
    registry.add("spring.datasource.url", () -> of(test).jdbcUrl());
    registry.add("spring.datasource.username", () -> of(test).user());
    registry.add("spring.datasource.password", () -> of(test).password());
  }
}
