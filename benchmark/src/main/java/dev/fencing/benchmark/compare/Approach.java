package dev.fencing.benchmark.compare;

import java.math.BigInteger;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;

/**
 * One row of the table: a way of holding a lock on a resource and of writing the protected state
 * "while holding it". {@link Scenario} plays the same zombie race against every approach.
 *
 * <p>Each client of the race gets its own {@link Hold}s; calls for one hold all come from the
 * client's own thread (a fenced write binds its token to that thread).
 */
interface Approach extends AutoCloseable {

  /** The row's name, what the founding document claims for it, and a one-line note. */
  Spec spec();

  /**
   * Takes the lock on {@code resource} for {@code client}, waiting until the lock service grants
   * it.
   *
   * @throws IllegalStateException if the lock service did not grant it in reasonable time
   */
  Hold acquire(String resource, String client) throws Exception;

  /**
   * Blocks until the lock service itself no longer counts {@code hold} as the holder (its lease or
   * TTL expired), by watching the lock service — never by sleeping a guessed time. The holder is
   * not told.
   */
  void awaitExpiry(Hold hold) throws Exception;

  /** Releases nothing that belongs to anyone else; closes the approach's connections. */
  @Override
  void close() throws Exception;

  /** A lock held (or, after its expiry, believed held) by one client. */
  interface Hold {
    /**
     * The token the lock service handed out with this hold, in the order the approach offers (a
     * random value is a number too, just not an ordered one); empty if there is none.
     */
    Optional<BigInteger> token();

    /**
     * Runs {@code write} in one transaction on the path this approach's clients normally write
     * through, and commits.
     *
     * @return {@link Outcome#accepted()} or the refusal
     * @throws SQLException if the database failed for any other reason than a refusal
     */
    Outcome write(Write write) throws Exception;

    /** Releases the lock the way the approach does it; harmless if it was lost. */
    void release() throws Exception;
  }

  /** The protected write, on a connection in a transaction (autocommit off). */
  @FunctionalInterface
  interface Write {
    void run(Connection connection) throws SQLException;
  }

  /** What happened to a write. */
  record Outcome(boolean isAccepted, String refusal) {
    static Outcome accepted() {
      return new Outcome(true, "");
    }

    static Outcome refused(String why) {
      return new Outcome(false, why);
    }
  }

  /**
   * A row's fixed text.
   *
   * @param name the approach, as the founding document's table names it
   * @param claimsMonotonic whether the document says it produces a monotonic token
   * @param claimsBlocked the document's "Stale-holder write blocked?" cell, verbatim
   * @param note how the approach is played here and what it trades, one line
   */
  record Spec(String name, boolean claimsMonotonic, String claimsBlocked, String note) {
    boolean claimsBlocking() {
      return claimsBlocked.startsWith("Yes");
    }
  }
}
