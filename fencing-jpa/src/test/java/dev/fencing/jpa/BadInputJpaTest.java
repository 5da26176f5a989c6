package dev.fencing.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.Lease;
import dev.fencing.testing.FenceSnapshot;
import dev.fencing.testing.TestDatabaseExtension;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The bad input catalogue (docs/BAD-INPUT.md), JPA entry point: misuse of {@link Fenced} stops
 * Hibernate from starting with a message naming the entity and creates nothing; a row whose
 * resource attribute is null or names no valid resource is refused and nothing is written.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class BadInputJpaTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  @Entity(name = "UnknownAttributeEntity")
  @Fenced(prefix = "doc:", attribute = "cod")
  static class UnknownAttributeEntity {
    @Id long id;
    @Nullable String code;
  }

  @Entity(name = "SpaceInResource")
  @Fenced("ledger of 2026")
  static class SpaceInResource {
    @Id long id;
  }

  @Entity(name = "InjectionInResource")
  @Fenced("x'; DROP TABLE fencing.resource; --")
  static class InjectionInResource {
    @Id long id;
  }

  @Entity(name = "NulInResource")
  @Fenced("ledger\u0000")
  static class NulInResource {
    @Id long id;
  }

  @Entity(name = "BadPrefix")
  @Fenced(prefix = "doc %", attribute = "code")
  static class BadPrefix {
    @Id long id;
    @Nullable String code;
  }

  @Entity(name = "EmptyFenced")
  @Fenced(value = "", attribute = "")
  static class EmptyFenced {
    @Id long id;
  }

  /** One resource per row: {@code doc:<code>}. */
  @Entity(name = "CodedDocument")
  @Table(name = "coded_document")
  @Fenced(prefix = "doc:", attribute = "code")
  static class CodedDocument {
    @Id long id;
    @Nullable String code;

    CodedDocument() {}

    CodedDocument(long id, @Nullable String code) {
      this.id = id;
      this.code = code;
    }
  }

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    JpaFixture.migrate(db);
    jpa = JpaFixture.start(db, CodedDocument.class);
  }

  @AfterEach
  void reset() {
    jpa.reset();
    assertThat(Fencing.current().isEmpty()).isTrue();
  }

  @AfterAll
  static void stop() {
    jpa.close();
  }

  static Stream<Arguments> misusedAnnotations() {
    return Stream.of(
        arguments("B103", UnknownAttributeEntity.class, "attribute cod does not exist"),
        arguments(
            "B104",
            SpaceInResource.class,
            "value \"ledger of 2026\" is not a valid resource name: resource name contains the"
                + " character \" \" at position 7"),
        arguments(
            "B105",
            InjectionInResource.class,
            "is not a valid resource name: resource name contains the character \"'\" at position"
                + " 2"),
        arguments("B106", NulInResource.class, "a control character (code 0) at position 7"),
        arguments(
            "B107",
            BadPrefix.class,
            "prefix \"doc %\" is not a valid resource name: resource name contains the character"
                + " \" \" at position 4"),
        arguments("B108", EmptyFenced.class, "give exactly one of value"));
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("misusedAnnotations")
  void misusedAnnotationStopsHibernateAndCreatesNothing(String id, Class<?> entity, String message)
      throws SQLException {
    List<String> tablesBefore = tables();
    FenceSnapshot before = snapshot();
    Throwable thrown =
        catchThrowable(() -> JpaFixture.sessionFactory(jpa.pool, Map.of(), entity).close());
    assertThat(thrown).as(id).isNotNull();
    assertThat(messages(thrown)).as(id).contains("@Fenced on entity " + entity.getName(), message);
    assertThat(tables()).as(id).isEqualTo(tablesBefore);
    assertThat(snapshot()).as(id).isEqualTo(before);
  }

  @Test
  @DisplayName("B109 a row whose @Fenced attribute is null")
  void nullResourceAttribute() throws SQLException {
    Lease lease = jpa.current("doc:a");
    FenceSnapshot before = snapshot();
    Throwable thrown;
    try (FencingScope scope = Fencing.bind(lease)) {
      thrown =
          catchThrowable(
              () -> jpa.sessionFactory.inTransaction(s -> s.persist(new CodedDocument(1, null))));
    }
    assertThat(messages(thrown))
        .contains("its @Fenced attribute code is null, so its resource is unknown");
    assertThat(snapshot()).isEqualTo(before);
  }

  @Test
  @DisplayName("B110 a row whose @Fenced attribute names no valid resource")
  void malformedResourceAttribute() throws SQLException {
    Lease lease = jpa.current("doc:a");
    FenceSnapshot before = snapshot();
    Throwable thrown;
    try (FencingScope scope = Fencing.bind(lease)) {
      thrown =
          catchThrowable(
              () ->
                  jpa.sessionFactory.inTransaction(
                      s -> s.persist(new CodedDocument(2, "a'; DELETE FROM coded_document; --"))));
    }
    assertThat(messages(thrown)).contains("doc:a'; DELETE FROM coded_document; --");
    assertThat(FencingExceptionsProbe.missing(thrown)).isTrue();
    assertThat(snapshot()).isEqualTo(before);
  }

  // ---------------------------------------------------------------------------------------------

  /** Whether the refusal found in {@code thrown} is a missing token. */
  private static final class FencingExceptionsProbe {
    static boolean missing(Throwable thrown) {
      return dev.fencing.jdbc.FencingExceptions.find(thrown)
          .map(r -> r instanceof dev.fencing.jdbc.MissingFencingTokenException)
          .orElse(false);
    }
  }

  private static FenceSnapshot snapshot() throws SQLException {
    try (Connection c = jpa.pool.getConnection()) {
      return FenceSnapshot.take(c, "coded_document");
    }
  }

  private static List<String> tables() throws SQLException {
    List<String> tables = new ArrayList<>();
    try (Connection c = jpa.pool.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        tables.add(rs.getString(1));
      }
    }
    return tables;
  }

  private static String messages(@Nullable Throwable thrown) {
    assertThat(thrown).as("must be refused").isNotNull();
    StringBuilder messages = new StringBuilder();
    for (Throwable t = thrown; t != null; t = t.getCause()) {
      messages.append(t.getMessage()).append('\n');
    }
    return messages.toString();
  }
}
