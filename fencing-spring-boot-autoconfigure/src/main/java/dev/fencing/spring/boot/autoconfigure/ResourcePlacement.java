package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.jdbc.FencingToken;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The resources that live in one data source's database, from {@code
 * fencing.datasource.resources.<bean>}: resource names, and name prefixes ending in {@code *}. It
 * becomes that bean's {@code FencedDataSource.Builder#resources} predicate.
 */
final class ResourcePlacement implements Predicate<String> {
  private final Set<String> names = new HashSet<>();
  private final List<String> prefixes = new ArrayList<>();

  private ResourcePlacement(List<String> patterns) {
    for (String pattern : patterns) {
      if (pattern.endsWith("*")) {
        prefixes.add(pattern.substring(0, pattern.length() - 1));
      } else {
        names.add(pattern);
      }
    }
  }

  /** The resources {@code patterns} (checked by {@link #check}) name. */
  static ResourcePlacement of(List<String> patterns) {
    return new ResourcePlacement(patterns);
  }

  /**
   * Checks one entry of {@code property}: a valid resource name, or a prefix of one followed by
   * {@code *} (a lone {@code *}: every resource).
   *
   * @throws IllegalArgumentException naming the property
   */
  static void check(String property, String pattern) {
    String name = pattern.endsWith("*") ? pattern.substring(0, pattern.length() - 1) : pattern;
    if (name.contains("*")) {
      throw new IllegalArgumentException(
          property + " may hold * only at its end (a prefix), was '" + pattern + "'");
    }
    if (name.isEmpty() && !pattern.isEmpty()) {
      return; // "*": every resource
    }
    try {
      FencingToken.requireValidResource(name);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          property
              + " must be a resource name or a prefix of one ending in *: "
              + e.getMessage()
              + ", was '"
              + pattern
              + "'",
          e);
    }
  }

  @Override
  public boolean test(String resource) {
    if (names.contains(resource)) {
      return true;
    }
    for (String prefix : prefixes) {
      if (resource.startsWith(prefix)) {
        return true;
      }
    }
    return false;
  }

  @Override
  public String toString() {
    return "names " + names + ", prefixes " + prefixes;
  }
}
