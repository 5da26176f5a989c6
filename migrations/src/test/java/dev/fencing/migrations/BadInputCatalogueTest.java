package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/BAD-INPUT.md and the catalogue's test classes list the same case ids: every row of the table
 * has a test case, every test case has a row.
 */
class BadInputCatalogueTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final List<Path> TESTS =
      List.of(
          Path.of("fencing-jdbc/src/test/java/dev/fencing/jdbc/BadInputJavaApiTest.java"),
          Path.of("fencing-jpa/src/test/java/dev/fencing/jpa/BadInputJpaTest.java"),
          Path.of("migrations/src/test/java/dev/fencing/migrations/BadInputSqlTest.java"),
          Path.of("migrations/src/test/java/dev/fencing/migrations/BadInputCliTest.java"),
          Path.of(
              "fencing-spring-boot-autoconfigure/src/test/java/dev/fencing/spring/boot/autoconfigure/"
                  + "BadInputSpringTest.java"),
          Path.of(
              "fencing-zookeeper/src/test/java/dev/fencing/zookeeper/BadInputZooKeeperTest.java"));
  private static final Pattern TABLE_ROW = Pattern.compile("(?m)^\\| (B\\d{2,3}) \\|");
  private static final Pattern README_COUNT =
      Pattern.compile("\\(docs/BAD-INPUT\\.md\\) lists (\\d+) malformed");
  private static final Pattern TEST_ID = Pattern.compile("\"(B\\d{2,3})\\b");

  @Test
  void everyDocumentedCaseHasATestAndEveryTestIsDocumented() throws IOException {
    String doc = read(Path.of("docs/BAD-INPUT.md"));
    int fixes = doc.indexOf("## Fixes the catalogue made");
    assertThat(fixes).as("the list of fixes closes the catalogue").isPositive();
    doc = doc.substring(0, fixes);
    List<String> rows = new ArrayList<>();
    Matcher row = TABLE_ROW.matcher(doc);
    while (row.find()) {
      rows.add(row.group(1));
    }
    Set<String> documented = new TreeSet<>(rows);
    assertThat(rows).as("ids in docs/BAD-INPUT.md are unique").hasSameSizeAs(documented);
    assertThat(documented).as("the issue asks for at least 30 cases").hasSizeGreaterThan(30);

    Set<String> tested = new TreeSet<>();
    for (Path test : TESTS) {
      Matcher id = TEST_ID.matcher(read(test));
      while (id.find()) {
        tested.add(id.group(1));
      }
    }
    assertThat(tested).as("test case ids").isEqualTo(documented);
  }

  @Test
  void theReadmeCountsTheCatalogueAsItIs() throws IOException {
    String doc = read(Path.of("docs/BAD-INPUT.md"));
    doc = doc.substring(0, doc.indexOf("## Fixes the catalogue made"));
    Set<String> documented = new TreeSet<>();
    Matcher row = TABLE_ROW.matcher(doc);
    while (row.find()) {
      documented.add(row.group(1));
    }
    Matcher count = README_COUNT.matcher(read(Path.of("README.md")));
    assertThat(count.find()).as("README.md's Bad input section counts the catalogue").isTrue();
    assertThat(Integer.parseInt(count.group(1)))
        .as("README.md: \"docs/BAD-INPUT.md lists N malformed and hostile inputs\"")
        .isEqualTo(documented.size());
  }

  private static String read(Path relative) throws IOException {
    Path file = ROOT.resolve(relative);
    assertThat(file).as("run from the migrations module of the repository").exists();
    return Files.readString(file, StandardCharsets.UTF_8);
  }
}
