package dev.fencing.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import jakarta.persistence.AttributeConverter;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import java.sql.Types;
import java.util.Locale;
import org.hibernate.annotations.JavaType;
import org.hibernate.annotations.JdbcType;
import org.hibernate.annotations.Type;
import org.hibernate.type.descriptor.WrapperOptions;
import org.hibernate.type.descriptor.java.AbstractClassJavaType;
import org.hibernate.type.descriptor.java.StringJavaType;
import org.hibernate.type.descriptor.jdbc.JdbcTypeIndicators;
import org.hibernate.type.descriptor.jdbc.VarcharJdbcType;
import org.hibernate.usertype.UserType;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A Hibernate {@code @JavaType} or {@code @Type} (a {@code UserType}) on the {@link Fenced}
 * attribute decides the column's value as a converter does. One that lower-cases on write let the
 * holder of {@code bin:ALICE} write rows read back as {@code bin:alice}'s (before: accepted, the
 * type was not looked at). Each write's value now goes to the column and back through the
 * attribute's JDBC mapping, as {@link ConvertedResourceTest}'s converters do; an injective custom
 * type keeps working. A type whose writes cannot be replayed (a {@code UserType}'s own JDBC code, a
 * custom {@code JdbcType}) is refused at start: {@link BadInputJpaTest} B169, B170.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class CustomTypeResourceTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  /** Not injective: binds every owner in lower case, reads the column as it is. */
  public static class LowerCaseJavaType extends StringJavaType {
    @Override
    public <X> X unwrap(@Nullable String value, Class<X> type, WrapperOptions options) {
      return super.unwrap(value == null ? null : value.toLowerCase(Locale.ROOT), type, options);
    }
  }

  /** Pouch of owner "alice" is resource {@code pouch:alice}; its owner is stored lower-cased. */
  @Entity(name = "Pouch")
  @Fenced(prefix = "pouch:", attribute = "owner")
  static class Pouch {
    @Id long id;

    @JavaType(LowerCaseJavaType.class)
    String owner = "";

    int items;

    Pouch() {}

    Pouch(long id, String owner) {
      this.id = id;
      this.owner = owner;
    }
  }

  /** A value type naming a tray; its text is its value. */
  public record Tag(String value) {
    @Override
    public String toString() {
      return value;
    }
  }

  /** Injective: a {@link Tag} is stored as its value. */
  public static class TagJavaType extends AbstractClassJavaType<Tag> {
    public TagJavaType() {
      super(Tag.class);
    }

    @Override
    public org.hibernate.type.descriptor.jdbc.JdbcType getRecommendedJdbcType(
        JdbcTypeIndicators indicators) {
      return indicators.getJdbcType(Types.VARCHAR);
    }

    @Override
    public Tag fromString(CharSequence string) {
      return new Tag(string.toString());
    }

    @Override
    @SuppressWarnings("unchecked")
    public <X> X unwrap(@Nullable Tag value, Class<X> type, WrapperOptions options) {
      return value == null ? null : (X) value.value();
    }

    @Override
    public <X> @Nullable Tag wrap(@Nullable X value, WrapperOptions options) {
      return value == null ? null : new Tag(value.toString());
    }
  }

  /** Tray of tag "t1" is resource {@code tray:t1}. */
  @Entity(name = "Tray")
  @Fenced(prefix = "tray:", attribute = "tag")
  static class Tray {
    @Id long id;

    @JavaType(TagJavaType.class)
    Tag tag = new Tag("");

    int units;

    Tray() {}

    Tray(long id, String tag) {
      this.id = id;
      this.tag = new Tag(tag);
    }
  }

  /** A {@code UserType} stored through a converter: as lower case. */
  public static class LowerCaseUserType implements UserType<String> {
    @Override
    public int getSqlType() {
      return Types.VARCHAR;
    }

    @Override
    public Class<String> returnedClass() {
      return String.class;
    }

    @Override
    public String deepCopy(String value) {
      return value;
    }

    @Override
    public boolean isMutable() {
      return false;
    }

    @Override
    public AttributeConverter<String, ?> getValueConverter() {
      return new AttributeConverter<String, String>() {
        @Override
        public @Nullable String convertToDatabaseColumn(@Nullable String attribute) {
          return attribute == null ? null : attribute.toLowerCase(Locale.ROOT);
        }

        @Override
        public @Nullable String convertToEntityAttribute(@Nullable String column) {
          return column;
        }
      };
    }
  }

  /** Sack of owner "alice" is resource {@code sack:alice}; its owner is stored lower-cased. */
  @Entity(name = "Sack")
  @Fenced(prefix = "sack:", attribute = "owner")
  static class Sack {
    @Id long id;

    @Type(LowerCaseUserType.class)
    String owner = "";

    Sack() {}

    Sack(long id, String owner) {
      this.id = id;
      this.owner = owner;
    }
  }

  /** B169: a {@code UserType} binding and reading the column with its own JDBC code. */
  public static class OwnJdbcUserType implements UserType<String> {
    @Override
    public int getSqlType() {
      return Types.VARCHAR;
    }

    @Override
    public Class<String> returnedClass() {
      return String.class;
    }

    @Override
    public String deepCopy(String value) {
      return value;
    }

    @Override
    public boolean isMutable() {
      return false;
    }
  }

  @Entity(name = "UserTypedOwner")
  @Fenced(prefix = "ut:", attribute = "owner")
  static class UserTypedOwner {
    @Id long id;

    @Type(OwnJdbcUserType.class)
    String owner = "";
  }

  /** B170: a {@code JdbcType} of the application's, which binds the column with its own code. */
  public static class OwnVarcharJdbcType extends VarcharJdbcType {
    @Override
    public org.hibernate.type.descriptor.jdbc.JdbcType resolveIndicatedType(
        JdbcTypeIndicators indicators, org.hibernate.type.descriptor.java.JavaType<?> domain) {
      return this;
    }
  }

  @Entity(name = "JdbcTypedOwner")
  @Fenced(prefix = "jt:", attribute = "owner")
  static class JdbcTypedOwner {
    @Id long id;

    @JdbcType(OwnVarcharJdbcType.class)
    String owner = "";
  }

  /** B166 (as a converter's): stores the owner as a {@code numeric}, which keeps a scale. */
  public static class NumericJavaType extends StringJavaType {
    @Override
    public org.hibernate.type.descriptor.jdbc.JdbcType getRecommendedJdbcType(
        JdbcTypeIndicators indicators) {
      return indicators.getJdbcType(Types.NUMERIC);
    }
  }

  @Entity(name = "NumericOwner")
  @Fenced(prefix = "num:", attribute = "owner")
  static class NumericOwner {
    @Id long id;

    @JavaType(NumericJavaType.class)
    String owner = "";
  }

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa = JpaFixture.start(db, Pouch.class, Tray.class, Sack.class);
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
  void aValueTheJavaTypeStoresAsAnothersIsRefusedOnInsert() {
    Throwable thrown;
    try (FencingScope scope = Fencing.bind(jpa.current("pouch:ALICE"))) {
      thrown =
          catchThrowable(
              () -> jpa.sessionFactory.inTransaction(s -> s.persist(new Pouch(1, "ALICE"))));
    }
    // Before: accepted, and the row read back as alice's (owner 'alice'), a row of pouch:alice.
    assertThat(thrown)
        .hasMessageContaining("Pouch")
        .hasMessageContaining("owner")
        .hasMessageContaining(LowerCaseJavaType.class.getName())
        .hasMessageContaining("read back as alice, a row of pouch:alice");
    assertThat(jpa.count("pouch")).isZero();
  }

  @Test
  void aValueTheJavaTypeStoresAsAnothersIsRefusedOnUpdateAndByAStatelessSession() {
    jpa.seed("pouch:bob", new Pouch(1, "bob"));
    Throwable updated;
    Throwable inserted;
    try (FencingScope scope = Fencing.bind(jpa.current("pouch:bob"), jpa.current("pouch:ALICE"))) {
      updated =
          catchThrowable(
              () -> jpa.sessionFactory.inTransaction(s -> s.find(Pouch.class, 1L).owner = "ALICE"));
      inserted =
          catchThrowable(
              () ->
                  jpa.sessionFactory.inStatelessTransaction(s -> s.insert(new Pouch(2, "ALICE"))));
    }
    assertThat(updated).hasMessageContaining("pouch:alice");
    assertThat(inserted).hasMessageContaining("pouch:alice");
    assertThat(JpaFixture.query(jpa.pool, "SELECT owner FROM pouch WHERE id = 1")).isEqualTo("bob");
    assertThat(jpa.count("pouch")).isEqualTo(1);
  }

  @Test
  void theHolderWritesAValueTheJavaTypeKeeps() {
    jpa.seed("pouch:alice", new Pouch(1, "alice"));
    try (FencingScope scope = Fencing.bind(jpa.current("pouch:alice"))) {
      jpa.sessionFactory.inTransaction(s -> s.find(Pouch.class, 1L).items = 9);
      jpa.sessionFactory.inTransaction(s -> s.persist(new Pouch(2, "alice")));
    }
    assertThat(jpa.queryLong("SELECT items FROM pouch WHERE id = 1")).isEqualTo(9);
    assertThat(jpa.queryLong("SELECT count(*) FROM pouch WHERE owner = 'alice'")).isEqualTo(2);
  }

  @Test
  void aValueTheUserTypesConverterStoresAsAnothersIsRefused() {
    Throwable thrown;
    try (FencingScope scope = Fencing.bind(jpa.current("sack:ALICE"))) {
      thrown =
          catchThrowable(
              () -> jpa.sessionFactory.inTransaction(s -> s.persist(new Sack(1, "ALICE"))));
    }
    // Before: accepted, a row of sack:alice written with sack:ALICE's token.
    assertThat(thrown).hasMessageContaining("read back as alice, a row of sack:alice");
    assertThat(jpa.count("sack")).isZero();
  }

  @Test
  void theHolderWritesThroughAnInjectiveJavaType() {
    jpa.seed("tray:t1", new Tray(1, "t1"));
    try (FencingScope scope = Fencing.bind(jpa.current("tray:t1"))) {
      jpa.sessionFactory.inTransaction(s -> s.find(Tray.class, 1L).units = 5);
      jpa.sessionFactory.inTransaction(s -> s.persist(new Tray(2, "t1")));
    }
    assertThat(jpa.queryLong("SELECT units FROM tray WHERE id = 1")).isEqualTo(5);
    assertThat(jpa.queryLong("SELECT count(*) FROM tray WHERE tag = 't1'")).isEqualTo(2);
  }

  @Test
  void aZombieIsRefusedThroughAnInjectiveJavaType() {
    jpa.seed("tray:t1", new Tray(1, "t1"));
    try (FencingScope scope = Fencing.bind(jpa.stale("tray:t1"))) {
      JpaFixture.refusal(
          StaleFencingTokenException.class,
          () -> jpa.sessionFactory.inTransaction(s -> s.find(Tray.class, 1L).units = 7));
      JpaFixture.refusal(
          StaleFencingTokenException.class,
          () -> jpa.sessionFactory.inTransaction(s -> s.persist(new Tray(2, "t1"))));
    }
    assertThat(jpa.queryLong("SELECT units FROM tray WHERE id = 1")).isZero();
    assertThat(jpa.count("tray")).isEqualTo(1);
  }
}
