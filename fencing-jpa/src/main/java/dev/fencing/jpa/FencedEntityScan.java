package dev.fencing.jpa;

import jakarta.persistence.EntityListeners;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.math.BigInteger;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.hibernate.MappingException;
import org.hibernate.boot.Metadata;
import org.hibernate.boot.model.convert.spi.ConverterDescriptor;
import org.hibernate.mapping.BasicValue;
import org.hibernate.mapping.Column;
import org.hibernate.mapping.Component;
import org.hibernate.mapping.Join;
import org.hibernate.mapping.PersistentClass;
import org.hibernate.mapping.Property;
import org.hibernate.mapping.Selectable;
import org.hibernate.mapping.SimpleValue;
import org.hibernate.mapping.Table;
import org.hibernate.mapping.Value;
import org.jspecify.annotations.Nullable;

/**
 * Finds and validates, for {@link FencingIntegrator}, the {@link Fenced} entities of a mapping (and
 * the entities listing {@link FencedEntityListener}), failing naming the entity.
 */
final class FencedEntityScan {
  private FencedEntityScan() {}

  /** The fenced entities by entity name, validated. */
  static Map<String, FencedEntity> scan(Metadata metadata) {
    Map<String, FencedEntity> fenced = new HashMap<>();
    for (PersistentClass entity : metadata.getEntityBindings()) {
      if (entity.getClassName() == null) {
        continue; // a dynamic (map) entity has no class to annotate
      }
      Class<?> type = entity.getMappedClass();
      String name = entity.getEntityName();
      FencedEntity fencing;
      try {
        requireNoFencedEmbeddable(entity);
        fencing = FencedEntity.of(type, name);
        if (fencing == null) {
          requireNoFencedInterface(type, name);
          requireNoFencedEntityListener(type, name);
          continue;
        }
        String attribute = fencing.attribute();
        if (attribute != null) {
          fencing = fencing.storedThrough(requireBasicAttribute(entity, attribute));
        }
      } catch (IllegalArgumentException e) {
        throw new MappingException(e.getMessage(), e);
      }
      fenced.put(name, fencing);
    }
    return Map.copyOf(fenced);
  }

  /** How the attribute's value is stored, if not as itself (resolved once, for every write). */
  private static @Nullable ConvertedAttribute requireBasicAttribute(
      PersistentClass entity, String attribute) {
    Property property = null;
    List<String> names = new ArrayList<>();
    if (entity.hasIdentifierProperty()) {
      names.add(entity.getIdentifierProperty().getName());
      if (entity.getIdentifierProperty().getName().equals(attribute)) {
        property = entity.getIdentifierProperty();
      }
    }
    for (Property p : entity.getPropertyClosure()) {
      names.add(p.getName());
      if (p.getName().equals(attribute)) {
        property = p;
      }
    }
    if (property == null) {
      throw FencedEntity.invalid(
          entity.getEntityName(), "attribute " + attribute + " does not exist; it has " + names);
    }
    if (!(property.getValue() instanceof BasicValue value)) {
      throw FencedEntity.invalid(
          entity.getEntityName(),
          "attribute "
              + attribute
              + " is not a basic attribute (a column value); an association, collection or"
              + " embeddable cannot name a resource");
    }
    for (Column column : value.hasFormula() ? List.<Column>of() : value.getColumns()) {
      // The listener judges the attribute's value; an SQL expression would give the column (or
      // the loaded state) another one: the row would belong to another resource than the judged.
      if (column.getCustomWrite() != null
          || column.getCustomRead() != null
          || column.getAssignmentExpression() != null) {
        throw FencedEntity.invalid(
            entity.getEntityName(),
            "attribute "
                + attribute
                + "'s column "
                + column.getName()
                + " is written or read through an SQL expression (@ColumnTransformer), so the"
                + " row's column may hold another resource than the attribute");
      }
    }
    ConvertedAttribute converted = ConvertedAttribute.of(entity.getEntityName(), attribute, value);
    if (converted == null || !converted.hasColumnType()) { // else it judged the column's type
      requireExactText(entity, attribute, property, value);
    }
    if (property == entity.getIdentifierProperty()) {
      return converted; // the row the statement writes is the one its identifier names
    }
    if (property.getValueGeneratorCreator() != null) {
      // A value the database generates is left out of the insert (or update): the column gets
      // its default or a trigger's value, not the one judged. One generated in memory is not
      // needed for a resource name either: refused alike, rather than told apart.
      throw FencedEntity.invalid(
          entity.getEntityName(),
          "attribute "
              + attribute
              + "'s value is generated (@Generated, @CurrentTimestamp or another value"
              + " generator), so the row's column may hold another resource than the attribute;"
              + " name the resource with an attribute the application sets");
    }
    // The listener judges a write by the attribute's value in the entity: that must be the value
    // the row's column gets. A formula, a column the attribute does not insert, or one another
    // attribute writes (a read-only copy of an association's foreign key) could hold another
    // resource than the one the row is written with.
    if (value.hasFormula() || value.getColumns().size() != 1) {
      throw FencedEntity.invalid(
          entity.getEntityName(),
          "attribute " + attribute + " is not mapped to one column (a @Formula is never written)");
    }
    Column column = value.getColumns().get(0);
    if (!property.isInsertable() || !value.isColumnInsertable(0)) {
      throw FencedEntity.invalid(
          entity.getEntityName(),
          "attribute "
              + attribute
              + " is not insertable, so the row's column "
              + column.getName()
              + " may hold another resource than the attribute; make the @Fenced attribute the"
              + " mapping that writes the column");
    }
    List<Property> others = new ArrayList<>();
    if (entity.hasIdentifierProperty()) {
      others.add(entity.getIdentifierProperty());
    }
    others.addAll(entity.getPropertyClosure());
    for (Join join : entity.getJoinClosure()) {
      others.addAll(join.getProperties());
    }
    for (Property other : others) {
      if (other != property && writesColumn(other, value.getTable(), column)) {
        throw FencedEntity.invalid(
            entity.getEntityName(),
            "attribute "
                + attribute
                + "'s column "
                + column.getName()
                + " is also written by attribute "
                + other.getName()
                + ", so the row's column may hold another resource than the attribute; make"
                + " the other mapping read-only (insertable = false, updatable = false)");
      }
    }
    return converted;
  }

