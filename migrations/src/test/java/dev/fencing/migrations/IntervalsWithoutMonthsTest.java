package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.FenceSnapshot;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Migration V23: an interval with a month or year part is refused as a lease's ttl or handover
 * timeout. PostgreSQL compares a month as 30 days but adds it as a calendar month, so {@code '1 mon
 * -29 days'} passed the range check as one day and, on 1 February, made a lease that expired the
 * day before it was granted ({@code acquired = true}); {@code '1 mon -23 days'} (7 days by
 * comparison) lasted 8 days from 1 March. Found reviewing V20 (its inlined checks copy V2's).
 */
class IntervalsWithoutMonthsTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final String RES = "months/held";
  private static long token;

  @BeforeAll
  static void migrate() throws SQLException {
    assertThat(Fence.migrate(db)).isEqualTo(Fence.MIGRATIONS);
    try (Connection c = db.connect()) {
      token = Fence.acquire(c, RES, "holder-a", Duration.ofMinutes(5));
    }
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "SELECT * FROM fencing.try_acquire('months/new', 'h', ?::interval) | 1 mon -29 days | ttl",
        "SELECT * FROM fencing.try_acquire('months/new', 'h', ?::interval) | 1 mon -23 days | ttl",
        "SELECT * FROM fencing.try_acquire('months/new', 'h', ?::interval) | -1 mon 35 days | ttl",
        "SELECT * FROM fencing.try_acquire('months/new', 'h', ?::interval) | 1 year -359 days | ttl",
        "SELECT * FROM fencing.try_acquire('months/new', 'h', '1 minute', ?::interval)"
            + " | 1 mon -30 days 10 minutes | handover_timeout",
        "SELECT fencing.renew('months/held', $TOKEN, ?::interval) | 1 mon -29 days | ttl",
      })
  void anIntervalWithMonthsIsRefusedAndChangesNothing(String sql, String value, String argument)
      throws SQLException {
    try (Connection observer = db.connect();
        Connection c = db.connect()) {
      FenceSnapshot before = FenceSnapshot.take(observer);
      String statement = sql.replace("$TOKEN", Long.toString(token));
      SQLException e =
          Fence.assertFails(Fence.INVALID_ARGUMENT, () -> FenceSql.run(c, statement, value));
      assertThat(e.getMessage())
          .contains(argument + " must not have months or years (their length varies)");
      assertThat(Fence.detail(e)).contains("\"argument\": \"" + argument + "\"");
      assertThat(FenceSnapshot.take(observer)).isEqualTo(before);
    }
  }

  /** The same lengths in days and times are accepted, as before. */
  @ParameterizedTest
  @CsvSource({"1 day", "6 days 23:59:59", "00:00:00.001", "7 days"})
  void theSameLengthsWithoutMonthsAreAccepted(String ttl) throws SQLException {
    try (Connection c = db.connect()) {
      String res = "months/ok/" + ttl.replaceAll("[^0-9a-z]", "_");
      assertThat(
              FenceSql.string(
                  c,
                  "SELECT acquired::text FROM fencing.try_acquire(?, 'h', ?::interval)",
                  res,
                  ttl))
          .isEqualTo("true");
    }
  }
}
