package dev.fencing.benchmark;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.migrations.FencingMigrations;
import dev.fencing.testing.TestDatabaseExtension;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class MainTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  @Test
  void foundingRaceIsPlayedAndTheZombieIsRefused() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int status =
        Main.run(db.dataSource(), fence(), new PrintStream(bytes, true, StandardCharsets.UTF_8));
    String out = bytes.toString(StandardCharsets.UTF_8);

    assertThat(status).as(out).isZero();
    assertThat(out)
        .containsPattern("Migrating the fence's schema: [1-9][0-9]* applied.")
        .containsPattern("t4 +client 2 writes X with token (\\d+) +ACCEPT")
        .containsPattern("t6 +client 1 writes Y with token (\\d+) +REJECT")
        .contains("StaleFencingTokenException")
        .contains("[SQLSTATE ZF001]")
        .contains("The fence held.")
        .doesNotContain("Measuring");
  }

  private static FencingMigrations fence() {
    return FencingMigrations.builder(db.migrationDataSource())
        .ownerRole(db.ownerRole())
        .applicationRole(db.appRole())
        .build();
  }
}
