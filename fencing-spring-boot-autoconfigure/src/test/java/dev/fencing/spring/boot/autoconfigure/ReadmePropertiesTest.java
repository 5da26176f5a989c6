package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's table of Spring Boot properties names exactly the properties the configuration
 * processor generated metadata for, with their defaults: a property renamed, added or given another
 * default in {@link FencingProperties} fails here until the README says so.
 */
class ReadmePropertiesTest {
  private static final Path README = Path.of("..", "README.md").toAbsolutePath().normalize();

  /** A row of the README's table: {@code | `name` | default | bounds | meaning |}. */
  private static final Pattern ROW =
      Pattern.compile("(?m)^\\| `(fencing\\.[^`]+)`( / `([^`]+)`)? \\| ([^|]*) \\|");

  /** One property of the generated metadata, its default (a JSON value) if it has one. */
  private static final Pattern PROPERTY =
      Pattern.compile("\"name\": \"([^\"]+)\"((?:(?!\"name\": )[\\s\\S])*)");

  private static final Pattern DEFAULT = Pattern.compile("\"defaultValue\": (.*)\\n");

  @Test
  void theReadmesPropertyTableIsTheGeneratedMetadata() throws IOException {
    Map<String, String> documented = documented();
    Map<String, String> generated = generated();
    assertThat(documented.keySet())
        .as("fencing.* properties in README.md's Spring Boot table")
        .isEqualTo(generated.keySet());
    generated.forEach(
        (name, value) -> {
          if (value != null) {
            assertThat(normalise(documented.get(name)))
                .as("README.md's default of %s", name)
                .isEqualTo(normalise(value));
          }
        });
  }

  /** The table's rows, by property name; {@code resources.<bean>} is the map {@code resources}. */
  private static Map<String, String> documented() throws IOException {
    String readme = Files.readString(README, StandardCharsets.UTF_8);
    int start = readme.indexOf("Properties (prefix `fencing`");
    assertThat(start).as("README.md has the Spring Boot property table").isPositive();
    String table = readme.substring(start, readme.indexOf("\n\n", readme.indexOf("\n|", start)));
    Map<String, String> rows = new TreeMap<>();
    Matcher row = ROW.matcher(table);
    while (row.find()) {
      String name = row.group(1).replace(".<bean>", "");
      String[] defaults = row.group(4).strip().split(" / ");
      rows.put(name, defaults[0]);
      if (row.group(3) != null) {
        // `fencing.migrations.application-role` / `owner-role`: a sibling, its default after " / "
        String sibling = name.substring(0, name.lastIndexOf('.') + 1) + row.group(3);
        rows.put(sibling, defaults.length > 1 ? defaults[1] : defaults[0]);
      }
    }
    return rows;
  }

  /** The generated metadata's properties, by name, with their default (null when none). */
  private static Map<String, String> generated() throws IOException {
    String json;
    try (InputStream in =
        ReadmePropertiesTest.class.getResourceAsStream(
            "/META-INF/spring-configuration-metadata.json")) {
      assertThat(in).as("the configuration processor's metadata").isNotNull();
      json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    json = json.substring(json.indexOf("\"properties\""), json.indexOf("\"hints\""));
    Map<String, String> properties = new LinkedHashMap<>();
    Matcher property = PROPERTY.matcher(json);
    while (property.find()) {
      Matcher value = DEFAULT.matcher(property.group(2));
      properties.put(property.group(1), value.find() ? value.group(1).strip() : null);
    }
    assertThat(properties).as("properties in the metadata").isNotEmpty();
    return properties;
  }

  /** A default as the README writes it ({@code `30s`}, empty, {@code `1/3`}) or as JSON has it. */
  private static String normalise(String value) {
    String v = value.strip().replace("`", "");
    if (v.startsWith("\"") && v.endsWith("\"")) {
      v = v.substring(1, v.length() - 1);
    }
    if (v.equals("empty")) {
      return "";
    }
    Matcher fraction = Pattern.compile("(\\d+)/(\\d+)").matcher(v);
    if (fraction.matches()) {
      return String.valueOf(
          Double.parseDouble(fraction.group(1)) / Double.parseDouble(fraction.group(2)));
    }
    return v;
  }
}
