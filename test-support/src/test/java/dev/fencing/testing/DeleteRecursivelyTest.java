package dev.fencing.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Processes#deleteRecursively}: a file that cannot be deleted does not stop the others, and
 * what is left is reported. (The tests run as root, whom permissions do not stop: the failure is
 * injected.)
 */
class DeleteRecursivelyTest {
  @TempDir Path temp;

  @Test
  void everyFileIsTriedAndWhatIsLeftIsReported() throws IOException {
    Path root = Files.createDirectories(temp.resolve("root"));
    Path stuck = Files.writeString(root.resolve("z-stuck"), "x");
    Path besides = Files.writeString(root.resolve("b-besides"), "x");
    Path sub = Files.createDirectories(root.resolve("c-sub"));
    Path inSub = Files.writeString(sub.resolve("file"), "x");

    List<String> left =
        Processes.deleteRecursively(
            root,
            path -> {
              if (path.equals(stuck)) {
                throw new AccessDeniedException(path.toString());
              }
              Files.deleteIfExists(path);
            });

    assertThat(besides).doesNotExist();
    assertThat(inSub).doesNotExist();
    assertThat(sub).doesNotExist();
    assertThat(stuck).exists();
    assertThat(left)
        .as("the file that could not be deleted, not its folder again")
        .singleElement()
        .asString()
        .startsWith(stuck.toString())
        .contains("AccessDeniedException");
  }

  @Test
  void aFolderDeletedCompletelyLeavesNothingToReport() throws IOException {
    Path root = Files.createDirectories(temp.resolve("root/a/b"));
    Files.writeString(root.resolve("file"), "x");

    assertThat(Processes.deleteRecursively(temp.resolve("root"), Files::deleteIfExists)).isEmpty();
    assertThat(temp.resolve("root")).doesNotExist();
    assertThat(Processes.deleteRecursively(temp.resolve("root"), Files::deleteIfExists))
        .as("gone already")
        .isEmpty();
  }
}
