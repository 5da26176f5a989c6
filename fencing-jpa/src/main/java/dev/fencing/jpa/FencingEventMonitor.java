package dev.fencing.jpa;

import dev.fencing.jdbc.FencedTables;
import java.util.List;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.event.monitor.spi.DiagnosticEvent;
import org.jspecify.annotations.Nullable;

/**
 * Announces a per-row entity's write for exactly the time of its statement. Hibernate finds it
 * through {@code META-INF/services/org.hibernate.event.monitor.spi.EventMonitor} and uses the first
 * {@code EventMonitor} it finds for a {@code SessionFactory} ({@link FencingIntegrator} refuses to
 * start one with per-row entities when another comes first).
 *
 * <p>{@link FencingEventListener}'s pre-event listener only arms an entry on the thread ({@link
 * #arm}): the entity's tables, its tokens already required. Hibernate calls {@code
 * beginEntity…Event} after every pre-event listener and the {@code Interceptor}, right before the
 * statement, and only if no listener vetoed the write: that turns the entry into the announcement
 * {@code FencedDataSource} looks for. {@code completeEntity…Event}, on success and on failure,
 * withdraws what the statement did not use up. A vetoed write, or one that failed before its
 * statement (an {@code Interceptor} that throws), announces nothing; the entry stays armed until
 * the next pre-event of an entity write replaces or clears it, and no {@code begin} comes without
 * one.
 *
 * <p>Everything else, entity events included, goes to the monitor Hibernate would have used
 * otherwise ({@link #delegateTo}, set by the integrator; a no-op monitor until then). One instance
 * may serve several {@code SessionFactory}s of one bootstrap registry: it keeps no state of its own
 * beyond the delegate, which those share.
 *
 * <p>Public only because {@link java.util.ServiceLoader} instantiates nothing else from the class
 * path; not an API: applications never call or subclass it, and it may change or go in any release.
 */
public final class FencingEventMonitor extends DelegatingEventMonitor {
  /**
   * The tables a per-row entity's coming write sends statements to, each listed once per statement
   * it may send there (an optional secondary table's row: up to two, see {@link
   * FencingIntegrator}); what no statement used up is withdrawn when the write is complete.
   */
  record RowWrites(String entityName, List<String> tables, boolean untilComplete) {
    RowWrites(String entityName, List<String> tables) {
      this(entityName, tables, false);
    }

    /**
     * A collection's writes: every statement to its table until the write is complete (one per
     * changed row), the owner's tokens already required.
     */
    static RowWrites ofCollection(String role, String table) {
      return new RowWrites(role, List.of(table), true);
    }

    void announce() {
      for (int i = 0; i < tables.size(); i++) {
        if (untilComplete) {
          FencedTables.announceRowWrites(tables.get(i));
        } else {
          FencedTables.announceRowWrite(tables.get(i));
        }
      }
    }

    void withdraw() {
      for (int i = 0; i < tables.size(); i++) {
        FencedTables.withdrawRowWrite(tables.get(i));
      }
    }
  }

  /** What begin passes to complete: the delegate's event and what was announced. */
  private record Announced(@Nullable DiagnosticEvent delegated, RowWrites writes)
      implements DiagnosticEvent {}

  private static final ThreadLocal<@Nullable RowWrites> ARMED = new ThreadLocal<>();
  // A collection's writes, apart: a stateless delete removes the entity's collections between the
  // entity's pre-event and its statement.
  private static final ThreadLocal<@Nullable RowWrites> ARMED_COLLECTION = new ThreadLocal<>();

  /** Called by Hibernate's service loading. */
  public FencingEventMonitor() {}

  /**
   * The entity or collection write whose pre-event just passed writes {@code writes} if Hibernate
   * runs it.
   */
  static void arm(RowWrites writes) {
    ARMED.set(writes);
  }

  /**
   * The collection write whose pre-event just passed writes {@code writes} if Hibernate runs it.
   */
  static void armCollection(RowWrites writes) {
    ARMED_COLLECTION.set(writes);
  }

  /** The entity write whose pre-event just passed writes no per-row table (or was refused). */
  static void disarm() {
    if (ARMED.get() != null) {
      ARMED.set(null);
    }
    disarmCollection();
  }

  /** The collection write whose pre-event just passed writes no per-row table (or was refused). */
  static void disarmCollection() {
    if (ARMED_COLLECTION.get() != null) {
      ARMED_COLLECTION.set(null);
    }
  }

