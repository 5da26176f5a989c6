package dev.fencing.jpa;

import org.hibernate.LockMode;
import org.hibernate.cache.spi.Region;
import org.hibernate.cache.spi.access.CachedDomainDataAccess;
import org.hibernate.engine.spi.EntityEntry;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.event.monitor.internal.EmptyEventMonitor;
import org.hibernate.event.monitor.spi.DiagnosticEvent;
import org.hibernate.event.monitor.spi.EventMonitor;
import org.hibernate.event.spi.AutoFlushEvent;
import org.hibernate.event.spi.FlushEvent;
import org.hibernate.persister.collection.CollectionPersister;
import org.hibernate.persister.entity.EntityPersister;
import org.jspecify.annotations.Nullable;

/**
 * An {@code EventMonitor} that passes every event to another one: the monitor Hibernate would have
 * used (hibernate-jfr's, another library's), or a no-op one until {@link #delegateTo} names it.
 * {@link FencingEventMonitor} overrides the entity write events; the tests' stand-in for another
 * library's monitor extends it too.
 */
abstract class DelegatingEventMonitor implements EventMonitor {
  private volatile EventMonitor delegate = new EmptyEventMonitor();

  /**
   * Every event goes to {@code monitor} from now on. A {@link FencingEventMonitor}, this one or
   * another, is refused: it gets what fencing-jpa's monitor does not handle itself (and this one's
   * events would go round for ever).
   */
  final void delegateTo(EventMonitor monitor) {
    if (monitor instanceof FencingEventMonitor) {
      throw new IllegalArgumentException("cannot delegate to another " + monitor);
    }
    delegate = monitor;
  }

  final EventMonitor delegate() {
    return delegate;
  }

  @Override
  public @Nullable DiagnosticEvent beginSessionOpenEvent() {
    return delegate().beginSessionOpenEvent();
  }

  @Override
  public void completeSessionOpenEvent(
      @Nullable DiagnosticEvent event, SharedSessionContractImplementor session) {
    delegate().completeSessionOpenEvent(event, session);
  }

  @Override
  public @Nullable DiagnosticEvent beginSessionClosedEvent() {
    return delegate().beginSessionClosedEvent();
  }

  @Override
  public void completeSessionClosedEvent(
      @Nullable DiagnosticEvent event, SharedSessionContractImplementor session) {
    delegate().completeSessionClosedEvent(event, session);
  }

  @Override
  public @Nullable DiagnosticEvent beginJdbcConnectionAcquisitionEvent() {
    return delegate().beginJdbcConnectionAcquisitionEvent();
  }

  @Override
  public void completeJdbcConnectionAcquisitionEvent(
      @Nullable DiagnosticEvent event,
      SharedSessionContractImplementor session,
      @Nullable Object connection) {
    delegate().completeJdbcConnectionAcquisitionEvent(event, session, connection);
  }

  @Override
  public @Nullable DiagnosticEvent beginJdbcConnectionReleaseEvent() {
    return delegate().beginJdbcConnectionReleaseEvent();
  }

  @Override
  public void completeJdbcConnectionReleaseEvent(
      @Nullable DiagnosticEvent event,
      SharedSessionContractImplementor session,
      @Nullable Object connection) {
    delegate().completeJdbcConnectionReleaseEvent(event, session, connection);
  }

  @Override
  public @Nullable DiagnosticEvent beginJdbcPreparedStatementCreationEvent() {
    return delegate().beginJdbcPreparedStatementCreationEvent();
  }

  @Override
  public void completeJdbcPreparedStatementCreationEvent(
      @Nullable DiagnosticEvent event, @Nullable String sql) {
    delegate().completeJdbcPreparedStatementCreationEvent(event, sql);
  }

  @Override
  public @Nullable DiagnosticEvent beginJdbcPreparedStatementExecutionEvent() {
    return delegate().beginJdbcPreparedStatementExecutionEvent();
  }

  @Override
  public void completeJdbcPreparedStatementExecutionEvent(
      @Nullable DiagnosticEvent event, @Nullable String sql) {
    delegate().completeJdbcPreparedStatementExecutionEvent(event, sql);
  }

