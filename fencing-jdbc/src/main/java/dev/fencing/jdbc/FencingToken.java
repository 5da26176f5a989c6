package dev.fencing.jdbc;

import java.util.Objects;

/**
 * A fencing token: the number a lock service issued for one acquisition of a resource. Tokens of a
 * resource only ever increase; the database refuses a write carrying a token lower than the highest
 * it has seen for that resource. See {@link Fencing} for the whole protocol.
 *
 * @param resource the fenced resource's name (1 to 200 of letters, digits and {@code _ . : / @ + =
 *     # -}; the database checks the exact rule)
 * @param value the token, positive
 */
public record FencingToken(String resource, long value) {
  /** Validates what can be validated without the database. */
  public FencingToken {
    Objects.requireNonNull(resource, "resource");
    if (resource.isEmpty()) {
      throw new IllegalArgumentException("resource name is empty");
    }
    if (value <= 0) {
      throw new IllegalArgumentException(
          "fencing token must be positive, was " + value + " (resource " + resource + ")");
    }
  }

  /** Same as the constructor. */
  public static FencingToken of(String resource, long value) {
    return new FencingToken(resource, value);
  }

  @Override
  public String toString() {
    return resource + "@" + value;
  }
}
