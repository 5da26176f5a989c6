package dev.fencing.jdbc;

import java.sql.BatchUpdateException;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/**
 * Finds the fence's refusal in whatever wraps it:
 *
 * <pre>{@code
 * catch (RuntimeException e) {   // PersistenceException, DataAccessException, ...
 *   if (FencingExceptions.find(e).isPresent()) { ...this client lost the lease: stop... }
 *   else if (FencingExceptions.findHandoverTimeout(e).isPresent()) { ...try again later... }
 * }
 * }</pre>
 */
public final class FencingExceptions {
  private static final Pattern NUMBER_FIELD = Pattern.compile("\"(\\w+)\": (-?\\d+)");
  private static final Pattern RESOURCE_FIELD = Pattern.compile("\"resource\": \"([^\"]*)\"");

  private FencingExceptions() {}

  /**
   * The refusal in {@code failure}'s cause chain (causes, suppressed exceptions and {@link
   * SQLException#getNextException()}), translating a raw driver exception with a fence SQLSTATE. A
   * {@link HandoverTimeoutException} is not a refusal: see {@link #findHandoverTimeout}.
   */
  public static Optional<FencingRefusedException> find(@Nullable Throwable failure) {
    return search(
        failure,
        t ->
            t instanceof FencingRefusedException refused
                ? refused
                : t instanceof SQLException sql ? translate(sql, null, null) : null);
  }

  /**
   * The handover timeout (SQLSTATE {@code ZF007}) in {@code failure}'s cause chain, searched like
   * {@link #find(Throwable)}, translating a raw driver exception: an acquisition that may succeed
   * when tried again later.
   */
  public static Optional<HandoverTimeoutException> findHandoverTimeout(
      @Nullable Throwable failure) {
    return search(failure, t -> t instanceof SQLException sql ? handoverTimeout(sql) : null);
  }

  /** The first non-null {@code match} in the cause chain, suppressed and next exceptions. */
  private static <T> Optional<T> search(
      @Nullable Throwable failure, Function<Throwable, @Nullable T> match) {
    Deque<Throwable> todo = new ArrayDeque<>();
    Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    if (failure != null) {
      todo.add(failure);
    }
    while (!todo.isEmpty()) {
      Throwable t = todo.poll();
      if (!seen.add(t)) {
        continue;
      }
      T found = match.apply(t);
      if (found != null) {
        return Optional.of(found);
      }
      if (t instanceof SQLException sql && sql.getNextException() != null) {
        todo.add(sql.getNextException());
      }
      if (t.getCause() != null) {
        todo.add(t.getCause());
      }
      Collections.addAll(todo, t.getSuppressed());
    }
    return Optional.empty();
  }

  /**
   * The exception for a write to {@code resource} that must be fenced while no token for it is
   * bound: for integrations (fencing-jpa) that find out before any SQL is sent.
   */
  public static MissingFencingTokenException missingToken(String resource, String message) {
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(message, "message");
    return new MissingFencingTokenException(
        message, FencingSqlState.MISSING_TOKEN.code(), resource, null, null, null);
  }

  /**
   * The server's error message behind {@code e}: its own, or that of the driver exception it wraps
   * with the same SQLSTATE (a {@code BatchUpdateException} holds it as its next exception). Null if
   * there is none (a client-side refusal, or a driver that dropped it).
   */
  static @Nullable ServerErrorMessage serverError(Throwable e) {
    String state = e instanceof SQLException sql ? sql.getSQLState() : null;
    Deque<Throwable> todo = new ArrayDeque<>();
    Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    todo.add(e);
    while (!todo.isEmpty()) {
      Throwable t = todo.poll();
      if (!seen.add(t)) {
        continue;
      }
      if (t instanceof PSQLException psql
          && psql.getServerErrorMessage() != null
          && (state == null || state.equals(psql.getSQLState()))) {
        return psql.getServerErrorMessage();
      }
      if (t instanceof SQLException sql && sql.getNextException() != null) {
        todo.add(sql.getNextException());
      }
      if (t.getCause() != null) {
        todo.add(t.getCause());
      }
    }
    return null;
  }

