package dev.fencing.migrations;

import dev.fencing.testing.TestDatabaseExtension;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * One run of the migrations command ({@link MigrateCommand#run}) against a test database: its exit
 * status and what it printed. Test code only.
 */
record CommandRun(int status, String out, String err) {

  /** Runs {@code args}, with the test database's password if it has one. */
  static CommandRun of(TestDatabaseExtension db, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status =
        MigrateCommand.run(
            args,
            password(db),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    return new CommandRun(
        status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private static @Nullable String password(TestDatabaseExtension db) {
    return db.password().isEmpty() ? null : db.password();
  }
}
