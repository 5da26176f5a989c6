package dev.fencing.spring.boot;

import dev.fencing.jdbc.FencingRefusedException;
import org.springframework.dao.NonTransientDataAccessException;

/**
 * The fence refused a write: what a Spring application sees instead of an uncategorized exception,
 * from {@code JdbcTemplate}, {@code JdbcClient}, Spring Data repositories and the commit of {@code
 * JdbcTransactionManager} and {@code JpaTransactionManager} transactions. Nothing of the
 * transaction was written; never retry it with the same token (this holder lost the lease).
 *
 * <p>Its {@linkplain #getCause() cause} is the refusal itself — a {@link
 * dev.fencing.jdbc.StaleFencingTokenException}, {@link dev.fencing.jdbc.LeaseLostException}, {@link
 * dev.fencing.jdbc.MissingFencingTokenException} or {@link
 * dev.fencing.jdbc.FencingTokenNeverIssuedException} — so both of these work:
 *
 * <pre>{@code
 * catch (FencingRefusedDataAccessException e) {
 *   if (e.getCause() instanceof StaleFencingTokenException stale) { ... }
 * }
 * catch (DataAccessException e) {
 *   FencingExceptions.find(e).ifPresent(refusal -> ...);
 * }
 * }</pre>
 */
public class FencingRefusedDataAccessException extends NonTransientDataAccessException {
  private static final long serialVersionUID = 1L;

  /** The fence's refusal. */
  private final FencingRefusedException refusal;

  /**
   * Creates the exception.
   *
   * @param message what was refused, for the log
   * @param refusal the fence's refusal, the cause
   */
  public FencingRefusedDataAccessException(String message, FencingRefusedException refusal) {
    super(message, refusal);
    this.refusal = refusal;
  }

  /**
   * The fence's refusal, also the {@linkplain #getCause() cause}.
   *
   * @return the refusal, with its resource, presented token and {@code max_seen}
   */
  public FencingRefusedException refusal() {
    return refusal;
  }
}
