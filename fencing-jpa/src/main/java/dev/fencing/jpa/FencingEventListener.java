package dev.fencing.jpa;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingConnection;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import java.util.Objects;
import org.hibernate.collection.spi.PersistentCollection;
import org.hibernate.engine.spi.EntityEntry;
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
    requireFencedConnection(session, entity);
    if (oldState != null && state != null) {
      keepUnwrittenAttribute(entity, persister, state, oldState);
    }
    Object value = attributeValue(entity, persister, event.getEntity(), event.getId(), state);
    String resource =
        entity.attribute() == null ? entity.fixedResource() : entity.resourceOf(value);
    ConvertedAttribute stored = entity.stored();
    if (stored != null && !operation.equals("delete")) { // the column gets the value as stored
      stored.requireReadBackAs(entity, value, resource, session);
    }
    requireToken(session, entity, resource, operation);
    if (rowMayExist && oldState == null && entity.attribute() != null) {
      // No state of the row was loaded (a StatelessSession's update, delete or upsert): the
      // statement writes the row its identifier names, whatever the instance says its attribute
      // is, so that row is judged as the database has it now (null: there is none).
      oldState = rowSnapshot(entity, persister, event.getId(), session);
    }
    if (oldState != null && entity.attribute() != null) {
      // The row moves from one resource to another: it must be fenced for both.
      Object oldValue =
          attributeValue(entity, persister, event.getEntity(), event.getId(), oldState);
      if (!sameText(oldValue, value)) {
        String old = entity.resourceOf(oldValue);
        if (!old.equals(resource)) {
          requireToken(session, entity, old, operation);
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
    if (attribute == null || isIdentifier(persister, entity)) {
      return;
    }
    int position = persister.findAttributeMapping(attribute).getStateArrayPosition();
    if (!persister.getPropertyUpdateability()[position]) {
      state[position] = oldState[position];
    }
  }

  /**
   * The state of the row with identifier {@code id} in the database, read in the session's
   * transaction; null if there is no such row, or if the identifier names the resource (the row
   * written is then the one whose resource the identifier names).
   */
  static Object @Nullable [] rowSnapshot(
      FencedEntity entity,
      EntityPersister persister,
      @Nullable Object id,
      SharedSessionContractImplementor session) {
    if (id == null || isIdentifier(persister, entity)) {
      return null;
    }
    Object[] snapshot = persister.getDatabaseSnapshot(id, session);
    if (snapshot == null && persister.getSoftDeleteMapping() != null) {
      // Hibernate's snapshot leaves out a soft-deleted row, but a stateless update still writes it
      // (its WHERE names the identifier only): it is judged by its resource all the same.
      return SoftDeletedRows.state(entity, persister, id, session);
    }
    return snapshot;
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
      requireFencedConnection(session, entity);
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
      if (ownerEntity == null && !isIdentifier(owner, entity)) {
        throw new IllegalStateException(
            "cannot fence a write of a collection of "
                + ownerName
                + " ("
                + event.getCollectionPersister().getRole()
                + "): its owner is not loaded, so its resource is unknown");
      }
      resource = resource(entity, owner, ownerEntity, event.getAffectedOwnerIdOrNull(), null);
      String loaded = loadedResource(entity, owner, ownerEntity, session);
      if (loaded != null && !loaded.equals(resource)) {
        // The instance names another resource than its row has (a non-updatable attribute changed
        // in memory): the collection's rows are the row's, so its resource's token is needed too.
        requireToken(
            session,
            entity,
            loaded,
            operation + " " + event.getCollectionPersister().getRole() + " of");
      }
    }
    requireToken(
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
   * The resource of {@code owner}'s row as the session loaded (or last wrote) it; null if the
   * session holds no state of it (a stateless session) or the identifier names the resource.
   */
  private static @Nullable String loadedResource(
      FencedEntity entity,
      EntityPersister persister,
      @Nullable Object owner,
      @Nullable SharedSessionContractImplementor session) {
    if (owner == null || session == null || isIdentifier(persister, entity)) {
      return null;
    }
    EntityEntry entry = session.getPersistenceContextInternal().getEntry(owner);
    Object[] loadedState = entry == null ? null : entry.getLoadedState();
    if (loadedState == null) {
      return null;
    }
    return entity.resourceOf(attributeValue(entity, persister, owner, null, loadedState));
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

  private static String resource(
      FencedEntity entity,
      EntityPersister persister,
      @Nullable Object instance,
      @Nullable Object id,
      Object @Nullable [] state) {
    return entity.attribute() == null
        ? entity.fixedResource()
        : entity.resourceOf(attributeValue(entity, persister, instance, id, state));
  }

  /** The value of the entity's {@code @Fenced} attribute (null when its resource is fixed). */
  static @Nullable Object attributeValue(
      FencedEntity entity,
      EntityPersister persister,
      @Nullable Object instance,
      @Nullable Object id,
      Object @Nullable [] state) {
    String attribute = entity.attribute();
    if (attribute == null) {
      return null;
    }
    if (isIdentifier(persister, entity)) {
      return id != null || instance == null ? id : persister.getIdentifier(instance);
    }
    if (state != null) {
      return state[persister.findAttributeMapping(attribute).getStateArrayPosition()];
    }
    return persister.getPropertyValue(Objects.requireNonNull(instance, "instance"), attribute);
  }

  static boolean isIdentifier(EntityPersister persister, FencedEntity entity) {
    return Objects.equals(persister.getIdentifierPropertyName(), entity.attribute());
  }

  static void requireToken(
      @Nullable SharedSessionContractImplementor session,
      FencedEntity entity,
      String resource,
      String operation) {
    if (Fencing.current().token(resource).isPresent()) {
      return;
    }
    if (session != null && session.isTransactionInProgress()) {
      session.markForRollbackOnly();
    }
    throw FencingPersistenceException.missingToken(resource, entity.entityName(), operation);
  }

  static void requireFencedConnection(
      SharedSessionContractImplementor session, FencedEntity entity) {
    Connection connection =
        session.getJdbcCoordinator().getLogicalConnection().getPhysicalConnection();
    if (connection instanceof FencingConnection) {
      return; // the FencedDataSource's own connection: isWrapperFor would say so, through a proxy
    }
    boolean isFenced;
    try {
      isFenced = connection.isWrapperFor(FencingConnection.class);
    } catch (SQLException e) {
      throw session
          .getJdbcServices()
          .getSqlExceptionHelper()
          .convert(e, "could not tell whether the connection is fenced");
    }
    if (isFenced) {
      return;
    }
    if (session.isTransactionInProgress()) {
      session.markForRollbackOnly();
    }
    throw new IllegalStateException(
        "fencing-jpa: "
            + entity.entityName()
            + " is @Fenced, but Hibernate's connection is not fenced ("
            + connection
            + "). Hibernate must get its connections from a dev.fencing.jdbc.FencedDataSource:"
            + " set hibernate.connection.datasource (or jakarta.persistence.nonJtaDataSource) to"
            + " FencedDataSource.wrap(yourPool), or make a FencedDataSource the dataSource of your"
            + " HikariCP pool; a connection URL with Hibernate's own pool is not fenced.");
  }

  @Override
  public String toString() {
    return "FencingEventListener" + fenced.keySet();
  }
}
