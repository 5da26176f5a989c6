package dev.fencing.jpa;

import dev.fencing.jdbc.FencedTables;
import jakarta.persistence.EntityListeners;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.hibernate.MappingException;
import org.hibernate.boot.Metadata;
import org.hibernate.boot.spi.BootstrapContext;
import org.hibernate.engine.jdbc.connections.spi.ConnectionProvider;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.event.service.spi.DuplicationStrategy;
import org.hibernate.event.service.spi.EventListenerRegistry;
import org.hibernate.event.spi.EventType;
import org.hibernate.integrator.spi.Integrator;
import org.hibernate.mapping.BasicValue;
import org.hibernate.mapping.Join;
import org.hibernate.mapping.PersistentClass;
import org.hibernate.mapping.Property;
import org.hibernate.mapping.Table;
import org.jspecify.annotations.Nullable;

/**
 * Plugs fencing into every Hibernate {@code SessionFactory}: Hibernate finds it through {@code
 * META-INF/services/org.hibernate.integrator.spi.Integrator}, so putting fencing-jpa on the
 * classpath is all it takes, with native and JPA bootstrap alike. Nothing to configure, no
 * Interceptor (a session's own Interceptor would silence it).
 *
 * <p>At startup it validates every {@link Fenced} entity (and every entity listing {@link
 * FencedEntityListener}) and fails naming the entity. It then listens to Hibernate's pre-insert,
 * pre-update, pre-delete and pre-upsert events, and to the pre-recreate, pre-update and pre-remove
 * events of collections, which fire right before the SQL of each write, in stateful and stateless
 * sessions. For a fenced entity, or a collection a fenced entity owns, each of them requires:
 *
 * <ul>
 *   <li>that the session's connection comes from a {@link dev.fencing.jdbc.FencedDataSource}
 *       (checked with {@code isWrapperFor(FencingConnection.class)}, so through a pool's proxy
 *       too), else an {@link IllegalStateException} says how to wire it;
 *   <li>that a token for the row's resource is bound on the thread, else {@link
 *       FencingPersistenceException} (its cause a {@link
 *       dev.fencing.jdbc.MissingFencingTokenException}) and the transaction is marked for rollback.
 * </ul>
 *
 * PostgreSQL compares the token itself, once per transaction, when the {@code FencedDataSource}
 * sends the first write. Collections that write nothing (the inverse side, {@code mappedBy}) are
 * fenced through the entities that do.
 */
public final class FencingIntegrator implements Integrator {
  /** Called by Hibernate's service loading. */
  public FencingIntegrator() {}

  @Override
  public void integrate(
      Metadata metadata,
      BootstrapContext bootstrapContext,
      SessionFactoryImplementor sessionFactory) {
    Map<String, FencedEntity> fenced = scan(metadata);
    if (fenced.isEmpty()) {
      return;
    }
    Map<String, List<String>> rowTables =
        declareTables(metadata, fenced, fencedTables(sessionFactory));
    FencingEventListener listener = new FencingEventListener(fenced, rowTables);
    EventListenerRegistry registry = sessionFactory.getEventListenerRegistry();
    // Registered twice (service loading plus an explicit registration): keep one.
    registry.addDuplicationStrategy(
        new DuplicationStrategy() {
          @Override
          public boolean areMatch(Object listener, Object original) {
            return listener instanceof FencingEventListener
                && original instanceof FencingEventListener;
          }

          @Override
          public Action getAction() {
            return Action.KEEP_ORIGINAL;
          }
        });
    registry.appendListeners(EventType.PRE_INSERT, listener);
    registry.appendListeners(EventType.PRE_UPDATE, listener);
    registry.appendListeners(EventType.PRE_DELETE, listener);
    registry.appendListeners(EventType.PRE_UPSERT, listener);
    registry.appendListeners(EventType.PRE_COLLECTION_RECREATE, listener);
    registry.appendListeners(EventType.PRE_COLLECTION_UPDATE, listener);
    registry.appendListeners(EventType.PRE_COLLECTION_REMOVE, listener);
    registry.appendListeners(EventType.POST_INSERT, listener);
    registry.appendListeners(EventType.POST_UPDATE, listener);
    registry.appendListeners(EventType.POST_DELETE, listener);
    registry.appendListeners(EventType.POST_UPSERT, listener);
    registry.appendListeners(EventType.FLUSH, listener); // after Hibernate's, which flushes
    registry.appendListeners(EventType.AUTO_FLUSH, listener);
  }

  /**
   * The declarations of the data source this {@code SessionFactory} takes its connections from, if
   * it is (or wraps) a {@code FencedDataSource}; null otherwise (Hibernate's own pool, a
   * multi-tenant provider: its entity writes are refused by the listeners anyway).
   */
  private static @Nullable FencedTables fencedTables(SessionFactoryImplementor sessionFactory) {
    ConnectionProvider provider =
        sessionFactory.getServiceRegistry().getService(ConnectionProvider.class);
    if (provider == null || !provider.isUnwrappableAs(DataSource.class)) {
      return null;
    }
    try {
      return FencedTables.of(provider.unwrap(DataSource.class)).orElse(null);
    } catch (SQLException e) {
      throw new IllegalStateException(
          "fencing-jpa could not ask the SessionFactory's DataSource whether it is fenced", e);
    }
  }

  /**
   * Declares the tables of every fenced entity (its own, its superclasses', its secondary tables)
   * to the data source's {@link FencedTables}, so that a bulk or native write of them needs the
   * entity's own token; returns the tables of the entities whose rows name their own resources, by
   * entity name, for their writes to be announced.
   */
  private static Map<String, List<String>> declareTables(
      Metadata metadata, Map<String, FencedEntity> fenced, @Nullable FencedTables declared) {
    Map<String, List<String>> rowTables = new HashMap<>();
    for (PersistentClass entity : metadata.getEntityBindings()) {
      FencedEntity fencing = fenced.get(entity.getEntityName());
      if (fencing == null) {
        continue;
      }
      List<String> tables = new ArrayList<>();
      List<Table> written = new ArrayList<>(entity.getTableClosure());
      for (Join join : entity.getJoinClosure()) {
        written.add(join.getTable()); // a @SecondaryTable: written with the entity's rows
      }
      for (Table table : written) {
        String name = table.isQuoted() ? '"' + table.getName() + '"' : table.getName();
        tables.add(name);
        if (declared == null) {
          continue;
        }
        if (fencing.attribute() == null) {
          declared.requireToken(name, fencing.fixedResource());
        } else {
          declared.requireRowResources(name);
        }
      }
      if (fencing.attribute() != null) {
        rowTables.put(entity.getEntityName(), List.copyOf(tables));
      }
    }
    return Map.copyOf(rowTables);
  }

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
        fencing = FencedEntity.of(type, name);
        if (fencing == null) {
          requireNoFencedEntityListener(type, name);
          continue;
        }
        String attribute = fencing.attribute();
        if (attribute != null) {
          requireBasicAttribute(entity, attribute);
        }
      } catch (IllegalArgumentException e) {
        throw new MappingException(e.getMessage(), e);
      }
      fenced.put(name, fencing);
    }
    return Map.copyOf(fenced);
  }

  private static void requireBasicAttribute(PersistentClass entity, String attribute) {
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
    if (!(property.getValue() instanceof BasicValue)) {
      throw FencedEntity.invalid(
          entity.getEntityName(),
          "attribute "
              + attribute
              + " is not a basic attribute (a column value); an association, collection or"
              + " embeddable cannot name a resource");
    }
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

  @Override
  public String toString() {
    return "FencingIntegrator";
  }
}
