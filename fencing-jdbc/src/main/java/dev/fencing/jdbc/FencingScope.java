package dev.fencing.jdbc;

/**
 * The extent during which tokens are bound to the current thread; opened by {@link Fencing#bind}.
 * Close it on the thread that opened it, innermost first (try-with-resources does both). Closing
 * twice is harmless.
 */
public final class FencingScope implements AutoCloseable {
  private final Thread owner;
  private final FencingContext previous;
  private final FencingContext installed;
  private boolean closed;

  FencingScope(Thread owner, FencingContext previous, FencingContext installed) {
    this.owner = owner;
    this.previous = previous;
    this.installed = installed;
  }

  /** The tokens bound while this scope is open (including those of enclosing scopes). */
  public FencingContext context() {
    return installed;
  }

  /**
   * Unbinds this scope's tokens.
   *
   * @throws IllegalStateException if called from another thread, or while a scope opened inside
   *     this one is still open
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    if (Thread.currentThread() != owner) {
      throw new IllegalStateException(
          "fencing scope "
              + installed
              + " opened on "
              + owner.getName()
              + " closed on another thread");
    }
    if (Fencing.current() != installed) {
      throw new IllegalStateException(
          "fencing scope " + installed + " closed while an inner scope is still open");
    }
    closed = true;
    Fencing.restore(previous);
  }
}
