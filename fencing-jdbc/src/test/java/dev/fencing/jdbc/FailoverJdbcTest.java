package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.fencing.migrations.FencingMigrations;
import dev.fencing.testing.PostgresServer;
import dev.fencing.testing.StreamingPair;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Issue 16, the Java side of a failover: a multi-host data source ({@code
 * targetServerType=primary}) reaches the promoted standby by itself; a kept-alive lease whose
 * renewals can no longer be confirmed (its primary is gone) is reported lost to its listener;
 * acquisitions succeed on the new primary with tokens above the lost ones, and a zombie's write
 * with a token the new primary never issued is refused. The external-token path works there too.
 */
class FailoverJdbcTest {
  static final String DATABASE = "app";
  static final String APP_USER = "app_user";
  private static final Duration WAIT = Duration.ofSeconds(60);

  /** One call of the listener. */
  record Lost(Lease lease, @Nullable Throwable cause) {}

  @Test
  void leasesAndTokensCarryOnAcrossAFailover() throws Exception {
    try (StreamingPair pair = StreamingPair.start()) {
      PostgresServer primary = pair.primary();
      install(primary);
      DataSource both = multiHost(primary, pair.standby());
      assertThat(serverPort(both)).isEqualTo(primary.port());

      BlockingQueue<Lost> lost = new ArrayBlockingQueue<>(4);
      try (LeaseClient before = LeaseClient.builder(both).holder("before").build()) {
        before.tryAcquire("ledger", Duration.ofMillis(1)).orElseThrow(); // replicated, expired
      }
      pair.awaitReplayed();
      pair.cutOff();

      Lease zombie;
      try (LeaseClient worker =
          LeaseClient.builder(both)
              .holder("worker")
              .keepAlive(true)
              .renewFraction(0.2)
              .listener((lease, cause) -> lost.add(new Lost(lease, cause)))
              .build()) {
        // issued by the old primary after the standby was cut off: lost by the failover
        zombie = worker.tryAcquire("ledger", Duration.ofSeconds(2)).orElseThrow();
        primary.crash();

        Lost call = lost.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(call).as("the listener is told the lease is lost").isNotNull();
        assertThat(call.lease()).isSameAs(zombie);
        assertThat(call.cause()).as("the failed renewal").isInstanceOf(SQLException.class);
        assertThat(zombie.isLost()).isTrue();
        assertThat(lost.poll(200, TimeUnit.MILLISECONDS)).as("told once").isNull();
      }

      PostgresServer promoted = pair.promote();
      assertThat(serverPort(both))
          .as("the same data source reaches the new primary")
          .isEqualTo(promoted.port());
      try (LeaseClient after = LeaseClient.builder(both).holder("after").build();
          Lease next = after.acquire("ledger", Duration.ofSeconds(30), WAIT)) {
        assertThat(next.token().value())
            .as("above the token the old primary issued and the new one never saw")
            .isGreaterThan(zombie.token().value());

        DataSource fenced = FencedDataSource.wrap(both);
        SQLException refused = write(fenced, Fencing.bind(zombie.token()));
        assertThat((Throwable) refused).isInstanceOf(StaleFencingTokenException.class);
        assertThat((Object) write(fenced, Fencing.bind(next)))
            .as("the current holder writes")
            .isNull();
      }
      // external tokens (ZooKeeper, etcd) are numbers of another issuer: unaffected
      try (Connection c = both.getConnection();
          PreparedStatement ps =
              c.prepareStatement("SELECT fencing.create_resource('zk-job', true)")) {
        ps.execute();
      }
      DataSource fenced = FencedDataSource.wrap(both);
      assertThat((Object) write(fenced, Fencing.bind(FencingToken.of("zk-job", 7)))).isNull();
      assertThat((Object) write(fenced, Fencing.bind(FencingToken.of("zk-job", 8)))).isNull();
      assertThat((Throwable) write(fenced, Fencing.bind(FencingToken.of("zk-job", 7))))
          .isInstanceOf(StaleFencingTokenException.class);
    }
  }

  /** A fenced write with {@code scope}'s binding: null if it committed, else its refusal. */
  private static @Nullable SQLException write(DataSource fenced, FencingScope scope)
      throws SQLException {
    try (scope;
        Connection c = fenced.getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps =
          c.prepareStatement("UPDATE accounts SET balance = balance + 1 WHERE id = 1")) {
        SQLException e = catchThrowableOfType(SQLException.class, ps::executeUpdate);
        if (e != null) {
          c.rollback();
          return e;
        }
      }
      c.commit();
      return null;
    }
  }

  /**
   * The fence migrated into database {@link #DATABASE}, login {@link #APP_USER} in its application
   * role, table {@code accounts (id, balance)} holding row 1 (also {@link HotStandbyTest}'s).
   */
  static void install(PostgresServer server) throws SQLException {
    server.execute("CREATE DATABASE " + DATABASE);
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setUrl(server.jdbcUrl(DATABASE));
    FencingMigrations.builder(ds).build().migrate();
    try (Connection c = server.connect(DATABASE);
        Statement s = c.createStatement()) {
      s.execute(
          "CREATE ROLE "
              + APP_USER
              + " LOGIN IN ROLE "
              + FencingMigrations.DEFAULT_APPLICATION_ROLE);
      s.execute("CREATE TABLE accounts (id bigint PRIMARY KEY, balance bigint NOT NULL)");
      s.execute("INSERT INTO accounts VALUES (1, 0)");
      s.execute("GRANT SELECT, UPDATE ON accounts TO " + APP_USER);
    }
  }

  /** Both servers in one URL: pgjdbc connects to whichever is the primary. */
  private static DataSource multiHost(PostgresServer a, PostgresServer b) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setUrl(
        "jdbc:postgresql://127.0.0.1:"
            + a.port()
            + ",127.0.0.1:"
            + b.port()
            + "/"
            + DATABASE
            + "?targetServerType=primary&user="
            + APP_USER
            + "&connectTimeout=5&socketTimeout=30");
    return ds;
  }

  private static int serverPort(DataSource ds) throws SQLException {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT inet_server_port()")) {
      rs.next();
      return rs.getInt(1);
    }
  }
}
