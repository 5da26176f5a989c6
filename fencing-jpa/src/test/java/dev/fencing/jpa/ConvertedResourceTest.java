package dev.fencing.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import jakarta.persistence.AttributeConverter;
import jakarta.persistence.Convert;
import jakarta.persistence.Converter;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import java.util.Locale;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An {@code AttributeConverter} on the {@link Fenced} attribute decides the column's value, and the
 * row's resource is the one its reads convert back. A converter that maps two values to one column
 * value let the holder of {@code bin:ALICE} write rows that read back as {@code bin:alice}'s
 * (before: accepted). Each write's value must now come back from the converter as itself; an
 * injective converter (a value type) keeps working, with its holder accepted and a zombie refused.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class ConvertedResourceTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  /** Not injective: stores every owner in lower case, reads the column as it is. */
  @Converter
  static class LowerCase implements AttributeConverter<String, String> {
    @Override
    public @Nullable String convertToDatabaseColumn(@Nullable String attribute) {
      return attribute == null || attribute.equals("nobody")
          ? null
          : attribute.toLowerCase(Locale.ROOT);
    }

    @Override
    public @Nullable String convertToEntityAttribute(@Nullable String column) {
      return column;
    }
  }

  /** Bin of owner "alice" is resource {@code bin:alice}; its owner is stored lower-cased. */
  @Entity(name = "Bin")
  @Fenced(prefix = "bin:", attribute = "owner")
  static class Bin {
    @Id long id;

    @Convert(converter = LowerCase.class)
    String owner = "";

    int items;

    Bin() {}

    Bin(long id, String owner) {
      this.id = id;
      this.owner = owner;
    }
  }

  /** A value type naming a shelf; its text is its value. */
  record Label(String value) {
    @Override
    public String toString() {
      return value;
    }
  }

  /** Applied to every {@link Label}: not injective either (drops leading zeros). */
  @Converter(autoApply = true)
  static class UnpaddedLabel implements AttributeConverter<Label, String> {
    @Override
    public @Nullable String convertToDatabaseColumn(@Nullable Label attribute) {
      return attribute == null ? null : attribute.value().replaceFirst("^0+(?=.)", "");
    }

    @Override
    public @Nullable Label convertToEntityAttribute(@Nullable String column) {
      return column == null ? null : new Label(column);
    }
  }

  /** Shelf of label "x" is resource {@code shelf:x}. */
  @Entity(name = "Shelf")
  @Fenced(prefix = "shelf:", attribute = "label")
  static class Shelf {
    @Id long id;
    Label label = new Label("");

    Shelf() {}

    Shelf(long id, String label) {
      this.id = id;
      this.label = new Label(label);
    }
  }

  /** An identifier value type, injective: what converters on resource attributes are for. */
  record StoreId(String value) {
    @Override
    public String toString() {
      return value;
    }
  }

  @Converter
  static class StoreIdConverter implements AttributeConverter<StoreId, String> {
    @Override
    public @Nullable String convertToDatabaseColumn(@Nullable StoreId attribute) {
      return attribute == null ? null : attribute.value();
    }

    @Override
    public @Nullable StoreId convertToEntityAttribute(@Nullable String column) {
      return column == null ? null : new StoreId(column);
    }
  }

  /** Stock of store "s1" is resource {@code store:s1}. */
  @Entity(name = "Stock")
  @Fenced(prefix = "store:", attribute = "store")
  static class Stock {
    @Id long id;

    @Convert(converter = StoreIdConverter.class)
    StoreId store = new StoreId("");

    int units;

    Stock() {}

    Stock(long id, String store) {
      this.id = id;
      this.store = new StoreId(store);
    }
  }

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa =
        JpaFixture.start(
            db,
            Bin.class,
            Shelf.class,
            Stock.class,
            LowerCase.class,
            UnpaddedLabel.class,
            StoreIdConverter.class);
  }

  @AfterEach
  void reset() {
    jpa.reset();
  }

  @AfterAll
  static void stop() {
    jpa.close();
  }

  @Test
  void aValueTheConverterStoresAsAnothersIsRefusedOnInsert() {
    Throwable thrown;
    try (FencingScope scope = Fencing.bind(jpa.current("bin:ALICE"))) {
      thrown =
          catchThrowable(
              () -> jpa.sessionFactory.inTransaction(s -> s.persist(new Bin(1, "ALICE"))));
    }
    // Before: accepted, and the row read back as alice's (owner 'alice'), a row of bin:alice.
    assertThat(thrown)
        .hasMessageContaining("Bin")
        .hasMessageContaining("owner")
        .hasMessageContaining(LowerCase.class.getName())
        .hasMessageContaining("bin:alice");
    assertThat(jpa.count("bin")).isZero();
  }

  @Test
  void aValueTheConverterStoresAsAnothersIsRefusedOnUpdate() {
    jpa.seed("bin:bob", new Bin(1, "bob"));
    Throwable thrown;
    try (FencingScope scope = Fencing.bind(jpa.current("bin:bob"), jpa.current("bin:ALICE"))) {
      thrown =
          catchThrowable(
              () -> jpa.sessionFactory.inTransaction(s -> s.find(Bin.class, 1L).owner = "ALICE"));
    }
    assertThat(thrown).hasMessageContaining("bin:alice");
    assertThat(JpaFixture.query(jpa.pool, "SELECT owner FROM bin WHERE id = 1")).isEqualTo("bob");
  }

  @Test
  void aValueTheConverterStoresAsAnothersIsRefusedByAStatelessSession() {
    Throwable thrown;
    try (FencingScope scope = Fencing.bind(jpa.current("bin:ALICE"))) {
      thrown =
          catchThrowable(
              () -> jpa.sessionFactory.inStatelessTransaction(s -> s.insert(new Bin(1, "ALICE"))));
    }
    assertThat(thrown).hasMessageContaining("bin:alice");
    assertThat(jpa.count("bin")).isZero();
  }

  @Test
  void aValueTheConverterStoresAsNullIsRefused() {
    Throwable thrown;
    try (FencingScope scope = Fencing.bind(jpa.current("bin:nobody"))) {
      thrown =
          catchThrowable(
              () -> jpa.sessionFactory.inTransaction(s -> s.persist(new Bin(1, "nobody"))));
    }
    assertThat(thrown).hasMessageContaining("stores it as NULL, which names no resource");
    assertThat(jpa.count("bin")).isZero();
  }

  @Test
  void anAutoAppliedConvertersValueStoredAsAnothersIsRefused() {
    Throwable thrown;
    try (FencingScope scope = Fencing.bind(jpa.current("shelf:007"))) {
      thrown =
          catchThrowable(
              () -> jpa.sessionFactory.inTransaction(s -> s.persist(new Shelf(1, "007"))));
    }
    assertThat(thrown)
        .hasMessageContaining(UnpaddedLabel.class.getName())
        .hasMessageContaining("shelf:7");
    assertThat(jpa.count("shelf")).isZero();
  }

  @Test
  void aZombieIsRefusedForAValueTheConverterKeeps() {
    jpa.seed("bin:alice", new Bin(1, "alice"));
    try (FencingScope scope = Fencing.bind(jpa.stale("bin:alice"))) {
      JpaFixture.refusal(
          StaleFencingTokenException.class,
          () -> jpa.sessionFactory.inTransaction(s -> s.persist(new Bin(2, "alice"))));
      JpaFixture.refusal(
          StaleFencingTokenException.class,
          () -> jpa.sessionFactory.inTransaction(s -> s.find(Bin.class, 1L).items = 9));
    }
    assertThat(jpa.count("bin")).isEqualTo(1);
    assertThat(jpa.queryLong("SELECT items FROM bin WHERE id = 1")).isZero();
  }

  @Test
  void theHolderWritesAValueTheConverterKeeps() {
    jpa.seed("bin:alice", new Bin(1, "alice"));
    try (FencingScope scope = Fencing.bind(jpa.current("bin:alice"))) {
      jpa.sessionFactory.inTransaction(s -> s.find(Bin.class, 1L).items = 9);
      jpa.sessionFactory.inTransaction(s -> s.persist(new Bin(2, "alice")));
      jpa.sessionFactory.inStatelessTransaction(s -> s.insert(new Bin(3, "alice")));
    }
    assertThat(jpa.queryLong("SELECT items FROM bin WHERE id = 1")).isEqualTo(9);
    assertThat(jpa.queryLong("SELECT count(*) FROM bin WHERE owner = 'alice'")).isEqualTo(3);
  }

  @Test
  void aZombieIsRefusedThroughAnInjectiveConverter() {
    jpa.seed("store:s1", new Stock(1, "s1"));
    try (FencingScope scope = Fencing.bind(jpa.stale("store:s1"))) {
      JpaFixture.refusal(
          StaleFencingTokenException.class,
          () -> jpa.sessionFactory.inTransaction(s -> s.find(Stock.class, 1L).units = 5));
      JpaFixture.refusal(
          StaleFencingTokenException.class,
          () -> jpa.sessionFactory.inTransaction(s -> s.persist(new Stock(2, "s1"))));
    }
    assertThat(jpa.queryLong("SELECT units FROM stock WHERE id = 1")).isZero();
    assertThat(jpa.count("stock")).isEqualTo(1);
  }

  @Test
  void theHolderWritesThroughAnInjectiveConverter() {
    jpa.seed("store:s1", new Stock(1, "s1"));
    try (FencingScope scope = Fencing.bind(jpa.current("store:s1"))) {
      jpa.sessionFactory.inTransaction(s -> s.find(Stock.class, 1L).units = 5);
      jpa.sessionFactory.inTransaction(s -> s.persist(new Stock(2, "s1")));
    }
    assertThat(jpa.queryLong("SELECT units FROM stock WHERE id = 1")).isEqualTo(5);
    assertThat(jpa.count("stock")).isEqualTo(2);
  }
}
