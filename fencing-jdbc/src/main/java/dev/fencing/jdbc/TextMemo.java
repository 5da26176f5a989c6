package dev.fencing.jdbc;

import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * A bounded, thread-safe memo of a pure function of SQL text. Applications prepare the same few
 * statements in every transaction, so the wrapper's per-execution work on the text ({@link
 * SqlClassifier}, {@link TableGuards}) is done once per distinct text instead.
 *
 * <p>Bounded: texts longer than {@code maxTextLength} are never kept, and when the memo holds
 * {@code maxEntries} texts it forgets them all and starts over (an application's working set
 * refills it at once; one that never repeats a text pays only a map insertion per execution). So it
 * keeps at most {@code maxEntries} texts, each at most {@code maxTextLength} characters: insertions
 * take a lock, lookups do not. A hit returns exactly what the function returned for an equal text.
 */
final class TextMemo<V> {
  private final ConcurrentHashMap<String, V> memo = new ConcurrentHashMap<>();
  private final Function<String, V> function;
  private final int maxEntries;
  private final int maxTextLength;

  TextMemo(Function<String, V> function, int maxEntries, int maxTextLength) {
    if (maxEntries < 1 || maxTextLength < 0) {
      throw new IllegalArgumentException(
          "maxEntries must be positive and maxTextLength not negative, was "
              + maxEntries
              + " and "
              + maxTextLength);
    }
    this.function = Objects.requireNonNull(function, "function");
    this.maxEntries = maxEntries;
    this.maxTextLength = maxTextLength;
  }

  /** {@code function(text)}, computed once per text while the memo keeps it. */
  V get(String text) {
    if (text.length() > maxTextLength) {
      return function.apply(text);
    }
    V known = memo.get(text);
    if (known != null) {
      return known;
    }
    V computed = Objects.requireNonNull(function.apply(text), "memoised value");
    // Insertions are serialised: ConcurrentHashMap.clear() walks the bins one by one, so a put
    // racing a clear (or another put's size check) could leave the map past its bound. Hits never
    // take the lock; a miss already paid for computing the value.
    synchronized (memo) {
      if (!memo.containsKey(text) && memo.size() >= maxEntries) {
        memo.clear();
      }
      memo.put(text, computed);
    }
    return computed;
  }

  /** How many texts it keeps now. */
  int size() {
    return memo.size();
  }
}