  private static @Nullable DiagnosticEvent announce(@Nullable DiagnosticEvent delegated) {
    return announce(ARMED, delegated);
  }

  private static @Nullable DiagnosticEvent announceCollection(@Nullable DiagnosticEvent delegated) {
    return announce(ARMED_COLLECTION, delegated);
  }

  private static @Nullable DiagnosticEvent announce(
      ThreadLocal<@Nullable RowWrites> armed, @Nullable DiagnosticEvent delegated) {
    RowWrites writes = armed.get();
    if (writes == null) {
      return delegated;
    }
    armed.set(null);
    writes.announce();
    return new Announced(delegated, writes);
  }

  /** Withdraws what {@link #announce} announced; returns the delegate's own event. */
  private static @Nullable DiagnosticEvent withdraw(@Nullable DiagnosticEvent event) {
    if (event instanceof Announced announced) {
      announced.writes().withdraw();
      return announced.delegated();
    }
    return event;
  }

  @Override
  public @Nullable DiagnosticEvent beginEntityInsertEvent() {
    return announce(delegate().beginEntityInsertEvent());
  }

  @Override
  public void completeEntityInsertEvent(
      @Nullable DiagnosticEvent event,
      @Nullable Object id,
      @Nullable String entityName,
      boolean success,
      SharedSessionContractImplementor session) {
    delegate().completeEntityInsertEvent(withdraw(event), id, entityName, success, session);
  }

  @Override
  public @Nullable DiagnosticEvent beginEntityUpdateEvent() {
    return announce(delegate().beginEntityUpdateEvent());
  }

  @Override
  public void completeEntityUpdateEvent(
      @Nullable DiagnosticEvent event,
      @Nullable Object id,
      @Nullable String entityName,
      boolean success,
      SharedSessionContractImplementor session) {
    delegate().completeEntityUpdateEvent(withdraw(event), id, entityName, success, session);
  }

  @Override
  public @Nullable DiagnosticEvent beginEntityUpsertEvent() {
    return announce(delegate().beginEntityUpsertEvent());
  }

  @Override
  public void completeEntityUpsertEvent(
      @Nullable DiagnosticEvent event,
      @Nullable Object id,
      @Nullable String entityName,
      boolean success,
      SharedSessionContractImplementor session) {
    delegate().completeEntityUpsertEvent(withdraw(event), id, entityName, success, session);
  }

  @Override
  public @Nullable DiagnosticEvent beginEntityDeleteEvent() {
    return announce(delegate().beginEntityDeleteEvent());
  }

  @Override
  public void completeEntityDeleteEvent(
      @Nullable DiagnosticEvent event,
      @Nullable Object id,
      @Nullable String entityName,
      boolean success,
      SharedSessionContractImplementor session) {
    delegate().completeEntityDeleteEvent(withdraw(event), id, entityName, success, session);
  }

  @Override
  public @Nullable DiagnosticEvent beginCollectionRecreateEvent() {
    return announceCollection(delegate().beginCollectionRecreateEvent());
  }

  @Override
  public void completeCollectionRecreateEvent(
      @Nullable DiagnosticEvent event,
      @Nullable Object id,
      @Nullable String entityName,
      boolean success,
      SharedSessionContractImplementor session) {
    delegate().completeCollectionRecreateEvent(withdraw(event), id, entityName, success, session);
  }

  @Override
  public @Nullable DiagnosticEvent beginCollectionUpdateEvent() {
    return announceCollection(delegate().beginCollectionUpdateEvent());
  }

  @Override
  public void completeCollectionUpdateEvent(
      @Nullable DiagnosticEvent event,
      @Nullable Object id,
      @Nullable String entityName,
      boolean success,
      SharedSessionContractImplementor session) {
    delegate().completeCollectionUpdateEvent(withdraw(event), id, entityName, success, session);
  }

  @Override
  public @Nullable DiagnosticEvent beginCollectionRemoveEvent() {
    return announceCollection(delegate().beginCollectionRemoveEvent());
  }

  @Override
  public void completeCollectionRemoveEvent(
      @Nullable DiagnosticEvent event,
      @Nullable Object id,
      @Nullable String entityName,
      boolean success,
      SharedSessionContractImplementor session) {
    delegate().completeCollectionRemoveEvent(withdraw(event), id, entityName, success, session);
  }

  @Override
  public String toString() {
    return "FencingEventMonitor(" + delegate() + ")";
  }
}
