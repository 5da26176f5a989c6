package dev.fencing.jpa;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
import jakarta.persistence.AttributeConverter;
import jakarta.persistence.Convert;
import jakarta.persistence.Converter;
import jakarta.persistence.Entity;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
import jakarta.persistence.Id;
import java.util.Map;
import java.util.UUID;
import org.hibernate.SessionFactory;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The usual types of a {@link Fenced} attribute start: the start-up refusal of types whose text the
 * column may not keep must not refuse an integral attribute (boxed or not), an enum stored by
 * ordinal or by name, a UUID, a value type read and written through an {@code AttributeConverter}
 * (named with {@code @Convert} or applied automatically).
 */
class ReasonableResourceTypesTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  enum Region {
    NORTH,
    SOUTH
  }

  /** An identifier value type, as domain models have them. */
  record TenantId(String value) {
    @Override
    public String toString() {
      return value;
    }
  }

  @Converter(autoApply = true)
  static class TenantIdConverter implements AttributeConverter<TenantId, String> {
    @Override
    public String convertToDatabaseColumn(TenantId attribute) {
      return attribute == null ? null : attribute.value();
    }

    @Override
    public TenantId convertToEntityAttribute(String column) {
      return column == null ? null : new TenantId(column);
    }
  }

  /** Explicitly converted, not auto-applied. */
  record ShopId(String value) {
    @Override
    public String toString() {
      return value;
    }
  }

  @Converter
  static class ShopIdConverter implements AttributeConverter<ShopId, String> {
    @Override
    public String convertToDatabaseColumn(ShopId attribute) {
      return attribute == null ? null : attribute.value();
    }

    @Override
    public ShopId convertToEntityAttribute(String column) {
      return column == null ? null : new ShopId(column);
    }
  }

  @Entity(name = "RtPrimitiveLong")
  @Fenced(prefix = "acct:", attribute = "account")
  static class PrimitiveLong {
    @Id long id;
    long account;
  }

  @Entity(name = "RtBoxedInteger")
  @Fenced(prefix = "acct:", attribute = "account")
  static class BoxedInteger {
    @Id long id;
    Integer account;
  }

  @Entity(name = "RtOrdinalEnum")
  @Fenced(prefix = "region:", attribute = "region")
  static class OrdinalEnum {
    @Id long id;

    @Enumerated(EnumType.ORDINAL)
    Region region;
  }

  @Entity(name = "RtStringEnum")
  @Fenced(prefix = "region:", attribute = "region")
  static class StringEnum {
    @Id long id;

    @Enumerated(EnumType.STRING)
    Region region;
  }

  @Entity(name = "RtUuid")
  @Fenced(prefix = "u:", attribute = "owner")
  static class Uuid {
    @Id long id;
    UUID owner;
  }

  @Entity(name = "RtConvertedString")
  @Fenced(prefix = "shop:", attribute = "shop")
  static class ExplicitConverter {
    @Id long id;

    @Convert(converter = ShopIdConverter.class)
    ShopId shop;
  }

  @Entity(name = "RtAutoAppliedConverter")
  @Fenced(prefix = "tenant:", attribute = "tenant")
  static class AutoAppliedConverter {
    @Id long id;
    TenantId tenant;
  }

  @ParameterizedTest
  @ValueSource(
      classes = {
        PrimitiveLong.class,
        BoxedInteger.class,
        OrdinalEnum.class,
        StringEnum.class,
        Uuid.class,
        ExplicitConverter.class,
        AutoAppliedConverter.class
      })
  void starts(Class<?> entity) {
    try (SessionFactory sf =
        JpaFixture.sessionFactory(
            db.dataSource(), Map.of(), entity, TenantIdConverter.class, ShopIdConverter.class)) {
      assertThat(sf.isOpen()).isTrue();
    }
  }
}