  /**
   * {@code thrown}, or, when it is PostgreSQL's "invalid transaction termination" (2D000) from a
   * {@code CALL} or {@code DO} that the wrapper ran in its transaction block in autocommit, an
   * exception of the same SQLState saying why (the original as its cause). A batch's exception is
   * left as it is: it carries the update counts.
   */
  static Throwable commitInside(Throwable thrown) {
    if (!(thrown instanceof SQLException e)
        || thrown instanceof BatchUpdateException
        || !"2D000".equals(e.getSQLState())) {
      return thrown;
    }
    return new SQLException(
        "fencing: a procedure or DO block that commits or rolls back inside itself cannot be"
            + " fenced: its COMMIT or ROLLBACK would end the transaction that holds the fencing"
            + " check, and what it wrote after that would land unchecked. With a fencing token"
            + " bound it runs in one transaction, where PostgreSQL refuses that ("
            + e.getMessage()
            + "); call it with no token bound, or move the commits out of it",
        "2D000",
        e);
  }

  /**
   * The refusal an SQLException from the fence's SQL stands for, or null if it is not a refusal.
   * The resource and token come from the server's DETAIL; {@code resource} and {@code token} fill
   * in what it lacks.
   */
  static @Nullable FencingRefusedException translate(
      SQLException e, @Nullable String resource, @Nullable Long token) {
    Optional<FencingSqlState> state = FencingSqlState.of(e.getSQLState());
    if (state.isEmpty()) {
      return null;
    }
    Fields f = fields(e, resource, token);
    String code = state.get().code();
    return switch (state.get()) {
      case STALE_TOKEN ->
          new StaleFencingTokenException(f.message, code, f.resource, f.token, f.maxSeen, e);
      case MISSING_TOKEN ->
          new MissingFencingTokenException(f.message, code, f.resource, f.token, f.maxSeen, e);
      case TOKEN_NEVER_ISSUED ->
          new FencingTokenNeverIssuedException(f.message, code, f.resource, f.token, f.maxSeen, e);
      case LEASE_NOT_HELD ->
          new LeaseLostException(f.message, code, f.resource, f.token, f.maxSeen, e);
      default -> null;
    };
  }

  /** {@code e} as a handover timeout, or null if it is not one (SQLSTATE {@code ZF007}). */
  static @Nullable HandoverTimeoutException handoverTimeout(SQLException e) {
    if (e instanceof HandoverTimeoutException timedOut) {
      return timedOut;
    }
    if (FencingSqlState.of(e.getSQLState()).orElse(null) != FencingSqlState.HANDOVER_TIMEOUT) {
      return null;
    }
    Fields f = fields(e, null, null);
    return new HandoverTimeoutException(f.message, f.resource, f.maxSeen, e);
  }

  /** What the server said, from its message and DETAIL; the arguments fill in what it lacks. */
  private record Fields(
      String message, String resource, @Nullable Long token, @Nullable Long maxSeen) {}

  private static Fields fields(SQLException e, @Nullable String resource, @Nullable Long token) {
    String detail = null;
    String message = e.getMessage();
    ServerErrorMessage server = serverError(e);
    if (server != null) {
      detail = server.getDetail();
      message = server.getMessage();
    }
    String res = resource;
    Long presented = token;
    Long maxSeen = null;
    if (detail != null) {
      Matcher resourceField = RESOURCE_FIELD.matcher(detail);
      if (resourceField.find()) {
        res = resourceField.group(1);
      }
      Matcher m = NUMBER_FIELD.matcher(detail);
      while (m.find()) {
        if (m.group(1).equals("token")) {
          presented = Long.valueOf(m.group(2));
        } else if (m.group(1).equals("max_seen")) {
          maxSeen = Long.valueOf(m.group(2));
        }
      }
    }
    return new Fields(
        message == null ? e.toString() : message, res == null ? "?" : res, presented, maxSeen);
  }
}