  @Override
  public @Nullable DiagnosticEvent beginJdbcBatchExecutionEvent() {
    return delegate().beginJdbcBatchExecutionEvent();
  }

  @Override
  public void completeJdbcBatchExecutionEvent(
      @Nullable DiagnosticEvent event, @Nullable String sql) {
    delegate().completeJdbcBatchExecutionEvent(event, sql);
  }

  @Override
  public @Nullable DiagnosticEvent beginCachePutEvent() {
    return delegate().beginCachePutEvent();
  }

  @Override
  public void completeCachePutEvent(
      @Nullable DiagnosticEvent event,
      SharedSessionContractImplementor session,
      @Nullable Region region,
      boolean flag,
      CacheActionDescription description) {
    delegate().completeCachePutEvent(event, session, region, flag, description);
  }

  @Override
  public void completeCachePutEvent(
      @Nullable DiagnosticEvent event,
      SharedSessionContractImplementor session,
      CachedDomainDataAccess access,
      EntityPersister persister,
      boolean flag,
      CacheActionDescription description) {
    delegate().completeCachePutEvent(event, session, access, persister, flag, description);
  }

  @Override
  public void completeCachePutEvent(
      @Nullable DiagnosticEvent event,
      SharedSessionContractImplementor session,
      CachedDomainDataAccess access,
      EntityPersister persister,
      boolean flag,
      boolean flag2,
      CacheActionDescription description) {
    delegate().completeCachePutEvent(event, session, access, persister, flag, flag2, description);
  }

  @Override
  public void completeCachePutEvent(
      @Nullable DiagnosticEvent event,
      SharedSessionContractImplementor session,
      CachedDomainDataAccess access,
      CollectionPersister persister,
      boolean flag,
      CacheActionDescription description) {
    delegate().completeCachePutEvent(event, session, access, persister, flag, description);
  }

  @Override
  public @Nullable DiagnosticEvent beginCacheGetEvent() {
    return delegate().beginCacheGetEvent();
  }

  @Override
  public void completeCacheGetEvent(
      @Nullable DiagnosticEvent event,
      SharedSessionContractImplementor session,
      @Nullable Region region,
      boolean flag) {
    delegate().completeCacheGetEvent(event, session, region, flag);
  }

  @Override
  public void completeCacheGetEvent(
      @Nullable DiagnosticEvent event,
      SharedSessionContractImplementor session,
      @Nullable Region region,
      EntityPersister persister,
      boolean flag,
      boolean flag2) {
    delegate().completeCacheGetEvent(event, session, region, persister, flag, flag2);
  }

  @Override
  public void completeCacheGetEvent(
      @Nullable DiagnosticEvent event,
      SharedSessionContractImplementor session,
      @Nullable Region region,
      CollectionPersister persister,
      boolean flag) {
    delegate().completeCacheGetEvent(event, session, region, persister, flag);
  }

  @Override
  public @Nullable DiagnosticEvent beginFlushEvent() {
    return delegate().beginFlushEvent();
  }

  @Override
  public void completeFlushEvent(@Nullable DiagnosticEvent event, FlushEvent flushEvent) {
    delegate().completeFlushEvent(event, flushEvent);
  }

  @Override
  public void completeFlushEvent(
      @Nullable DiagnosticEvent event, FlushEvent flushEvent, boolean flag) {
    delegate().completeFlushEvent(event, flushEvent, flag);
  }

  @Override
  public @Nullable DiagnosticEvent beginPartialFlushEvent() {
    return delegate().beginPartialFlushEvent();
  }

  @Override
  public void completePartialFlushEvent(
      @Nullable DiagnosticEvent event, AutoFlushEvent flushEvent) {
    delegate().completePartialFlushEvent(event, flushEvent);
  }

  @Override
  public @Nullable DiagnosticEvent beginDirtyCalculationEvent() {
    return delegate().beginDirtyCalculationEvent();
  }

  @Override
  public void completeDirtyCalculationEvent(
      @Nullable DiagnosticEvent event,
      SharedSessionContractImplementor session,
      EntityPersister persister,
      @Nullable EntityEntry entry,
      int @Nullable [] dirty) {
    delegate().completeDirtyCalculationEvent(event, session, persister, entry, dirty);
  }

