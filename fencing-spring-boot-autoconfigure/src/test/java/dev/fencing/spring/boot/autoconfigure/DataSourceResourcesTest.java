package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.spring.boot.FencingRefusedDataAccessException;
import dev.fencing.spring.boot.autoconfigure.app.JdbcTestApplication;
import dev.fencing.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * {@code fencing.datasource.resources} through the real auto-configuration against PostgreSQL: the
 * {@code DataSource} bean given resources checks only those; a token bound for a resource that
 * lives elsewhere (another database, another fencing system) is left alone instead of being refused
 * as never issued here, while a stale token of its own resources is still refused.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class DataSourceResourcesTest {
  private static final String ELSEWHERE = "elsewhere/job";

  @Test
  void aDataSourceChecksOnlyTheResourcesThatLiveInItsDatabase() throws SQLException {
    try (TestDatabase db = TestDatabase.create("datasource_resources")) {
      try (Connection c = db.connect(db.migrationUser());
          Statement s = c.createStatement()) {
        s.execute("CREATE TABLE placed_entry (id serial PRIMARY KEY, text text NOT NULL)");
      }

      try (ConfigurableApplicationContext context = start(db)) {
        Throwable failed = catchThrowable(() -> writeWithBoth(context, "unplaced"));
        assertThat(failed)
            .as("without the property every token bound is checked here")
            .hasMessageContaining("unknown fencing resource \"" + ELSEWHERE + "\"")
            .hasCauseInstanceOf(SQLException.class);
        assertThat(((SQLException) failed.getCause()).getSQLState()).isEqualTo("ZF004");
      }

      try (ConfigurableApplicationContext context =
          start(db, "fencing.datasource.resources.dataSource=ledger-*,audit")) {
        JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
        FencingToken written = writeWithBoth(context, "placed");

        assertThat(count(jdbc, "placed")).isEqualTo(1);
        assertThat(count(jdbc, "unplaced")).as("the refused write left nothing").isZero();
        assertThat(
                jdbc.queryForObject(
                    "SELECT max_seen FROM fencing.status(?)", Long.class, "ledger-1"))
            .as("its own resource was checked")
            .isEqualTo(written.value());
        assertThat(
                jdbc.queryForObject(
                    "SELECT count(*) FROM fencing.resource WHERE name = ?", Long.class, ELSEWHERE))
            .isZero();

        // a newer token of ledger-1 lands; the older one, still bound beside the foreign one, is
        // refused: the placement leaves the fence of its own resources as it was
        writeWithBoth(context, "newer");
        Throwable stale =
            catchThrowable(
                () -> {
                  try (FencingScope scope = Fencing.bind(written, FencingToken.of(ELSEWHERE, 7))) {
                    insert(context, "stale");
                  }
                });
        assertThat(stale).isInstanceOf(FencingRefusedDataAccessException.class);
        assertThat(stale.getCause()).isInstanceOf(StaleFencingTokenException.class);
        assertThat(count(jdbc, "stale")).isZero();
      }
    }
  }

  /** Writes {@code text} with a new token of ledger-1 and a token of a resource not here. */
  private static FencingToken writeWithBoth(ConfigurableApplicationContext context, String text)
      throws SQLException {
    LeaseClient leases = context.getBean(LeaseClient.class);
    try (Lease lease = leases.tryAcquire("ledger-1", Duration.ofSeconds(30)).orElseThrow();
        FencingScope scope = Fencing.bind(lease.token(), FencingToken.of(ELSEWHERE, 7))) {
      insert(context, text);
      return lease.token();
    }
  }

  private static void insert(ConfigurableApplicationContext context, String text) {
    JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
    new TransactionTemplate(context.getBean(PlatformTransactionManager.class))
        .executeWithoutResult(
            status -> jdbc.update("INSERT INTO placed_entry (text) VALUES (?)", text));
  }

  private static long count(JdbcTemplate jdbc, String text) {
    return jdbc.queryForObject(
        "SELECT count(*) FROM placed_entry WHERE text = ?", Long.class, text);
  }

  private static ConfigurableApplicationContext start(TestDatabase db, String... properties) {
    return new SpringApplicationBuilder(JdbcTestApplication.class)
        .web(WebApplicationType.NONE)
        .properties("spring.main.banner-mode=off")
        .properties(
            Stream.concat(Arrays.stream(PerClassDatabase.properties(db)), Arrays.stream(properties))
                .toArray(String[]::new))
        .run();
  }
}
