package dev.fencing.jpa;

import dev.fencing.jdbc.FencedTables;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.hibernate.boot.Metadata;
import org.hibernate.boot.registry.classloading.spi.ClassLoaderService;
import org.hibernate.boot.spi.BootstrapContext;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.event.monitor.internal.EmptyEventMonitor;
import org.hibernate.event.monitor.spi.EventMonitor;
import org.hibernate.event.service.spi.DuplicationStrategy;
import org.hibernate.event.service.spi.EventListenerRegistry;
import org.hibernate.event.spi.EventType;
import org.hibernate.integrator.spi.Integrator;
import org.hibernate.mapping.Join;
import org.hibernate.mapping.OneToMany;
import org.hibernate.mapping.PersistentClass;
import org.hibernate.mapping.Table;
import org.jspecify.annotations.Nullable;

/**
 * Plugs fencing into every Hibernate {@code SessionFactory}: Hibernate finds it through {@code
 * META-INF/services/org.hibernate.integrator.spi.Integrator}, so putting fencing-jpa on the
 * classpath is all it takes, with native and JPA bootstrap alike. Nothing to configure, no
 * Interceptor (a session's own Interceptor would silence it).
 *
 * <p>At startup it validates every {@link Fenced} entity (and every entity listing {@link
 * FencedEntityListener}) and fails naming the entity; it also fails when a foreign key's {@code ON
 * DELETE} / {@code ON UPDATE} action would let the database write a fenced table without its
 * tokens, declared in the mapping or, once any schema management has run, found in the database's
 * catalog (a migration's). It then listens to Hibernate's pre-insert, pre-update, pre-delete and
 * pre-upsert events, and to the pre-recreate, pre-update and pre-remove events of collections,
 * which fire right before the SQL of each write, in stateful and stateless sessions. For a fenced
 * entity, or a collection a fenced entity owns, each of them requires:
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
 * For an entity whose rows name their resources, the statement that follows is announced to the
 * {@code FencedDataSource} for exactly the time Hibernate runs it, by fencing-jpa's {@code
 * EventMonitor} ({@link FencingEventMonitor}, also found by service loading): a write another
 * listener vetoes, or that fails before its statement, leaves nothing a native write could use.
 * Hibernate uses one {@code EventMonitor} per {@code SessionFactory}, the first it finds; when
 * another library's comes first, a {@code SessionFactory} with such entities fails to start.
 *
 * <p>PostgreSQL compares the token itself, once per transaction, when the {@code FencedDataSource}
 * sends the first write. Collections that write nothing (the inverse side, {@code mappedBy}) are
 * fenced through the entities that do.
 */
public final class FencingIntegrator implements Integrator {
  /**
   * The statements one entity write may send to an optional secondary table before PostgreSQL 15
   * ({@code OptionalTableUpdateWithUpsertOperation}: update, then insert when no row was updated;
   * it updates again after a concurrent insert only for a non-optional table), each announced.
   */
  private static final int OPTIONAL_ROW_STATEMENTS = 2;

  /** Called by Hibernate's service loading. */
  public FencingIntegrator() {}