  @Override
  public @Nullable DiagnosticEvent beginPrePartialFlush() {
    return delegate().beginPrePartialFlush();
  }

  @Override
  public void completePrePartialFlush(
      @Nullable DiagnosticEvent event, SharedSessionContractImplementor session) {
    delegate().completePrePartialFlush(event, session);
  }

  @Override
  public @Nullable DiagnosticEvent beginEntityInsertEvent() {
    return delegate().beginEntityInsertEvent();
  }

  @Override
  public void completeEntityInsertEvent(
      @Nullable DiagnosticEvent event,
      @Nullable Object id,
      @Nullable String entityName,
      boolean success,
      SharedSessionContractImplementor session) {
    delegate().completeEntityInsertEvent(event, id, entityName, success, session);
  }

  @Override
  public @Nullable DiagnosticEvent beginEntityUpdateEvent() {
    return delegate().beginEntityUpdateEvent();
  }

  @Override
  public void completeEntityUpdateEvent(
      @Nullable DiagnosticEvent event,
      @Nullable Object id,
      @Nullable String entityName,
      boolean success,
      SharedSessionContractImplementor session) {
    delegate().completeEntityUpdateEvent(event, id, entityName, success, session);
  }

  @Override
  public @Nullable DiagnosticEvent beginEntityUpsertEvent() {
    return delegate().beginEntityUpsertEvent();
  }

  @Override
  public void completeEntityUpsertEvent(
      @Nullable DiagnosticEvent event,
      @Nullable Object id,
      @Nullable String entityName,
      boolean success,
      SharedSessionContractImplementor session) {
    delegate().completeEntityUpsertEvent(event, id, entityName, success, session);
  }

  @Override
  public @Nullable DiagnosticEvent beginEntityDeleteEvent() {
    return delegate().beginEntityDeleteEvent();
  }

  @Override
  public void completeEntityDeleteEvent(
      @Nullable DiagnosticEvent event,
      @Nullable Object id,
      @Nullable String entityName,
      boolean success,
      SharedSessionContractImplementor session) {
    delegate().completeEntityDeleteEvent(event, id, entityName, success, session);
  }

  @Override
  public @Nullable DiagnosticEvent beginEntityLockEvent() {
    return delegate().beginEntityLockEvent();
  }

  @Override
  public void completeEntityLockEvent(
      @Nullable DiagnosticEvent event,
      @Nullable Object id,
      @Nullable String entityName,
      @Nullable LockMode lockMode,
      boolean flag,
      SharedSessionContractImplementor session) {
    delegate().completeEntityLockEvent(event, id, entityName, lockMode, flag, session);
  }

  @Override
  public @Nullable DiagnosticEvent beginCollectionRecreateEvent() {
    return delegate().beginCollectionRecreateEvent();
  }

  @Override
  public void completeCollectionRecreateEvent(
      @Nullable DiagnosticEvent event,
      @Nullable Object id,
      @Nullable String entityName,
      boolean flag,
      SharedSessionContractImplementor session) {
    delegate().completeCollectionRecreateEvent(event, id, entityName, flag, session);
  }

  @Override
  public @Nullable DiagnosticEvent beginCollectionUpdateEvent() {
    return delegate().beginCollectionUpdateEvent();
  }

  @Override
  public void completeCollectionUpdateEvent(
      @Nullable DiagnosticEvent event,
      @Nullable Object id,
      @Nullable String entityName,
      boolean flag,
      SharedSessionContractImplementor session) {
    delegate().completeCollectionUpdateEvent(event, id, entityName, flag, session);
  }

  @Override
  public @Nullable DiagnosticEvent beginCollectionRemoveEvent() {
    return delegate().beginCollectionRemoveEvent();
  }

  @Override
  public void completeCollectionRemoveEvent(
      @Nullable DiagnosticEvent event,
      @Nullable Object id,
      @Nullable String entityName,
      boolean flag,
      SharedSessionContractImplementor session) {
    delegate().completeCollectionRemoveEvent(event, id, entityName, flag, session);
  }
}
