package dev.fencing.jpa;

import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.mapping.BasicValue;
import org.hibernate.metamodel.mapping.JdbcMapping;
import org.hibernate.type.CustomType;
import org.hibernate.type.descriptor.converter.spi.BasicValueConverter;
import org.hibernate.type.descriptor.converter.spi.JpaAttributeConverter;
import org.hibernate.type.descriptor.java.JavaType;
import org.hibernate.type.descriptor.jdbc.JdbcType;
import org.jspecify.annotations.Nullable;

/**
 * For {@link FencingEventListener}: a {@link Fenced} attribute whose column value is made by code
 * of the application's — an {@code AttributeConverter} (named, applied automatically, or a {@code
 * UserType}'s value converter) or a {@code @JavaType} — names a row's resource by the value its
 * reads give back, not by the value the entity holds. Before the write, the value goes to the
 * column and back as Hibernate's JDBC mapping of the attribute takes it (the converter, then the
 * JavaType's unwrap to the JDBC type's Java type; then the JavaType's wrap and the converter back);
 * the write is refused unless that names the resource judged. A type that maps two values to one
 * column value can then no longer let one resource's holder write rows read back as another's.
 *
 * <p>Resolved once per entity when fencing-jpa starts ({@link #of}); a mapping whose JDBC code is
 * the application's own (a {@code UserType} without a value converter, a custom {@code JdbcType})
 * cannot be replayed before the write, and is refused then.
 */
final class ConvertedAttribute {
  private final @Nullable BasicValueConverter<Object, Object> converter;
  // The application's JavaType making the column value (unwrap) and reading it back (wrap); else
  // null: the column gets the (converted) value itself.
  private final @Nullable JavaType<Object> columnType;
  private final Class<Object> columnClass;
  private final String through;

  private ConvertedAttribute(
      @Nullable BasicValueConverter<Object, Object> converter,
      @Nullable JavaType<Object> columnType,
      Class<Object> columnClass,
      String through) {
    this.converter = converter;
    this.columnType = columnType;
    this.columnClass = columnClass;
    this.through = through;
  }

  /**
   * How the {@code @Fenced} {@code attribute} of entity {@code entityName}, mapped by {@code
   * value}, is stored; null if its column gets the value itself.
   *
   * @throws IllegalArgumentException if no write of it can be replayed, or the column may keep the
   *     value it is stored as as another
   */
  @SuppressWarnings("unchecked")
  static @Nullable ConvertedAttribute of(String entityName, String attribute, BasicValue value) {
    JdbcMapping mapping = value.resolve().getJdbcMapping();
    if (mapping instanceof CustomType<?> custom && custom.getValueConverter() == null) {
      throw FencedEntity.invalid(
          entityName,
          "attribute "
              + attribute
              + "'s UserType "
              + custom.getUserType().getClass().getName()
              + " writes and reads the column with its own JDBC code (nullSafeSet, nullSafeGet),"
              + " which fencing cannot replay before the write, so the row could be read back as"
              + " another resource than the one judged; give the UserType a value converter"
              + " (getValueConverter()), or map the attribute with an AttributeConverter");
    }
    JdbcType jdbcType = mapping.getJdbcType();
    if (!isHibernates(jdbcType)) {
      throw FencedEntity.invalid(
          entityName,
          "attribute "
              + attribute
              + "'s JdbcType "
              + jdbcType.getClass().getName()
              + " binds and reads the column with its own JDBC code, which fencing cannot replay"
              + " before the write, so the row could be read back as another resource than the"
              + " one judged; use one of Hibernate's JDBC types (@JdbcTypeCode), or make the"
              + " column value with an AttributeConverter");
    }
    BasicValueConverter<Object, Object> converter =
        (BasicValueConverter<Object, Object>) mapping.getValueConverter();
    JavaType<Object> jdbcJavaType = (JavaType<Object>) mapping.getJdbcJavaType();
    JavaType<Object> columnType = isHibernates(jdbcJavaType) ? null : jdbcJavaType;
    if (converter == null && columnType == null) {
      return null;
    }
    Class<Object> columnClass =
        columnType == null
            ? jdbcJavaType.getJavaTypeClass()
            : (Class<Object>)
                jdbcType
                    .getRecommendedJavaType(null, null, value.getTypeConfiguration())
                    .getJavaTypeClass();
    String through =
        converter != null
            ? "converter " + name(converter)
            : "JavaType " + jdbcJavaType.getClass().getName();
    if (columnType != null && !FencedEntityScan.isExactText(columnClass)) {
      throw FencedEntity.invalid(
          entityName,
          "attribute "
              + attribute
              + "'s "
              + through
              + " stores it as a "
              + columnClass.getName()
              + ", which the column may keep as another value (a scale, a precision or a time"
              + " zone), so the row could be read back as another resource than the one judged;"
              + " store it as a String, an integral type, a UUID or a LocalDate");
    }
    return new ConvertedAttribute(converter, columnType, columnClass, through);
  }

  /** Whether {@code type} is Hibernate's own, whose JDBC code is unwrap (or wrap) and a get/set. */
  private static boolean isHibernates(Object type) {
    return type.getClass().getName().startsWith("org.hibernate.");
  }

  /**
   * Whether the column value the application's JavaType makes must be replayed ({@link
   * FencedEntityScan} then judges that value's type, not the attribute's).
   */
  boolean hasColumnType() {
    return columnType != null;
  }

  /**
   * Requires that {@code value}, written to {@code entity}'s {@code @Fenced} column, is read back
   * as a value of {@code resource}; else marks the transaction for rollback and throws {@link
   * IllegalStateException}.
   */
  void requireReadBackAs(
      FencedEntity entity,
      Object value,
      String resource,
      SharedSessionContractImplementor session) {
    Object relational = converter == null ? value : converter.toRelationalValue(value);
    Object column =
        relational == null || columnType == null
            ? relational
            : columnType.unwrap(relational, columnClass, session);
    Object read = column == null || columnType == null ? column : columnType.wrap(column, session);
    Object back = read == null || converter == null ? read : converter.toDomainValue(read);
    if (back != null && resource.equals(entity.resourceOf(back))) {
      return;
    }
    if (session.isTransactionInProgress()) {
      session.markForRollbackOnly();
    }
    throw new IllegalStateException(
        "cannot fence a write of "
            + entity.entityName()
            + ": its @Fenced attribute "
            + entity.attribute()
            + " is "
            + value
            + " (resource "
            + resource
            + "), but "
            + through
            + " stores it as "
            + (column == null
                ? "NULL, which names no resource"
                : back == null
                    ? column + ", read back as null, which names no resource"
                    : column + ", read back as " + back + ", a row of " + entity.resourceOf(back))
            + ", so the row would not be the judged resource's; write the value the "
            + (converter != null ? "converter" : "JavaType")
            + " reads back");
  }

  private static String name(BasicValueConverter<?, ?> converter) {
    if (converter instanceof JpaAttributeConverter<?, ?> jpa) {
      return jpa.getConverterJavaType().getJavaTypeClass().getName();
    }
    return converter.getClass().getName();
  }
}