  @Override
  public void integrate(
      Metadata metadata,
      BootstrapContext bootstrapContext,
      SessionFactoryImplementor sessionFactory) {
    Map<String, FencedEntity> fenced = FencedEntityScan.scan(metadata);
    DatabaseCascades cascades = DatabaseCascades.of(metadata, fenced);
    cascades.checkMapping(); // before Hibernate may create the keys
    // After it may have (its schema management observes the SessionFactory before this one does):
    sessionFactory.addObserver(new CascadeCatalog(cascades));
    useEventMonitor(sessionFactory, fenced); // before anything is declared: it may refuse
    FencedTables declared = fenced.isEmpty() ? null : FencedTablesLookup.find(sessionFactory);
    Map<String, FencingEventMonitor.RowWrites> rowWrites =
        fenced.isEmpty() ? Map.of() : declareTables(metadata, fenced, declared);
    Map<String, FencingEventMonitor.RowWrites> collectionWrites =
        fenced.isEmpty() ? Map.of() : declareCollectionTables(metadata, fenced, declared);
    ElementKeyWrites elementKeyWrites =
        new ElementKeyWrites(
            fenced, fenced.isEmpty() ? Map.of() : elementKeyTables(metadata, fenced));
    FencingEventListener listener =
        new FencingEventListener(fenced, rowWrites, collectionWrites, elementKeyWrites);
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
    // Every SessionFactory's entity writes clear what another one armed on the thread.
    registry.appendListeners(EventType.PRE_INSERT, listener);
    registry.appendListeners(EventType.PRE_UPDATE, listener);
    registry.appendListeners(EventType.PRE_DELETE, listener);
    registry.appendListeners(EventType.PRE_UPSERT, listener);
    if (fenced.isEmpty()) {
      return;
    }
    registry.appendListeners(EventType.PRE_COLLECTION_RECREATE, listener);
    registry.appendListeners(EventType.PRE_COLLECTION_UPDATE, listener);
    registry.appendListeners(EventType.PRE_COLLECTION_REMOVE, listener);
  }

  /**
   * Makes the {@link FencingEventMonitor} Hibernate will use for this {@code SessionFactory} pass
   * on what it does not handle to the monitor Hibernate would have used without it. Hibernate takes
   * the first {@code EventMonitor} its class loading service finds (after the integrators run, from
   * the same cached list); if that is another one, no per-row entity's write would be announced:
   * such a {@code SessionFactory} is refused at start (fail closed, and clearly) rather than have
   * every such write refused later by the data source.
   */
  private static void useEventMonitor(
      SessionFactoryImplementor sessionFactory, Map<String, FencedEntity> fenced) {
    Collection<EventMonitor> monitors =
        sessionFactory
            .getServiceRegistry()
            .requireService(ClassLoaderService.class)
            .loadJavaServices(EventMonitor.class);
    EventMonitor chosen = monitors.isEmpty() ? null : monitors.iterator().next();
    if (chosen instanceof FencingEventMonitor ours) {
      EventMonitor delegate = new EmptyEventMonitor();
      for (EventMonitor monitor : monitors) {
        if (!(monitor instanceof FencingEventMonitor)) {
          delegate = monitor;
          break;
        }
      }
      ours.delegateTo(delegate);
      return;
    }
    Set<String> perRow = new TreeSet<>();
    fenced.forEach(
        (name, entity) -> {
          if (entity.attribute() != null) {
            perRow.add(name);
          }
        });
    if (!perRow.isEmpty()) {
      throw new IllegalStateException(
          "fencing-jpa: "
              + perRow
              + " name their resources per row, which needs fencing-jpa's EventMonitor"
              + " (dev.fencing.jpa.FencingEventMonitor), but Hibernate would use "
              + (chosen == null ? "none" : chosen.getClass().getName())
              + ", found first of "
              + monitors.stream().map(m -> m.getClass().getName()).toList()
              + ". Put fencing-jpa ahead of the jar providing it on the class path, or remove"
              + " that jar's META-INF/services/org.hibernate.event.monitor.spi.EventMonitor;"
              + " fencing-jpa passes what it does not handle on to the other monitor.");
    }
  }

