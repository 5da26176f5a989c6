package dev.fencing.torture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The torture command's own command line, run as a process: {@code --help} prints the usage to
 * stdout and exits 0; bad usage prints the problem and the usage to stderr and exits 2; the usage
 * ends with a newline.
 */
class CommandLineTest {
  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "--help,         0, usage: java -jar fencing-torture.jar, ''",
    "--frobnicate,   2, '', unknown argument --frobnicate",
    "--seed,         2, '', --seed needs a value",
    "--workers x,    2, '', not a number"
  })
  void usage(String arguments, int status, String stdout, String stderr)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-cp");
    command.add(WorkerProcess.classPath());
    command.add(Main.class.getName());
    command.addAll(List.of(arguments.split(" ")));
    Process process = new ProcessBuilder(command).start();
    // a hang guard: starting a JVM can take tens of seconds at load 40 on 2 cores (CI)
    assertThat(process.waitFor(5, TimeUnit.MINUTES)).isTrue();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    String err = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.exitValue()).as(err).isEqualTo(status);
    if (status == 0) {
      assertThat(out).startsWith(stdout).endsWith("\n").isEqualTo(Main.USAGE);
      assertThat(err).isEmpty();
    } else {
      assertThat(out).isEmpty();
      assertThat(err).startsWith(stderr).endsWith(Main.USAGE);
    }
  }
}