  /**
   * The Java types whose text ({@code String.valueOf}, the resource's) is the one value the column
   * stores and gives back: two values of another type may be stored as one (a scale, a precision, a
   * time zone), so the holder of one resource would write rows read back as another's.
   */
  private static final Set<Class<?>> EXACT_TEXT =
      Set.of(
          String.class,
          Character.class,
          char.class,
          Long.class,
          long.class,
          Integer.class,
          int.class,
          Short.class,
          short.class,
          Byte.class,
          byte.class,
          BigInteger.class,
          Boolean.class,
          boolean.class,
          UUID.class,
          LocalDate.class);

  /** Whether a value of {@code type} is stored as the one value its text names. */
  static boolean isExactText(Class<?> type) {
    return EXACT_TEXT.contains(type);
  }

  private static void requireExactText(
      PersistentClass entity, String attribute, Property property, BasicValue value) {
    ConverterDescriptor<?, ?> converter = value.getJpaAttributeConverterDescriptor();
    if (converter != null) {
      // The converter decides the column's value: each write's value must come back from it as
      // itself (ConvertedAttribute), and the column must give back what the converter stored.
      Type relational = converter.getRelationalValueResolvedType();
      Class<?> stored =
          relational instanceof Class<?> c
              ? c
              : relational instanceof ParameterizedType p && p.getRawType() instanceof Class<?> r
                  ? r
                  : null;
      if (stored != null && (EXACT_TEXT.contains(stored) || stored.isEnum())) {
        return;
      }
      throw FencedEntity.invalid(
          entity.getEntityName(),
          "attribute "
              + attribute
              + "'s converter "
              + converter.getAttributeConverterClass().getName()
              + " stores it as a "
              + relational.getTypeName()
              + ", which the column may keep as another value (a scale, a precision or a time"
              + " zone), so the row could be read back as another resource than the one judged;"
              + " convert it to a String, an integral type, a UUID, an enum or a LocalDate");
    }
    Class<?> type = property.getType().getReturnedClass();
    if (type == null || EXACT_TEXT.contains(type) || type.isEnum()) {
      return;
    }
    throw FencedEntity.invalid(
        entity.getEntityName(),
        "attribute "
            + attribute
            + "'s type "
            + type.getName()
            + " may be stored as another text than its value's (a scale, a precision or a time"
            + " zone of the column), so the row could be read back as another resource than the"
            + " one judged; name the resource with a String, an integral type, a UUID, an enum or"
            + " a LocalDate");
  }

