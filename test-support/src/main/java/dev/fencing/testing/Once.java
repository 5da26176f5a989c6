package dev.fencing.testing;

import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A value computed at most once, its failure included: after {@code compute} threw, every later
 * {@link #get()} throws again at once (with the first failure as cause) instead of computing anew.
 * {@link TestPostgres} chooses its server so: a choice that waited minutes for a slow local server
 * and failed must not be waited for again by every later test class of the JVM. Test code only.
 */
final class Once<T> {
  private final Supplier<T> compute;
  private @Nullable T value;
  private @Nullable RuntimeException failure;

  Once(Supplier<T> compute) {
    this.compute = compute;
  }

  /** The value, computed on the first call; throws if that computation threw. */
  synchronized T get() {
    T known = value;
    if (known != null) {
      return known;
    }
    RuntimeException failed = failure;
    if (failed != null) {
      throw new IllegalStateException(
          "failed before in this JVM, not tried again: " + failed.getMessage(), failed);
    }
    try {
      known = compute.get();
    } catch (RuntimeException e) {
      failure = e;
      throw e;
    }
    value = known;
    return known;
  }
}
