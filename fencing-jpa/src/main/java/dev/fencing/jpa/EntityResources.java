package dev.fencing.jpa;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingConnection;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;
import org.hibernate.engine.spi.EntityEntry;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.persister.entity.EntityPersister;
import org.jspecify.annotations.Nullable;

/**
 * What a write of a {@code @Fenced} entity's row is judged by, for {@link FencingEventListener}
 * (the entity's own writes and its collections') and {@link ElementKeyWrites} (a one-to-many's key
 * in a per-row elements' table): the row's {@code @Fenced} value and resource, as the instance, the
 * session's loaded state or the database has it; and the two requirements, a fenced connection and
 * a token bound for the resource, each refusing by throwing (the session's transaction marked for
 * rollback).
 */
final class EntityResources {
  private EntityResources() {}

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
   * The resource of {@code owner}'s row as the session loaded (or last wrote) it; null if the
   * session holds no state of it (a stateless session) or the identifier names the resource.
   */
  static @Nullable String loadedResource(
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

  /** The resource of the row {@code instance}, {@code id} and {@code state} describe. */
  static String resource(
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

  /** Whether the entity's {@code @Fenced} attribute is its identifier. */
  static boolean isIdentifier(EntityPersister persister, FencedEntity entity) {
    return Objects.equals(persister.getIdentifierPropertyName(), entity.attribute());
  }

  /**
   * Returns if a token for {@code resource} is bound on this thread; otherwise marks the session's
   * transaction for rollback and throws the missing-token refusal naming the entity and {@code
   * operation}.
   */
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

  /**
   * Returns if Hibernate's connection is a {@code FencedDataSource}'s (itself, or a pool's proxy
   * that wraps one); otherwise marks the session's transaction for rollback and throws, saying how
   * to give Hibernate a fenced data source.
   */
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
}
