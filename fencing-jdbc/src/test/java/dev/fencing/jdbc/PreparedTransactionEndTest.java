package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.FencingTestSupport.queryLong;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.migrations.FencingMigrations;
import dev.fencing.testing.PostgresServer;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * {@code PREPARE TRANSACTION} ends a fenced transaction as a {@code COMMIT} does: checked before
 * it, so a stale token's hidden write is never prepared (and so never committed by a later {@code
 * COMMIT PREPARED} on another connection), while the current holder's is. Two-phase commit needs
 * {@code max_prepared_transactions > 0}, which PostgreSQL's default (and the shared test server)
 * does not have: the test builds a server of its own with it ({@link PostgresServer}).
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class PreparedTransactionEndTest {
  private static final String DATABASE = "prepared_end";
  private static final long STALE = 8;
  private static final long CURRENT = 9;

  private static PostgresServer server;
  private static DataSource plain;
  private static DataSource fenced;
  private static String resource;

  @BeforeAll
  static void setUp() throws SQLException {
    server = PostgresServer.create("prepared-end", Map.of("max_prepared_transactions", "4"));
    server.execute("CREATE DATABASE " + DATABASE);
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setUrl(server.jdbcUrl(DATABASE));
    ds.setUser(PostgresServer.USER);
    FencingMigrations.builder(ds).build().migrate();
    plain = ds;
    fenced = FencedDataSource.wrap(plain);
    resource = externalResource(plain, "prepared-end", CURRENT);
    exec(plain, "CREATE TABLE pe_rows2 (id int PRIMARY KEY)");
    FencingTestSupport.createHiddenWrite(plain, "pe");
  }

  @AfterAll
  static void tearDown() {
    if (server != null) {
      server.close();
    }
  }

  private static FencingScope bind(long token) {
    return Fencing.bind(FencingToken.of(resource, token));
  }

  private static void run(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  @Test
  void theServerPreparesTransactions() throws SQLException {
    assertThat(queryLong(plain, "SELECT current_setting('max_prepared_transactions')::int"))
        .isPositive();
  }

  @Test
  void aStaleTokensHiddenWriteIsNotPrepared() throws SQLException {
    long before = queryLong(plain, "SELECT count(*) FROM pe_rows");
    try (Connection c = fenced.getConnection()) {
      c.setAutoCommit(false);
      try (FencingScope zombie = bind(STALE)) {
        run(c, "SELECT * FROM pe_hidden");
        Throwable e = catchThrowable(() -> run(c, "PREPARE TRANSACTION 'pe-zombie'"));
        assertThat(FencingExceptions.find(e))
            .as("refused as stale: %s", String.valueOf(e))
            .containsInstanceOf(StaleFencingTokenException.class);
      }
    }
    assertThat(queryLong(plain, "SELECT count(*) FROM pg_prepared_xacts WHERE gid = 'pe-zombie'"))
        .isZero();
    assertThat(queryLong(plain, "SELECT count(*) FROM pe_rows")).isEqualTo(before);
  }

  @Test
  void theHoldersPreparedTransactionCommitsWhenAsked() throws SQLException {
    try (Connection c = fenced.getConnection();
        FencingScope holder = bind(CURRENT)) {
      c.setAutoCommit(false);
      run(c, "INSERT INTO pe_rows2 VALUES (1)");
      run(c, "PREPARE TRANSACTION 'pe-holder'");
    }
    assertThat(queryLong(plain, "SELECT count(*) FROM pe_rows2 WHERE id = 1")).isZero();
    exec(plain, "COMMIT PREPARED 'pe-holder'");
    assertThat(queryLong(plain, "SELECT count(*) FROM pe_rows2 WHERE id = 1")).isOne();
  }
}
