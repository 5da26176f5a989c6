package dev.fencing.jpa;

import java.util.Map;
import org.hibernate.collection.spi.PersistentCollection;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.event.spi.AbstractCollectionEvent;
import org.hibernate.event.spi.AbstractPreDatabaseOperationEvent;
import org.hibernate.event.spi.PreCollectionRecreateEvent;
import org.hibernate.event.spi.PreCollectionRecreateEventListener;
import org.hibernate.event.spi.PreCollectionRemoveEvent;
import org.hibernate.event.spi.PreCollectionRemoveEventListener;
import org.hibernate.event.spi.PreCollectionUpdateEvent;
import org.hibernate.event.spi.PreCollectionUpdateEventListener;
import org.hibernate.event.spi.PreDeleteEvent;
import org.hibernate.event.spi.PreDeleteEventListener;
import org.hibernate.event.spi.PreInsertEvent;
import org.hibernate.event.spi.PreInsertEventListener;
import org.hibernate.event.spi.PreUpdateEvent;
import org.hibernate.event.spi.PreUpdateEventListener;
import org.hibernate.event.spi.PreUpsertEvent;
import org.hibernate.event.spi.PreUpsertEventListener;
import org.hibernate.persister.entity.EntityPersister;
import org.jspecify.annotations.Nullable;

/**
 * The Hibernate side of {@link FencingIntegrator}: before each write of a fenced entity or of a
 * collection it owns, requires a fenced connection and a bound token for the row's resource. Never
 * vetoes (a veto would skip the write silently); refuses by throwing. For an entity whose rows name
 * their resources it then arms the write's tables for {@link FencingEventMonitor} to announce once
 * Hibernate really runs the statement; every entity pre-event first clears what an earlier one
 * armed. A one-to-many's key in a per-row elements' table is judged by those rows ({@link
 * ElementKeyWrites}).
 */
