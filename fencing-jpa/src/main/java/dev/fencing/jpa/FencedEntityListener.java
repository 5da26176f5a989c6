package dev.fencing.jpa;

import dev.fencing.jdbc.Fencing;
import jakarta.persistence.PrePersist;
import jakarta.persistence.PreRemove;
import jakarta.persistence.PreUpdate;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * The standard JPA way to require a token for a {@link Fenced} entity:
 *
 * <pre>{@code
 * @Entity @Fenced("ledger") @EntityListeners(FencedEntityListener.class)
 * class LedgerEntry { ... }
 * }</pre>
 *
 * {@code @PrePersist}, {@code @PreUpdate} and {@code @PreRemove} throw {@link
 * FencingPersistenceException} when no token for the entity's resource is bound on the thread. It
 * uses nothing but the JPA callbacks, so the refusal comes early (at {@code persist()} and {@code
 * remove()}), but it sees less than {@link FencingIntegrator}, which Hibernate runs anyway when
 * fencing-jpa is on its classpath:
 *
 * <ul>
 *   <li>the callbacks fire when {@code persist()} and {@code remove()} are called, not when the SQL
 *       is sent: a token bound then and unbound before the flush is not noticed here (the
 *       integrator and the {@code FencedDataSource} notice it);
 *   <li>no collection changes (element collections, join tables), no bulk or native queries;
 *   <li>callbacks may not use the EntityManager or queries (JPA specification), so the connection
 *       cannot be checked: only a {@link dev.fencing.jdbc.FencedDataSource} under the provider
 *       makes PostgreSQL compare the token.
 * </ul>
 *
 * <p>A per-row resource's attribute is read through its getter ({@code getX()} or {@code isX()}) if
 * the entity has one, else from its field.
 */
public class FencedEntityListener {
  private static final ClassValue<Resolver> RESOLVERS =
      new ClassValue<>() {
        @Override
        protected Resolver computeValue(Class<?> type) {
          return Resolver.of(type);
        }
      };

  /** Called by the JPA provider. */
  public FencedEntityListener() {}

  @PrePersist
  void prePersist(Object entity) {
    require(entity, "persist");
  }

  @PreUpdate
  void preUpdate(Object entity) {
    require(entity, "update");
  }

  @PreRemove
  void preRemove(Object entity) {
    require(entity, "remove");
  }

  private static void require(Object entity, String operation) {
    Resolver resolver = RESOLVERS.get(entity.getClass());
    String resource = resolver.resource(entity);
    if (Fencing.current().token(resource).isEmpty()) {
      throw FencingPersistenceException.missingToken(
          resource, resolver.entity.entityName(), operation);
    }
  }

  /** The resource of each instance of one entity class. */
  private static final class Resolver {
    private final FencedEntity entity;
    private final @Nullable Member accessor;

    private Resolver(FencedEntity entity, @Nullable Member accessor) {
      this.entity = entity;
      this.accessor = accessor;
    }

    static Resolver of(Class<?> type) {
      FencedEntity entity = FencedEntity.of(type, type.getName());
      if (entity == null) {
        throw new IllegalArgumentException(
            "entity "
                + type.getName()
                + " lists FencedEntityListener but is not annotated @Fenced, so its resource is"
                + " unknown");
      }
      String attribute = entity.attribute();
      return new Resolver(entity, attribute == null ? null : accessor(type, attribute, entity));
    }

    String resource(Object instance) {
      if (accessor == null) {
        return entity.fixedResource();
      }
      try {
        return entity.resourceOf(
            accessor instanceof Method getter
                ? getter.invoke(instance)
                : ((Field) accessor).get(instance));
      } catch (IllegalAccessException e) {
        throw new IllegalStateException("cannot read " + accessor, e);
      } catch (InvocationTargetException e) {
        throw new IllegalStateException("cannot read " + accessor, e.getCause());
      }
    }

    private static Member accessor(Class<?> type, String attribute, FencedEntity entity) {
      String suffix = attribute.substring(0, 1).toUpperCase(Locale.ROOT) + attribute.substring(1);
      for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
        for (String name : new String[] {"get" + suffix, "is" + suffix}) {
          try {
            Method getter = c.getDeclaredMethod(name);
            getter.setAccessible(true);
            return getter;
          } catch (NoSuchMethodException e) {
            // next
          }
        }
      }
      for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
        try {
          Field field = c.getDeclaredField(attribute);
          field.setAccessible(true);
          return field;
        } catch (NoSuchFieldException e) {
          // next
        }
      }
      throw FencedEntity.invalid(
          entity.entityName(), "attribute " + attribute + " has neither a getter nor a field");
    }
  }
}
