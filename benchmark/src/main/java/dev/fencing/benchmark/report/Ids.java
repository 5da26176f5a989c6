package dev.fencing.benchmark.report;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The report's stable keys. A section's id is one slug ({@code tpcb}, {@code growth-multixact});
 * the id of each of its variants, distributions and figures is {@code <section id>/<slug>} ({@code
 * tpcb/fenced-1000}, {@code lease/acquire-release-p50}). A slug is lower-case letters and digits in
 * groups joined by single hyphens. Ids are unique in a report and do not change when a name is
 * reworded: scripts and issues compare runs by id.
 */
public final class Ids {
  /** One slug: {@code fenced-1000}. */
  public static final Pattern SLUG = Pattern.compile("[a-z0-9]+(?:-[a-z0-9]+)*");

  private Ids() {}

  /**
   * Checks the ids of {@code sections}.
   *
   * @throws IllegalArgumentException naming the first id that is malformed, not under its section,
   *     or used twice
   */
  static void check(List<Section> sections) {
    Map<String, String> seen = new HashMap<>();
    for (Section section : sections) {
      if (section.id() == null || !SLUG.matcher(section.id()).matches()) {
        throw new IllegalArgumentException(
            "section \"" + section.title() + "\" has id \"" + section.id() + "\", not a slug");
      }
      use(seen, section.id(), "section \"" + section.title() + "\"");
      for (Variant v : section.variants()) {
        item(seen, section, v.id(), "variant \"" + v.name() + "\"");
      }
      for (Distribution d : section.distributions()) {
        item(seen, section, d.id(), "distribution \"" + d.name() + "\"");
      }
      for (Figure f : section.figures()) {
        item(seen, section, f.id(), "figure \"" + f.name() + "\"");
      }
    }
  }

  private static void item(Map<String, String> seen, Section section, String id, String what) {
    String prefix = section.id() + "/";
    if (id == null
        || !id.startsWith(prefix)
        || !SLUG.matcher(id.substring(prefix.length())).matches()) {
      throw new IllegalArgumentException(
          what
              + " of section "
              + section.id()
              + " has id \""
              + id
              + "\"; expected \""
              + prefix
              + "<slug>\" (lower-case letters and digits, single hyphens)");
    }
    use(seen, id, what);
  }

  private static void use(Map<String, String> seen, String id, String what) {
    String earlier = seen.putIfAbsent(id, what);
    if (earlier != null) {
      throw new IllegalArgumentException(
          "id \"" + id + "\" is used twice: by " + earlier + " and by " + what);
    }
  }
}
