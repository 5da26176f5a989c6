package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The relative links of the project's Markdown documents lead somewhere: every file or folder they
 * name exists, and every {@code #anchor} is a heading of the document it points into (GitHub's
 * anchors: lower case, punctuation dropped, spaces as hyphens).
 */
class ReadmeLinksTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
  private static final Pattern HEADING = Pattern.compile("^#{1,6} (.+)$");
  private static final Pattern NOT_IN_ANCHOR =
      Pattern.compile("[^\\w\\- ]", Pattern.UNICODE_CHARACTER_CLASS);

  @ParameterizedTest
  @ValueSource(strings = {"README.md", "docs/ARCHITECTURE.md", "docs/BAD-INPUT.md"})
  void everyRelativeLinkLeadsToAFileAndAHeading(String document) throws IOException {
    Path file = ROOT.resolve(document);
    assertThat(file).as("run from the migrations module of the repository").exists();
    List<String> broken = new ArrayList<>();
    Matcher link = LINK.matcher(Files.readString(file, StandardCharsets.UTF_8));
    while (link.find()) {
      String target = link.group(1);
      if (target.contains("://") || target.startsWith("mailto:")) {
        continue;
      }
      int hash = target.indexOf('#');
      String path = hash < 0 ? target : target.substring(0, hash);
      Path linked = path.isEmpty() ? file : file.getParent().resolve(path).normalize();
      if (!Files.exists(linked)) {
        broken.add(target + " (no such file)");
      } else if (hash >= 0 && !anchors(linked).contains(target.substring(hash + 1))) {
        broken.add(target + " (no such heading)");
      }
    }
    assertThat(broken).as("broken links in %s", document).isEmpty();
  }

  /** The anchors GitHub gives the headings of a Markdown file (outside fenced code blocks). */
  private static Set<String> anchors(Path markdown) throws IOException {
    Set<String> anchors = new TreeSet<>();
    boolean code = false;
    for (String line : Files.readAllLines(markdown, StandardCharsets.UTF_8)) {
      if (line.startsWith("```")) {
        code = !code;
        continue;
      }
      Matcher heading = HEADING.matcher(line);
      if (!code && heading.matches()) {
        String text = heading.group(1).strip().toLowerCase(Locale.ROOT);
        anchors.add(NOT_IN_ANCHOR.matcher(text).replaceAll("").replace(' ', '-'));
      }
    }
    return anchors;
  }
}