final class FencingEventListener
    implements PreInsertEventListener,
        PreUpdateEventListener,
        PreDeleteEventListener,
        PreUpsertEventListener,
        PreCollectionRecreateEventListener,
        PreCollectionUpdateEventListener,
        PreCollectionRemoveEventListener {

  private final Map<String, FencedEntity> fenced;
  private final Map<String, FencingEventMonitor.RowWrites> rowWrites;
  // by collection role: the table of a collection whose per-row owner's rows name their resources
  private final Map<String, FencingEventMonitor.RowWrites> collectionWrites;
  private final ElementKeyWrites elementKeyWrites;

  /**
   * With no entity fenced, the listener only clears what a write of another {@code SessionFactory}
   * armed on the thread (see {@link FencingEventMonitor}).
   */
  FencingEventListener(
      Map<String, FencedEntity> fenced,
      Map<String, FencingEventMonitor.RowWrites> rowWrites,
      Map<String, FencingEventMonitor.RowWrites> collectionWrites,
      ElementKeyWrites elementKeyWrites) {
    this.fenced = fenced;
    this.rowWrites = rowWrites;
    this.collectionWrites = collectionWrites;
    this.elementKeyWrites = elementKeyWrites;
  }

  @Override
  public boolean onPreInsert(PreInsertEvent event) {
    entityWrite(event, event.getState(), null, false, "insert");
    return false;
  }

  @Override
  public boolean onPreUpdate(PreUpdateEvent event) {
    entityWrite(event, event.getState(), event.getOldState(), true, "update");
    return false;
  }

  @Override
  public boolean onPreDelete(PreDeleteEvent event) {
    entityWrite(event, event.getDeletedState(), event.getDeletedState(), true, "delete");
    return false;
  }

  @Override
  public boolean onPreUpsert(PreUpsertEvent event) {
    entityWrite(event, event.getState(), null, true, "upsert");
    return false;
  }

  @Override
  public void onPreRecreateCollection(PreCollectionRecreateEvent event) {
    collectionWrite(event, "write the collection");
  }

  @Override
  public void onPreUpdateCollection(PreCollectionUpdateEvent event) {
    collectionWrite(event, "update the collection");
  }

  @Override
  public void onPreRemoveCollection(PreCollectionRemoveEvent event) {
    collectionWrite(event, "remove the collection");
  }

  private void entityWrite(
      AbstractPreDatabaseOperationEvent event,
      Object @Nullable [] state,
      Object @Nullable [] oldState,
      boolean rowMayExist,
      String operation) {
    // What a write before this one armed and Hibernate skipped (vetoed, or failed before its
    // statement) must not be announced for this one; nor must this one's, if it is refused below.
    FencingEventMonitor.disarm();
    EntityPersister persister = event.getPersister();
    FencedEntity entity = fenced.get(persister.getEntityName());
    if (entity == null) {
      return;
    }
    SharedSessionContractImplementor session = event.getSession();
    EntityResources.requireFencedConnection(session, entity);
    if (oldState != null && state != null) {
      keepUnwrittenAttribute(entity, persister, state, oldState);
    }
    Object value =
        EntityResources.attributeValue(entity, persister, event.getEntity(), event.getId(), state);
    String resource =
        entity.attribute() == null ? entity.fixedResource() : entity.resourceOf(value);
    ConvertedAttribute stored = entity.stored();
    if (stored != null && !operation.equals("delete")) { // the column gets the value as stored
      stored.requireReadBackAs(entity, value, resource, session);
    }
    EntityResources.requireToken(session, entity, resource, operation);
    if (rowMayExist && oldState == null && entity.attribute() != null) {
      // No state of the row was loaded (a StatelessSession's update, delete or upsert): the
      // statement writes the row its identifier names, whatever the instance says its attribute
      // is, so that row is judged as the database has it now (null: there is none).
      oldState = EntityResources.rowSnapshot(entity, persister, event.getId(), session);
    }
    if (oldState != null && entity.attribute() != null) {
      // The row moves from one resource to another: it must be fenced for both.
      Object oldValue =
          EntityResources.attributeValue(
              entity, persister, event.getEntity(), event.getId(), oldState);
      if (!sameText(oldValue, value)) {
        String old = entity.resourceOf(oldValue);
        if (!old.equals(resource)) {
          EntityResources.requireToken(session, entity, old, operation);
        }
      }
    }
    // The statement that follows writes one row, whose tokens were just required. Armed only now
    // (a refusal above arms nothing), and announced by the monitor only once Hibernate really
    // runs it: after every other pre-event listener (which may veto) and the Interceptor.
    FencingEventMonitor.RowWrites writes = rowWrites.get(persister.getEntityName());
    if (writes != null) {
      FencingEventMonitor.arm(writes);
    }
  }

  /**
   * An update never writes a non-updatable {@code @Fenced} attribute's column: the row keeps its
   * resource whatever the instance now says. The state written (which becomes the loaded state)
   * gets the old value back, so that this update and the collection writes after it are judged by
   * the row's resource, not by a value the database never got.
   */
  private static void keepUnwrittenAttribute(
      FencedEntity entity, EntityPersister persister, Object[] state, Object[] oldState) {
    String attribute = entity.attribute();
    if (attribute == null || EntityResources.isIdentifier(persister, entity)) {
      return;
    }
    int position = persister.findAttributeMapping(attribute).getStateArrayPosition();
    if (!persister.getPropertyUpdateability()[position]) {
      state[position] = oldState[position];
    }
  }

  /**
   * Whether {@code a} and {@code b} are equal values of a type whose text is its value (so their
   * resources are the same, without making the text: an update that keeps the attribute).
   */
  private static boolean sameText(@Nullable Object a, @Nullable Object b) {
    return a != null
        && b != null
        && a.getClass() == b.getClass()
        && (a instanceof String
            || a instanceof Integer
            || a instanceof Long
            || a instanceof Short
            || a instanceof java.util.UUID)
        && a.equals(b);
  }

  private void collectionWrite(AbstractCollectionEvent event, String operation) {
    FencingEventMonitor.disarmCollection(); // nothing armed earlier is announced for this one
    if (event.getCollectionPersister().isInverse()) {
      return; // writes nothing: the entities on the owning side are fenced themselves
    }
    SharedSessionContractImplementor session = sessionOf(event);
    FencedEntity entity = fenced.get(event.getAffectedOwnerEntityName());
    if (entity != null) {
      ownerWrite(event, entity, session, operation);
    }
    // A one-to-many's foreign key in a per-row elements' table: the rows are the elements'.
    elementKeyWrites.check(event, session, operation);
  }

  /** Requires the owner's tokens for a write of its collection; arms the collection's table. */
  private void ownerWrite(
      AbstractCollectionEvent event,
      FencedEntity entity,
      @Nullable SharedSessionContractImplementor session,
      String operation) {
    String ownerName = event.getAffectedOwnerEntityName();
    if (session != null) {
      EntityResources.requireFencedConnection(session, entity);
    }
    String resource;
    if (entity.attribute() == null) {
      resource = entity.fixedResource();
    } else {
      EntityPersister owner =
          event
              .getCollectionPersister()
              .getFactory()
              .getMappingMetamodel()
              .getEntityDescriptor(ownerName);
      Object ownerEntity = event.getAffectedOwnerOrNull();
      if (ownerEntity == null && !EntityResources.isIdentifier(owner, entity)) {
        throw new IllegalStateException(
            "cannot fence a write of a collection of "
                + ownerName
                + " ("
                + event.getCollectionPersister().getRole()
                + "): its owner is not loaded, so its resource is unknown");
      }
      resource =
          EntityResources.resource(
              entity, owner, ownerEntity, event.getAffectedOwnerIdOrNull(), null);
      String loaded = EntityResources.loadedResource(entity, owner, ownerEntity, session);
      if (loaded != null && !loaded.equals(resource)) {
        // The instance names another resource than its row has (a non-updatable attribute changed
        // in memory): the collection's rows are the row's, so its resource's token is needed too.
        EntityResources.requireToken(
            session,
            entity,
            loaded,
            operation + " " + event.getCollectionPersister().getRole() + " of");
      }
    }
    EntityResources.requireToken(
        session,
        entity,
        resource,
        operation + " " + event.getCollectionPersister().getRole() + " of");
    if (entity.attribute() != null) {
      FencingEventMonitor.RowWrites writes =
          collectionWrites.get(event.getCollectionPersister().getRole());
      if (writes != null) {
        FencingEventMonitor.armCollection(
            writes); // the collection's statements, announced by the monitor
      }
    }
  }

  /**
   * The session of a collection event. A stateless session passes no event source (the event's
   * {@code getSession()} then throws), but its collections carry the session.
   */
  private static @Nullable SharedSessionContractImplementor sessionOf(
      AbstractCollectionEvent event) {
    PersistentCollection<?> collection = event.getCollection();
    if (collection != null && collection.getSession() != null) {
      return collection.getSession();
    }
    try {
      return event.getSession();
    } catch (NullPointerException noSource) {
      return null; // the owner's own insert, update or delete checks the connection
    }
  }

  @Override
  public String toString() {
    return "FencingEventListener" + fenced.keySet();
  }
}
