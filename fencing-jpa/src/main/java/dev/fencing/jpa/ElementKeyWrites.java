package dev.fencing.jpa;

import java.io.Serializable;
import java.util.Collection;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import org.hibernate.collection.spi.PersistentCollection;
import org.hibernate.engine.spi.EntityEntry;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.event.spi.AbstractCollectionEvent;
import org.hibernate.event.spi.PreCollectionRecreateEvent;
import org.hibernate.event.spi.PreCollectionUpdateEvent;
import org.hibernate.persister.collection.CollectionPersister;
import org.hibernate.persister.entity.EntityPersister;
import org.hibernate.proxy.HibernateProxy;
import org.hibernate.proxy.LazyInitializer;
import org.jspecify.annotations.Nullable;

/**
 * The element rows of a unidirectional {@code @OneToMany} with {@code @JoinColumn} whose elements
 * are a per-row entity. Hibernate writes each element's foreign key (and order column) with a
 * statement on the elements' table restricted by that element's identifier ({@code update hen set
 * coop_id=? where id=?}); the rows so written are elements of the collection now or in its
 * snapshot. Before a recreate or an update of the collection, every such element needs a token for
 * its row's resource (as the session loaded or last wrote the row, read from the database when the
 * session holds no state of it, and as the instance says); the elements' table is then announced
 * for the collection's statements.
 *
 * <p>The statement that clears the key of every row of the owner ({@code update hen set
 * coop_id=null where coop_id=?}: the owner removed, the collection emptied or replaced) writes rows
 * the session may never have loaded: it is never announced, so it stays a native write of a per-row
 * table (refused unless the table is protected, whose trigger judges each row). So is any
 * collection write with an element whose row cannot be judged (an unfenced subclass, a row the
 * database no longer has): nothing is announced, fail closed.
 */
final class ElementKeyWrites {
  private final Map<String, FencedEntity> fenced;
  // by collection role: the elements' table, for the collections whose elements are per-row
  private final Map<String, FencingEventMonitor.RowWrites> byRole;

  ElementKeyWrites(
      Map<String, FencedEntity> fenced, Map<String, FencingEventMonitor.RowWrites> byRole) {
    this.fenced = fenced;
    this.byRole = byRole;
  }

  /**
   * Requires the tokens of the rows the coming write of the event's collection may write and arms
   * its statements, if it is a collection of per-row elements whose every row can be judged and
   * that sends no statement clearing the owner's key from every row.
   *
   * @throws FencingPersistenceException if a row's resource has no token bound
   */
  void check(
      AbstractCollectionEvent event,
      @Nullable SharedSessionContractImplementor session,
      String operation) {
    if (byRole.isEmpty()) {
      return;
    }
    CollectionPersister persister = event.getCollectionPersister();
    FencingEventMonitor.RowWrites writes = byRole.get(persister.getRole());
    if (writes == null || session == null) {
      return;
    }
    PersistentCollection<?> collection = event.getCollection();
    boolean update = event instanceof PreCollectionUpdateEvent;
    if (!(update || event instanceof PreCollectionRecreateEvent)
        || !collection.wasInitialized()
        || (update && (collection.empty() || collection.needsRecreate(persister)))) {
      // A removal, or an update Hibernate sends as one (CollectionUpdateAction): the key of every
      // row of the owner is cleared at once. Not announced.
      return;
    }
    String writing = operation + " " + persister.getRole() + " holding";
    for (Iterator<?> entries = collection.entries(persister); entries.hasNext(); ) {
      if (!judge(collection.getElement(entries.next()), session, writing)) {
        return;
      }
    }
    Serializable snapshot = update ? collection.getStoredSnapshot() : null;
    if (snapshot != null) { // an update also writes rows the collection held (their key cleared)
      Collection<?> held =
          snapshot instanceof Map<?, ?> map
              ? map.values()
              : snapshot instanceof Collection<?> elements ? elements : null;
      if (held == null) {
        return; // a snapshot of an unknown kind: its rows are not judged
      }
      for (Object element : held) {
        if (!judge(element, session, writing)) {
          return;
        }
      }
    }
    FencingEventMonitor.armCollection(writes);
  }

  /**
   * Requires the tokens of {@code element}'s row; false if its resource cannot be told (then the
   * collection's statements are not announced).
   */
  private boolean judge(
      @Nullable Object element, SharedSessionContractImplementor session, String operation) {
    if (element == null) {
      return true; // a gap in a list: no row
    }
    LazyInitializer lazy = HibernateProxy.extractLazyInitializer(element);
    Object instance =
        lazy == null ? element : lazy.isUninitialized() ? null : lazy.getImplementation();
    EntityPersister persister =
        instance != null
            ? session.getEntityPersister(null, instance)
            : session
                .getFactory()
                .getMappingMetamodel()
                .getEntityDescriptor(Objects.requireNonNull(lazy).getEntityName());
    FencedEntity entity = fenced.get(persister.getEntityName());
    if (entity == null || entity.attribute() == null) {
      return false; // the table's rows name their resources, but this element's are not told
    }
    EntityResources.requireFencedConnection(session, entity);
    Object id =
        instance == null
            ? Objects.requireNonNull(lazy).getInternalIdentifier()
            : persister.getIdentifier(instance, session);
    if (id == null) {
      return false;
    }
    String rowResource;
    if (EntityResources.isIdentifier(persister, entity)) {
      rowResource = entity.resourceOf(id);
    } else {
      EntityEntry entry =
          instance == null ? null : session.getPersistenceContextInternal().getEntry(instance);
      Object[] row = entry == null ? null : entry.getLoadedState();
      if (row == null) { // a stateless session's element, a proxy or a detached instance
        row = EntityResources.rowSnapshot(entity, persister, id, session);
      }
      if (row == null) {
        return false; // no such row now: whatever row a concurrent insert makes is not judged
      }
      rowResource =
          entity.resourceOf(EntityResources.attributeValue(entity, persister, instance, id, row));
      if (instance != null) {
        String said =
            entity.resourceOf(
                EntityResources.attributeValue(entity, persister, instance, id, null));
        if (!said.equals(rowResource)) {
          EntityResources.requireToken(session, entity, said, operation);
        }
      }
    }
    EntityResources.requireToken(session, entity, rowResource, operation);
    return true;
  }
}
