package dev.fencing.jdbc;

/**
 * The lock service behind a {@link FencedLock} failed (unreachable, session or lease lost while
 * acquiring or releasing). Unchecked, like a lost connection in the middle of a call: the lock is
 * not held by the call that threw.
 */
public class FencedLockException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** An exception with a message saying what failed and its cause. */
  public FencedLockException(String message, Throwable cause) {
    super(message, cause);
  }

  /** An exception with a message saying what failed. */
  public FencedLockException(String message) {
    super(message);
  }
}
