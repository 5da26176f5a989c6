package dev.fencing.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * Which failures of the local server make {@link TestPostgres} move on to another kind of server:
 * only a refusal. A server that is slow, starting up or out of connection slots (as on a machine at
 * load 40) is waited for, never silently replaced by another one.
 */
class TestPostgresTest {
  @Test
  void aRefusalOfUserOrDatabaseMovesOn() {
    assertThat(refusedForGood("28P01")).as("password authentication failed").isTrue();
    assertThat(refusedForGood("28000")).as("no such role, or pg_hba rejects it").isTrue();
    assertThat(refusedForGood("3D000")).as("no database postgres").isTrue();
    assertThat(refusedForGood("08004")).as("a password is wanted that we do not have").isTrue();
  }

  @Test
  void aSlowOrBusyServerIsWaitedFor() {
    assertThat(refusedForGood("08001")).as("login timed out").isFalse();
    assertThat(refusedForGood("08006")).as("connection lost").isFalse();
    assertThat(refusedForGood("53300")).as("too many connections").isFalse();
    assertThat(refusedForGood("57P03")).as("the database system is starting up").isFalse();
    assertThat(refusedForGood(null)).as("no SQLSTATE").isFalse();
  }

  private static boolean refusedForGood(@Nullable String sqlState) {
    return TestPostgres.refusedForGood(new SQLException("test", sqlState));
  }
}
