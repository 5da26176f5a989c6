package dev.fencing.jpa;

import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.metamodel.mapping.BasicValuedModelPart;
import org.hibernate.metamodel.mapping.ModelPart;
import org.hibernate.persister.entity.EntityPersister;
import org.hibernate.type.descriptor.converter.spi.BasicValueConverter;
import org.hibernate.type.descriptor.converter.spi.JpaAttributeConverter;

/**
 * For {@link FencingEventListener}: a {@link Fenced} attribute read and written through a converter
 * (an {@code AttributeConverter}, named or applied automatically) names a row's resource by the
 * value its reads convert back from the column, not by the value the entity holds. Before the
 * write, the value is converted to the column and back, with the converter Hibernate uses; the
 * write is refused unless that names the resource judged. A converter that maps two values to one
 * column value can then no longer let one resource's holder write rows read back as another's.
 */
final class ConvertedAttribute {
  private ConvertedAttribute() {}

  /**
   * Requires that {@code value}, written to {@code entity}'s {@code @Fenced} column through its
   * converter (if it has one), is read back as a value of {@code resource}; else marks the
   * transaction for rollback and throws {@link IllegalStateException}.
   */
  @SuppressWarnings("unchecked")
  static void requireReadBackAs(
      FencedEntity entity,
      EntityPersister persister,
      Object value,
      String resource,
      SharedSessionContractImplementor session) {
    String attribute = entity.attribute();
    if (attribute == null) {
      return;
    }
    ModelPart part =
        attribute.equals(persister.getIdentifierPropertyName())
            ? persister.getIdentifierMapping()
            : persister.findAttributeMapping(attribute);
    BasicValueConverter<Object, Object> converter =
        part instanceof BasicValuedModelPart basic
            ? (BasicValueConverter<Object, Object>) basic.getJdbcMapping().getValueConverter()
            : null;
    if (converter == null) {
      return; // the column gets the value itself (its type's text round-trips: FencedEntityScan)
    }
    Object column = converter.toRelationalValue(value);
    Object back = column == null ? null : converter.toDomainValue(column);
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
            + attribute
            + " is "
            + value
            + " (resource "
            + resource
            + "), but converter "
            + name(converter)
            + " stores it as "
            + (column == null
                ? "NULL, which names no resource"
                : back == null
                    ? column + ", read back as null, which names no resource"
                    : column + ", read back as " + back + ", a row of " + entity.resourceOf(back))
            + ", so the row would not be the judged resource's; write the value the converter"
            + " reads back");
  }

  private static String name(BasicValueConverter<?, ?> converter) {
    if (converter instanceof JpaAttributeConverter<?, ?> jpa) {
      return jpa.getConverterJavaType().getJavaTypeClass().getName();
    }
    return converter.getClass().getName();
  }
}