  /**
   * Declares the tables of every fenced entity (its own, its superclasses' but a {@code
   * TABLE_PER_CLASS} subclass's, its secondary tables) to the data source's {@link FencedTables},
   * so that a bulk or native write of them needs the entity's own token; returns the tables of the
   * entities whose rows name their own resources, by entity name, for their writes to be announced.
   */
  private static Map<String, FencingEventMonitor.RowWrites> declareTables(
      Metadata metadata, Map<String, FencedEntity> fenced, @Nullable FencedTables declared) {
    Map<String, FencingEventMonitor.RowWrites> rowWrites = new HashMap<>();
    for (PersistentClass entity : metadata.getEntityBindings()) {
      FencedEntity fencing = fenced.get(entity.getEntityName());
      if (fencing == null) {
        continue;
      }
      List<String> tables = new ArrayList<>();
      List<Table> written = new ArrayList<>(DatabaseCascades.rowTables(entity));
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
        for (Join join : entity.getJoinClosure()) {
          if (join.isOptional()) {
            // Its row may be missing: Hibernate (before PostgreSQL 15, without MERGE) updates it
            // and inserts it when no row was updated (a concurrent insert fails the write, no
            // retry): up to two statements of this one write, both for this row.
            Table table = join.getTable();
            String name = table.isQuoted() ? '"' + table.getName() + '"' : table.getName();
            for (int i = 1; i < OPTIONAL_ROW_STATEMENTS; i++) {
              tables.add(name);
            }
          }
        }
        rowWrites.put(
            entity.getEntityName(),
            new FencingEventMonitor.RowWrites(entity.getEntityName(), List.copyOf(tables)));
      }
    }
    return Map.copyOf(rowWrites);
  }

  /**
   * Declares the tables of the collections fenced entities own that have their own table (element
   * collections, join tables; not a one-to-many's foreign key in the other entity's table, nor the
   * inverse side), so that a bulk or native write of them needs the owner's token as the owner's
   * own tables do; returns the tables of those whose owner's rows name their resources, by role,
   * for their writes to be announced.
   */
  private static Map<String, FencingEventMonitor.RowWrites> declareCollectionTables(
      Metadata metadata, Map<String, FencedEntity> fenced, @Nullable FencedTables declared) {
    Map<String, FencingEventMonitor.RowWrites> collectionWrites = new HashMap<>();
    for (org.hibernate.mapping.Collection collection : metadata.getCollectionBindings()) {
      if (collection.isInverse() || collection.isOneToMany()) {
        continue;
      }
      Table table = collection.getCollectionTable();
      String name = table.isQuoted() ? '"' + table.getName() + '"' : table.getName();
      for (PersistentClass entity : metadata.getEntityBindings()) {
        FencedEntity fencing = fenced.get(entity.getEntityName());
        if (fencing == null || !ownsOrInherits(entity, collection.getOwner())) {
          continue; // a fenced subclass writes the collections its superclasses declare
        }
        if (fencing.attribute() == null) {
          if (declared != null) {
            declared.requireToken(name, fencing.fixedResource());
          }
        } else {
          if (declared != null) {
            declared.requireRowResources(name);
          }
          collectionWrites.put(
              collection.getRole(),
              FencingEventMonitor.RowWrites.ofCollection(collection.getRole(), name));
        }
      }
    }
    return Map.copyOf(collectionWrites);
  }

  /**
   * The elements' tables of the one-to-many collections with a join column (not {@code mappedBy},
   * no join table) whose elements' rows name their resources, by role: Hibernate writes their
   * foreign key with the collection's statements on that table, announced by {@link
   * ElementKeyWrites} once the elements' tokens are required.
   */
  private static Map<String, FencingEventMonitor.RowWrites> elementKeyTables(
      Metadata metadata, Map<String, FencedEntity> fenced) {
    Map<String, FencingEventMonitor.RowWrites> byRole = new HashMap<>();
    for (org.hibernate.mapping.Collection collection : metadata.getCollectionBindings()) {
      if (collection.isInverse()
          || !(collection.getElement() instanceof OneToMany element)
          || element.getReferencedEntityName() == null) {
        continue;
      }
      FencedEntity elements = fenced.get(element.getReferencedEntityName());
      if (elements != null && elements.attribute() != null) {
        Table table = collection.getCollectionTable();
        String name = table.isQuoted() ? '"' + table.getName() + '"' : table.getName();
        byRole.put(
            collection.getRole(),
            FencingEventMonitor.RowWrites.ofCollection(collection.getRole(), name));
      }
    }
    return Map.copyOf(byRole);
  }

  private static boolean ownsOrInherits(PersistentClass entity, PersistentClass owner) {
    for (PersistentClass c = entity; c != null; c = c.getSuperclass()) {
      if (c == owner) {
        return true;
      }
    }
    return false;
  }

  @Override
  public String toString() {
    return "FencingIntegrator";
  }
}
