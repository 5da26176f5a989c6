package dev.fencing.jdbc;

import java.util.Objects;

/**
 * A fencing token: the number a lock service issued for one acquisition of a resource. Tokens of a
 * resource only ever increase; the database refuses a write carrying a token lower than the highest
 * it has seen for that resource. See {@link Fencing} for the whole protocol.
 *
 * @param resource the fenced resource's name: 1 to 200 of the ASCII letters, digits and {@code _ .
 *     : / @ + = # -} ({@link #requireValidResource(String)}; the same rule as the database's)
 * @param value the token, positive
 */
public record FencingToken(String resource, long value) {
  private static final int MAX_RESOURCE_LENGTH = 200;
  private static final String ALLOWED = "_.:/@+=#-";

  /**
   * Validates what can be validated without the database.
   *
   * @throws IllegalArgumentException if the resource name breaks the rule, or the value is not
   *     positive
   */
  public FencingToken {
    requireValidResource(resource);
    if (value <= 0) {
      throw new IllegalArgumentException(
          "fencing token must be positive, was " + value + " (resource " + resource + ")");
    }
  }

  /** Same as the constructor. */
  public static FencingToken of(String resource, long value) {
    return new FencingToken(resource, value);
  }

  /**
   * Checks a resource name against the rule the database applies (the fence's {@code
   * validate_resource_name}), with the same message, so a malformed name fails here instead of as a
   * database error (or, for a NUL character, as the driver's encoding error).
   *
   * @return {@code resource}
   * @throws NullPointerException if {@code resource} is null
   * @throws IllegalArgumentException naming the first offending character and its position
   */
  public static String requireValidResource(String resource) {
    Objects.requireNonNull(resource, "resource");
    if (resource.isEmpty()) {
      throw new IllegalArgumentException("resource name is empty");
    }
    int length = resource.codePointCount(0, resource.length());
    if (length > MAX_RESOURCE_LENGTH) {
      throw new IllegalArgumentException(
          "resource name is " + length + " characters long; the limit is " + MAX_RESOURCE_LENGTH);
    }
    int position = 0;
    for (int i = 0; i < resource.length(); i += Character.charCount(resource.codePointAt(i))) {
      int c = resource.codePointAt(i);
      position++;
      boolean allowed =
          (c >= 'a' && c <= 'z')
              || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9')
              || ALLOWED.indexOf(c) >= 0;
      if (!allowed) {
        String what =
            Character.isISOControl(c)
                ? "a control character (code " + c + ")"
                : "the character \"" + new String(Character.toChars(c)) + "\"";
        throw new IllegalArgumentException(
            "resource name contains "
                + what
                + " at position "
                + position
                + "; allowed are letters, digits and _ . : / @ + = # -");
      }
    }
    return resource;
  }

  /**
   * As the record's own (equal tokens, equal hashes), written out: the wrapper hashes the bound
   * tokens at every execution, and the generated one showed in its profile.
   */
  @Override
  public int hashCode() {
    return 31 * resource.hashCode() + Long.hashCode(value);
  }

  @Override
  public String toString() {
    return resource + "@" + value;
  }
}
