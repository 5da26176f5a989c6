package dev.fencing.jpa;

import dev.fencing.jdbc.FencingToken;
import org.jspecify.annotations.Nullable;

/**
 * What {@link Fenced} says about one entity: a fixed resource, or a prefix and the attribute that
 * names each row's resource. Only the annotation's own rules (and that the fixed resource or prefix
 * is a valid resource name) are checked here; whether the attribute exists is up to the mechanism
 * that reads it.
 */
final class FencedEntity {
  private final String entityName;
  private final @Nullable String fixedResource;
  private final String prefix;
  private final @Nullable String attribute;
  private final @Nullable ConvertedAttribute stored;

  private FencedEntity(
      String entityName,
      @Nullable String fixedResource,
      String prefix,
      @Nullable String attribute,
      @Nullable ConvertedAttribute stored) {
    this.entityName = entityName;
    this.fixedResource = fixedResource;
    this.prefix = prefix;
    this.attribute = attribute;
    this.stored = stored;
  }

  /**
   * The fencing of {@code type} (null if it is not {@link Fenced}), named {@code entityName} in
   * messages.
   *
   * @throws IllegalArgumentException if the annotation breaks its rules
   */
  static @Nullable FencedEntity of(Class<?> type, String entityName) {
    Fenced fenced = type.getAnnotation(Fenced.class);
    if (fenced == null) {
      return null;
    }
    boolean hasValue = !fenced.value().isEmpty();
    boolean hasAttribute = !fenced.attribute().isEmpty();
    if (hasValue == hasAttribute) {
      throw invalid(
          entityName,
          "give exactly one of value (a fixed resource) and attribute (one resource per row), was "
              + describe(fenced));
    }
    if (hasValue && !fenced.prefix().isEmpty()) {
      throw invalid(
          entityName, "prefix goes with attribute only, not with value, was " + describe(fenced));
    }
    if (hasValue) {
      requireValidName(entityName, "value", fenced.value());
    } else if (!fenced.prefix().isEmpty()) {
      requireValidName(entityName, "prefix", fenced.prefix());
    }
    return hasValue
        ? new FencedEntity(entityName, fenced.value(), "", null, null)
        : new FencedEntity(entityName, null, fenced.prefix(), fenced.attribute(), null);
  }

  /** The database would refuse every write of the entity: say so when Hibernate starts. */
  private static void requireValidName(String entityName, String element, String name) {
    try {
      FencingToken.requireValidResource(name);
    } catch (IllegalArgumentException e) {
      throw invalid(
          entityName,
          element + " \"" + name + "\" is not a valid resource name: " + e.getMessage());
    }
  }

  static IllegalArgumentException invalid(String entityName, String problem) {
    return new IllegalArgumentException("@Fenced on entity " + entityName + ": " + problem);
  }

  private static String describe(Fenced fenced) {
    return "@Fenced(value = \""
        + fenced.value()
        + "\", prefix = \""
        + fenced.prefix()
        + "\", attribute = \""
        + fenced.attribute()
        + "\")";
  }

  String entityName() {
    return entityName;
  }

  /** The attribute naming each row's resource, or null if the resource is fixed. */
  @Nullable String attribute() {
    return attribute;
  }

  /** This fencing, its attribute stored through {@code stored} (resolved from the mapping). */
  FencedEntity storedThrough(@Nullable ConvertedAttribute stored) {
    return new FencedEntity(entityName, fixedResource, prefix, attribute, stored);
  }

  /**
   * How the attribute's value is stored, if not as itself: each write's value must read back as the
   * resource judged; null if the column gets the value itself (or the resource is fixed).
   */
  @Nullable ConvertedAttribute stored() {
    return stored;
  }

  /** The resource of every row; only when {@link #attribute()} is null. */
  String fixedResource() {
    if (fixedResource == null) {
      throw new IllegalStateException(entityName + " has one resource per row");
    }
    return fixedResource;
  }

  /**
   * The resource of a row whose {@link #attribute()} has {@code value}.
   *
   * @throws IllegalStateException if the value is null: the row's resource is unknown
   */
  String resourceOf(@Nullable Object value) {
    if (value == null) {
      throw new IllegalStateException(
          "cannot fence a write of "
              + entityName
              + ": its @Fenced attribute "
              + attribute
              + " is null, so its resource is unknown");
    }
    return prefix + value;
  }
}
