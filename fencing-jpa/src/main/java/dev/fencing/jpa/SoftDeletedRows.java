package dev.fencing.jpa;

import java.util.List;
import java.util.Objects;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.metamodel.mapping.AttributeMapping;
import org.hibernate.metamodel.mapping.BasicValuedModelPart;
import org.hibernate.persister.entity.EntityPersister;
import org.jspecify.annotations.Nullable;

/**
 * Reads the {@code @Fenced} attribute of a soft-deleted row ({@code @SoftDelete}), which
 * Hibernate's database snapshot leaves out while a {@code StatelessSession}'s update still writes
 * it (its {@code WHERE} names the identifier only): {@link FencingEventListener} judges that row by
 * its resource like any other.
 */
final class SoftDeletedRows {
  private SoftDeletedRows() {}

  /**
   * The state (the {@code @Fenced} attribute only) of the row with identifier {@code id} read past
   * the soft delete's restriction; null if there is none.
   */
  static Object @Nullable [] state(
      FencedEntity entity,
      EntityPersister persister,
      Object id,
      SharedSessionContractImplementor session) {
    AttributeMapping attribute =
        persister.findAttributeMapping(Objects.requireNonNull(entity.attribute()));
    if (!(attribute instanceof BasicValuedModelPart column)
        || !(persister.getIdentifierMapping() instanceof BasicValuedModelPart key)
        || !column.getContainingTableExpression().equals(key.getContainingTableExpression())) {
      throw new IllegalStateException(
          "cannot fence a write of "
              + entity.entityName()
              + " in a StatelessSession: its row may be soft-deleted (hidden from Hibernate's"
              + " reads), and its @Fenced attribute "
              + entity.attribute()
              + " is not a column of the table of its identifier, so its resource cannot be read");
    }
    List<?> rows =
        session
            .createNativeQuery(
                "select "
                    + column.getSelectionExpression()
                    + " from "
                    + column.getContainingTableExpression()
                    + " where "
                    + key.getSelectionExpression()
                    + " = ?",
                column.getJdbcMapping().getJdbcJavaType().getJavaTypeClass())
            .setParameter(1, key.getJdbcMapping().convertToRelationalValue(id))
            .getResultList();
    if (rows.isEmpty()) {
      return null;
    }
    Object[] state = new Object[persister.getNumberOfAttributeMappings()];
    state[attribute.getStateArrayPosition()] =
        column.getJdbcMapping().convertToDomainValue(rows.get(0));
    return state;
  }
}