  /** Whether {@code property} inserts or updates {@code column} of {@code table}. */
  private static boolean writesColumn(Property property, Table table, Column column) {
    Value value = property.getValue();
    if (value.getTable() != table || !(property.isInsertable() || property.isUpdatable())) {
      return false;
    }
    List<Selectable> selectables = value.getSelectables();
    for (int i = 0; i < selectables.size(); i++) {
      if (selectables.get(i) instanceof Column c && c.equals(column)) {
        if (!(value instanceof SimpleValue simple)
            || i >= simple.getColumnInsertability().length
            || i >= simple.getColumnUpdateability().length) {
          return true; // cannot tell: it may
        }
        if ((property.isInsertable() && simple.isColumnInsertable(i))
            || (property.isUpdatable() && simple.isColumnUpdateable(i))) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * {@code @Fenced} is inherited from superclasses only: on an interface, Java passes it on to no
   * implementing class, and the entity would be written with no token at all.
   */
  private static void requireNoFencedInterface(Class<?> type, String name) {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      Class<?> fenced = fencedInterface(c);
      if (fenced != null) {
        throw FencedEntity.invalid(
            name,
            "@Fenced is on interface "
                + fenced.getName()
                + ", which Java does not pass on to implementing classes, so the entity would"
                + " be written with no token; annotate the entity class (or a superclass)");
      }
    }
  }

  /**
   * {@code @Fenced} fences entities: on an embeddable (embedded, or the element of a collection) it
   * fenced nothing, and the embedding entity was written with no token.
   */
  private static void requireNoFencedEmbeddable(PersistentClass entity) {
    List<Property> properties = new ArrayList<>();
    if (entity.getIdentifierProperty() != null) {
      properties.add(entity.getIdentifierProperty());
    }
    properties.addAll(entity.getPropertyClosure());
    for (Join join : entity.getJoinClosure()) {
      properties.addAll(join.getProperties());
    }
    for (Property property : properties) {
      requireNoFencedEmbeddable(entity, property.getName(), property.getValue());
    }
  }

  private static void requireNoFencedEmbeddable(
      PersistentClass entity, String path, @Nullable Value value) {
    if (value instanceof org.hibernate.mapping.Collection collection) {
      requireNoFencedEmbeddable(entity, path, collection.getElement());
      return;
    }
    if (!(value instanceof Component component)) {
      return;
    }
    Class<?> type = component.getComponentClassName() == null ? null : componentClass(component);
    if (type != null && type.isAnnotationPresent(Fenced.class)) {
      throw FencedEntity.invalid(
          entity.getEntityName(),
          "@Fenced is on embeddable "
              + type.getName()
              + " (attribute "
              + path
              + "), which fences nothing: @Fenced goes on entities; annotate the entity class (or"
              + " a superclass)");
    }
    for (Property property : component.getProperties()) {
      requireNoFencedEmbeddable(entity, path + '.' + property.getName(), property.getValue());
    }
  }

  private static @Nullable Class<?> componentClass(Component component) {
    try {
      return component.getComponentClass();
    } catch (RuntimeException dynamic) {
      return null; // a dynamic (map) component has no class to annotate
    }
  }

  private static @Nullable Class<?> fencedInterface(Class<?> type) {
    for (Class<?> i : type.getInterfaces()) {
      if (i.isAnnotationPresent(Fenced.class)) {
        return i;
      }
      Class<?> inherited = fencedInterface(i);
      if (inherited != null) {
        return inherited;
      }
    }
    return null;
  }

  private static void requireNoFencedEntityListener(Class<?> type, String name) {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      EntityListeners listeners = c.getAnnotation(EntityListeners.class);
      if (listeners != null
          && Arrays.asList(listeners.value()).contains(FencedEntityListener.class)) {
        throw new IllegalArgumentException(
            "entity "
                + name
                + " lists FencedEntityListener but is not annotated @Fenced, so its resource is"
                + " unknown");
      }
    }
  }
}
