package dev.fencing.benchmark;

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
 * The main command's command line, run as a process: {@code --help} prints the usage to stdout and
 * exits 0 (also for {@code compare}); bad usage prints the problem and the usage to stderr and
 * exits 2; output ends with a newline. Nothing here reaches a database.
 */
class CommandLineTest {
  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "--help,            0, usage: java -jar fencing-benchmark.jar",
    "compare --help,    0, usage: java -jar fencing-benchmark.jar compare",
    "--frobnicate,      2, unknown argument --frobnicate",
    "compare --bogus x, 2, unknown argument --bogus",
    "--url,             2, --url needs a value",
    "--sections,        2, --sections needs a value",
    "--sections tpcb;x, 2, --sections: unknown section 'tpcb;x'; the sections are tpcb,update,"
  })
  void usage(String arguments, int status, String expected)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(Main.class.getName());
    command.addAll(List.of(arguments.split(" ")));
    Process process = new ProcessBuilder(command).start();
    // a hang guard: starting a JVM can take tens of seconds at load 40 on 2 cores (CI)
    assertThat(process.waitFor(5, TimeUnit.MINUTES)).isTrue();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    String err = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.exitValue()).as(err).isEqualTo(status);
    String shown = status == 0 ? out : err;
    assertThat(shown).startsWith(expected).endsWith("\n").contains("usage: ");
    assertThat(status == 0 ? err : out).isEmpty();
  }
}
