package dev.fencing.jpa;

import dev.fencing.jdbc.FencingExceptions;
import dev.fencing.jdbc.FencingRefusedException;
import jakarta.persistence.PersistenceException;

/**
 * A write of a {@link Fenced} entity was refused before any of its SQL was sent, because no token
 * for its resource was bound on the writing thread. Its cause is the {@link
 * FencingRefusedException} (a {@link dev.fencing.jdbc.MissingFencingTokenException}); Hibernate
 * marks the transaction for rollback, so nothing of it is committed.
 *
 * <p>Refusals by the database itself (a stale token) reach the application as Hibernate's own
 * exceptions with the refusal as their cause. One test covers both:
 *
 * <pre>{@code
 * catch (PersistenceException e) {
 *   if (FencingExceptions.find(e).isPresent()) { ...this client lost the lease: stop, roll back... }
 * }
 * }</pre>
 *
 * @see FencingExceptions#find(Throwable)
 */
public final class FencingPersistenceException extends PersistenceException {
  private static final long serialVersionUID = 1L;

  private FencingPersistenceException(String message, FencingRefusedException cause) {
    super(message, cause);
  }

  /** The refusal of a write of {@code entityName} to {@code resource}, whose token is not bound. */
  static FencingPersistenceException missingToken(
      String resource, String entityName, String operation) {
    String message =
        "no fencing token is bound for resource "
            + resource
            + " on thread "
            + Thread.currentThread().getName()
            + ": refusing to "
            + operation
            + " "
            + entityName
            + " (bind the lease's token with Fencing.bind for the whole transaction, its commit"
            + " included)";
    return new FencingPersistenceException(
        message, FencingExceptions.missingToken(resource, message));
  }
}
