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
 *
 * <p>{@link #boundedByCharacters} bounds the characters of all the texts kept instead of each
 * one's: a long text an application repeats (a long native query) is kept as a short one is, and
 * the memo is forgotten when one more text would pass either bound.
 */
final class TextMemo<V> {
  private final ConcurrentHashMap<String, V> memo = new ConcurrentHashMap<>();
  private final Function<String, V> function;
  private final int maxEntries;
  private final int maxTextLength;
  private final long maxCharacters;
  private long characters; // of the texts kept; guarded by memo

  TextMemo(Function<String, V> function, int maxEntries, int maxTextLength) {
    this(function, maxEntries, maxTextLength, Long.MAX_VALUE);
  }

  private TextMemo(
      Function<String, V> function, int maxEntries, int maxTextLength, long maxCharacters) {
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
    this.maxCharacters = maxCharacters;
  }

  /**
   * A memo keeping at most {@code maxEntries} texts of at most {@code maxCharacters} characters in
   * all, whatever each one's length (a text longer than that is computed every time).
   */
  static <V> TextMemo<V> boundedByCharacters(
      Function<String, V> function, int maxEntries, int maxCharacters) {
    if (maxCharacters < 0) {
      throw new IllegalArgumentException(
          "maxCharacters must not be negative, was " + maxCharacters);
    }
    return new TextMemo<>(function, maxEntries, maxCharacters, maxCharacters);
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
      if (!memo.containsKey(text)) {
        if (memo.size() >= maxEntries || characters + text.length() > maxCharacters) {
          memo.clear();
          characters = 0;
        }
        characters += text.length();
      }
      memo.put(text, computed);
    }
    return computed;
  }

  /** How many characters the texts it keeps have. */
  long characters() {
    synchronized (memo) {
      return characters;
    }
  }

  /** How many texts it keeps now. */
  int size() {
    return memo.size();
  }
}
