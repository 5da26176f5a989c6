package dev.fencing.jdbc;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * An immutable set of bound tokens, at most one per resource: what {@link Fencing#current()}
 * returns, and what {@link #wrap(Runnable)} carries to another thread.
 */
public final class FencingContext {
  static final FencingContext EMPTY = new FencingContext(List.of());

  /** A bound token, with the lease it came from if any (so a lost lease stops being carried). */
  record Binding(FencingToken token, @Nullable Lease lease) {}

  private final List<Binding> bindings;

  private FencingContext(List<Binding> bindings) {
    this.bindings = bindings;
  }

  /** The bound tokens, in the order they were bound. */
  public List<FencingToken> tokens() {
    List<FencingToken> tokens = new ArrayList<>(bindings.size());
    bindings.forEach(b -> tokens.add(b.token()));
    return Collections.unmodifiableList(tokens);
  }

  /** The token bound for {@code resource}, if any. */
  public Optional<FencingToken> token(String resource) {
    Binding b = find(bindings, resource);
    return b == null ? Optional.empty() : Optional.of(b.token());
  }

  /** Whether no token is bound. */
  public boolean isEmpty() {
    return bindings.isEmpty();
  }

  List<Binding> bindings() {
    return bindings;
  }

  /**
   * This context plus {@code added}; a resource bound twice must carry the same token. A token
   * bound first without its lease and then with it is carried with the lease, so that the lease's
   * loss stops it being carried.
   */
  FencingContext with(List<Binding> added) {
    List<Binding> merged = new ArrayList<>(bindings);
    boolean changed = false;
    for (Binding b : added) {
      Binding existing = find(merged, b.token().resource());
      if (existing == null) {
        merged.add(b);
      } else if (existing.token().value() == b.token().value()) {
        if (existing.lease() == null && b.lease() != null) {
          merged.set(merged.indexOf(existing), b);
          changed = true;
        }
      } else {
        throw new IllegalStateException(
            "resource "
                + b.token().resource()
                + " is already bound to token "
                + existing.token().value()
                + " in this scope; cannot also bind token "
                + b.token().value());
      }
    }
    return merged.size() == bindings.size() && !changed
        ? this
        : new FencingContext(List.copyOf(merged));
  }

  /** The same bindings in a context of its own (a scope is told apart by its context). */
  FencingContext copy() {
    return new FencingContext(bindings);
  }

  /**
   * The bindings of the resources {@code placed} accepts (this context if it accepts them all):
   * what a {@link FencedDataSource} of one database checks when tokens of several databases are
   * bound on the thread.
   */
  FencingContext only(Predicate<String> placed) {
    int n = bindings.size();
    int first = 0; // asked at every execution: no copy while every binding is accepted
    while (first < n && placed.test(bindings.get(first).token().resource())) {
      first++;
    }
    if (first == n) {
      return this;
    }
    List<Binding> kept = new ArrayList<>(bindings.subList(0, first));
    for (int i = first + 1; i < n; i++) {
      Binding b = bindings.get(i);
      if (placed.test(b.token().resource())) {
        kept.add(b);
      }
    }
    return new FencingContext(List.copyOf(kept));
  }

  private static @Nullable Binding find(List<Binding> bindings, String resource) {
    for (int i = 0; i < bindings.size(); i++) { // asked per entity write: no iterator
      Binding b = bindings.get(i);
      if (b.token().resource().equals(resource)) {
        return b;
      }
    }
    return null;
  }

  /** Binds this context on the calling thread (explicit propagation); close the scope after. */
  public FencingScope bind() {
    return Fencing.install(bindings);
  }

  /** {@code task} run with this context bound, on whatever thread runs it. */
  public Runnable wrap(Runnable task) {
    Objects.requireNonNull(task, "task");
    return () -> {
      FencingContext saved = Fencing.current();
      bind();
      try {
        task.run();
      } finally {
        // Restore even if the task left a scope of its own open: the next task on this
        // (pooled) thread must not inherit anything.
        Fencing.restore(saved);
      }
    };
  }

  /** {@code task} called with this context bound, on whatever thread calls it. */
  public <T> Callable<T> wrap(Callable<T> task) {
    Objects.requireNonNull(task, "task");
    return () -> {
      FencingContext saved = Fencing.current();
      bind();
      try {
        return task.call();
      } finally {
        Fencing.restore(saved);
      }
    };
  }

  @Override
  public String toString() {
    return "FencingContext" + tokens();
  }
}
