package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencing.testing.TestDatabaseExtension;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class LeaseClientTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  /**
   * A ttl and timeout no test outlasts, even at load 40 on 2 cores (CI): far longer than {@link
   * FencingTestSupport#PATIENCE}, so a wait that ends within PATIENCE did not end by it.
   */
  private static final Duration LONG = Duration.ofMinutes(10);

  private final List<LeaseClient> clients = new ArrayList<>();
  private final ExecutorService executor = Executors.newCachedThreadPool();

  @BeforeAll
  static void migrate() {
    FencingTestSupport.migrate(db);
  }

  @AfterEach
  void closeClients() {
    clients.forEach(LeaseClient::close);
    executor.shutdownNow();
  }

  @Test
  void tryAcquireOnAFreeResourceIssuesAToken() throws SQLException {
    Lease lease = client("holder-a").tryAcquire("free", LONG).orElseThrow();

    Status status = status("free");
    assertThat(lease.token().value()).isPositive();
    assertThat(lease.resource()).isEqualTo("free");
    assertThat(lease.holder()).isEqualTo("holder-a");
    assertThat(lease.ttl()).isEqualTo(LONG);
    assertThat(lease.expiresAt()).isAfter(status.now()).isEqualTo(status.expiresAt());
    assertThat(status.holder()).isEqualTo("holder-a");
    assertThat(status.token()).isEqualTo(lease.token().value());
    assertThat(status.valid()).isTrue();
    assertThat(lease.isLost()).isFalse();
  }

  @Test
  void tryAcquireWhileHeldIsEmpty() throws SQLException {
    Lease held = client("holder-a").tryAcquire("held", LONG).orElseThrow();

    assertThat(client("holder-b").tryAcquire("held", LONG)).isEmpty();
    assertThat(status("held").token()).isEqualTo(held.token().value());
  }

  @Test
  void afterCloseAnotherClientAcquiresWithAGreaterToken() throws SQLException {
    Lease first = client("holder-a").tryAcquire("handover", LONG).orElseThrow();
    first.close();

    Lease second = client("holder-b").tryAcquire("handover", LONG).orElseThrow();

    assertThat(second.token().value()).isGreaterThan(first.token().value());
    assertThat(second.holder()).isEqualTo("holder-b");
  }

  @Test
  void closeTwiceIsHarmlessAndTheLeaseIsLost() throws SQLException {
    Lease lease = client("holder-a").tryAcquire("close-twice", LONG).orElseThrow();

    lease.close();
    lease.close();

    assertThat(lease.isLost()).isTrue();
    assertThat(status("close-twice").holder()).isNull();
    assertThat(status("close-twice").valid()).isFalse();
    assertThatThrownBy(lease::renew).isInstanceOf(LeaseLostException.class);
  }

  @Test
  void renewExtendsTheExpiry() throws SQLException {
    Lease lease = client("holder-a").tryAcquire("renew", LONG).orElseThrow();
    Instant before = lease.expiresAt();

    Instant renewed = lease.renew();

    assertThat(renewed).isAfter(before);
    assertThat(lease.expiresAt()).isEqualTo(renewed);
    assertThat(status("renew").expiresAt()).isEqualTo(renewed);
    assertThat(lease.isLost()).isFalse();
  }

  @Test
  void renewAfterAnotherClientTookOverIsStale() throws SQLException {
    Lease lease = client("holder-a").tryAcquire("takeover", Duration.ofMillis(100)).orElseThrow();
    await().atMost(FencingTestSupport.PATIENCE).until(() -> !status("takeover").valid());
    Lease next = client("holder-b").tryAcquire("takeover", LONG).orElseThrow();

    assertThatThrownBy(lease::renew)
        .isInstanceOf(StaleFencingTokenException.class)
        .hasMessageContaining("takeover");
    assertThat(lease.isLost()).isTrue();
    assertThat(status("takeover").token()).isEqualTo(next.token().value());
  }

  @Test
  void aRefusedRenewalMarksTheLeaseLost() throws SQLException {
    // A long ttl: the client's own estimate still says valid, so only the refusal can mark it.
    Lease lease = client("holder-a").tryAcquire("forced", LONG).orElseThrow();
    expireOutsideTheClient("forced");
    assertThat(lease.isLost()).isFalse();

    assertThatThrownBy(lease::renew)
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("expired");
    assertThat(lease.isLost()).isTrue();
  }

  @Test
  void acquireWaitsForTheReleaseAndReturnsPromptly() throws Exception {
    Lease held = client("holder-a").tryAcquire("wait", LONG).orElseThrow();
    LeaseClient waiter = client("waiter-b");

    Future<Lease> waiting = executor.submit(() -> waiter.acquire("wait", LONG, LONG));
    await()
        .during(Duration.ofMillis(500))
        .atMost(FencingTestSupport.PATIENCE) // a hang guard; the wait must last the 500 ms
        .until(() -> !waiting.isDone());
    held.close();

    // far less than the 10 min timeout and the 10 min ttl of the released lease
    Lease acquired = waiting.get(FencingTestSupport.PATIENCE.toSeconds(), TimeUnit.SECONDS);
    assertThat(acquired.token().value()).isGreaterThan(held.token().value());
    assertThat(acquired.holder()).isEqualTo("waiter-b");
    assertThat(status("wait").holder()).isEqualTo("waiter-b");
  }

  @Test
  void acquireWaitsUntilTheDatabaseSaysTheLeaseExpired() throws Exception {
    // Never released: only the database-reported expiry can end the wait before the timeout.
    Lease held = client("holder-a").tryAcquire("expiry", Duration.ofMillis(500)).orElseThrow();

    LeaseClient waiter = client("waiter-b");
    Future<Lease> waiting = executor.submit(() -> waiter.acquire("expiry", LONG, LONG));

    // far less than the 10 min timeout: the wait ended at the expiry, not by sleeping it out
    Lease acquired = waiting.get(FencingTestSupport.PATIENCE.toSeconds(), TimeUnit.SECONDS);
    assertThat(acquired.token().value()).isGreaterThan(held.token().value());
  }

  @Test
  void acquireTimesOutWhileTheHolderKeepsTheLease() throws SQLException {
    client("holder-a").tryAcquire("timeout", LONG).orElseThrow();
    LeaseClient waiter = client("waiter-b");
    Duration timeout = Duration.ofMillis(300);

    long start = System.nanoTime();
    assertThatThrownBy(() -> waiter.acquire("timeout", LONG, timeout))
        .isInstanceOf(SQLTimeoutException.class)
        .hasMessageContaining("\"timeout\"")
        .hasMessageContaining("holder-a")
        .hasMessageContaining(timeout.toString());
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(timeout);
  }

  @Test
  void theBorrowedConnectionGetsItsSettingsBackAndStopsListening() throws SQLException {
    try (Connection physical = db.connect()) {
      physical.setAutoCommit(true);
      physical.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
      LeaseClient client =
          track(LeaseClient.builder(unclosable(physical)).holder("pooled").build());

      client.tryAcquire("settings-1", LONG).orElseThrow();
      client.acquire("settings-2", LONG, Duration.ofSeconds(5));
      assertThatThrownBy(() -> client.acquire("settings-1", LONG, Duration.ofMillis(50)))
          .isInstanceOf(SQLTimeoutException.class);

      assertThat(physical.getAutoCommit()).isTrue();
      assertThat(physical.getTransactionIsolation()).isEqualTo(Connection.TRANSACTION_SERIALIZABLE);
      try (Statement s = physical.createStatement();
          ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_listening_channels()")) {
        rs.next();
        assertThat(rs.getInt(1)).isZero();
      }
    }
    // committed, not left in an open transaction on the borrowed connection
    assertThat(status("settings-2").holder()).isEqualTo("pooled");
  }

  @Test
  void acquisitionsCommitDurablyAndReadCommittedReleasesWithoutWaitingForTheFlush()
      throws SQLException {
    // A deferred trigger on the lease row records the settings each lease transaction commits
    // with, on a connection whose session defaults are SERIALIZABLE and synchronous_commit on.
    execute("CREATE TABLE public.lease_commit (op text, isolation text, sync text)");
    execute(
        "CREATE FUNCTION public.lease_commit_seen() RETURNS trigger LANGUAGE plpgsql"
            + " SECURITY DEFINER AS $$ BEGIN INSERT INTO public.lease_commit VALUES"
            + " (CASE WHEN NEW.holder IS NULL THEN 'release' ELSE 'acquire' END,"
            + " current_setting('transaction_isolation'), current_setting('synchronous_commit'));"
            + " RETURN NULL; END $$");
    execute(
        "CREATE CONSTRAINT TRIGGER lease_commit_seen AFTER UPDATE ON fencing.lease"
            + " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.holder = 'settings'"
            + " OR OLD.holder = 'settings') EXECUTE FUNCTION public.lease_commit_seen()");
    try (Connection physical = db.connect()) {
      try (Statement s = physical.createStatement()) {
        s.execute("SET synchronous_commit = on");
      }
      physical.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
      LeaseClient client =
          track(LeaseClient.builder(unclosable(physical)).holder("settings").build());

      client.tryAcquire("commit-settings", LONG).orElseThrow().close();

      assertThat(physical.getTransactionIsolation())
          .as("the session's default is left alone")
          .isEqualTo(Connection.TRANSACTION_SERIALIZABLE);
      try (Statement s = physical.createStatement();
          ResultSet rs =
              s.executeQuery("SELECT op, isolation, sync FROM public.lease_commit ORDER BY op")) {
        List<String> seen = new ArrayList<>();
        while (rs.next()) {
          seen.add(rs.getString(1) + " " + rs.getString(2) + " " + rs.getString(3));
        }
        assertThat(seen).containsExactly("acquire read committed on", "release read committed off");
      }
    } finally {
      execute("DROP TRIGGER lease_commit_seen ON fencing.lease");
      execute("DROP FUNCTION public.lease_commit_seen()");
      execute("DROP TABLE public.lease_commit");
    }
  }

  @Test
  void aCommitThatMightNotBeReplicatedIssuesNoToken() throws SQLException {
    // PostgreSQL sends this warning at COMMIT when a synchronous-replication wait is cancelled;
    // a deferred trigger sends the same warning at COMMIT without a standby.
    execute(
        "CREATE FUNCTION public.fake_syncrep_cancel() RETURNS trigger LANGUAGE plpgsql AS $$"
            + " BEGIN RAISE WARNING 'canceling wait for synchronous replication due to user request'"
            + " USING DETAIL = 'The transaction has already committed locally,"
            + " but might not have been replicated to the standby.'; RETURN NULL; END $$");
    execute(
        "CREATE CONSTRAINT TRIGGER fake_syncrep_cancel AFTER UPDATE ON fencing.lease"
            + " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.holder = 'unreplicated')"
            + " EXECUTE FUNCTION public.fake_syncrep_cancel()");
    try {
      LeaseClient unreplicated = client("unreplicated");
      assertThatThrownBy(() -> unreplicated.tryAcquire("unreplicated", LONG))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("NOT issued")
          .hasMessageContaining("might not have been replicated");
    } finally {
      execute("DROP TRIGGER fake_syncrep_cancel ON fencing.lease");
      execute("DROP FUNCTION public.fake_syncrep_cancel()");
    }
    Status status = status("unreplicated");
    assertThat(status.holder()).as("released again, best effort").isNull();
    Lease next = client("holder-b").tryAcquire("unreplicated", LONG).orElseThrow();
    assertThat(next.token().value()).isGreaterThan(status.lastIssuedBefore());
  }

  @Test
  void theDefaultHolderNamesHostProcessAndInstance() {
    String holder = track(LeaseClient.builder(db.dataSource()).build()).holder();

    assertThat(holder).matches(".+/" + ProcessHandle.current().pid() + "/[0-9a-f]{6}");
  }

  @Test
  void invalidSettingsFailNamingTheField() {
    LeaseClient client = client("holder-a");
    assertThatThrownBy(() -> client.tryAcquire("r", Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ttl");
    assertThatThrownBy(() -> client.acquire("r", Duration.ofDays(8), LONG))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ttl");
    assertThatThrownBy(() -> client.acquire("r", LONG, Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("timeout");
    assertThatThrownBy(() -> builder().handoverTimeout(Duration.ofSeconds(-1)).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("handoverTimeout");
    assertThatThrownBy(() -> builder().renewFraction(1.5).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("renewFraction");
    // B138: the bounds themselves are accepted
    builder().renewFraction(0.5).build().close();
    builder().renewFraction(0.001).build().close();
    assertThatThrownBy(() -> builder().schema("Bad-Name").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("schema")
        .hasMessageContaining("Bad-Name");
    assertThatThrownBy(() -> builder().holder("").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("holder");
  }

  @Test
  void anInvalidTtlFailsBeforeTouchingTheDatabase() {
    DataSource unreachable =
        proxy(
            DataSource.class,
            (method, args) -> {
              throw new SQLException("must not be called", "08001");
            });
    LeaseClient client = track(LeaseClient.builder(unreachable).holder("h").build());

    assertThatThrownBy(() -> client.tryAcquire("r", Duration.ofMillis(-5)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ttl");
  }

  @Test
  void aClosedClientRefusesToAcquire() {
    LeaseClient client = client("holder-a");
    client.close();
    client.close();

    assertThatThrownBy(() -> client.tryAcquire("closed", LONG))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed");
  }

  // --- helpers ---------------------------------------------------------------------------------

  private LeaseClient.Builder builder() {
    return LeaseClient.builder(db.dataSource());
  }

  private LeaseClient client(String holder) {
    return track(builder().holder(holder).build());
  }

  private LeaseClient track(LeaseClient client) {
    clients.add(client);
    return client;
  }

  record Status(
      @Nullable String holder,
      @Nullable Long token,
      @Nullable Instant expiresAt,
      boolean valid,
      long lastIssuedBefore,
      Instant now) {}

  static Status status(String resource) throws SQLException {
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT s.holder, s.lease_token, s.expires_at, s.lease_valid, s.last_issued,"
                    + " clock_timestamp() FROM fencing.status(?) s")) {
      ps.setString(1, resource);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        OffsetDateTime expires = rs.getObject(3, OffsetDateTime.class);
        long token = rs.getLong(2);
        Long tokenOrNull = rs.wasNull() ? null : token;
        return new Status(
            rs.getString(1),
            tokenOrNull,
            expires == null ? null : expires.toInstant(),
            rs.getBoolean(4),
            rs.getLong(5),
            rs.getObject(6, OffsetDateTime.class).toInstant());
      }
    }
  }

  /** As superuser, behind the client's back: the lease expired a second ago. */
  static void expireOutsideTheClient(String resource) throws SQLException {
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "UPDATE fencing.lease SET expires_at = now() - interval '1 second'"
                    + " WHERE resource_id = (SELECT id FROM fencing.resource WHERE name = ?)")) {
      ps.setString(1, resource);
      assertThat(ps.executeUpdate()).isOne();
    }
  }

  private static void execute(String sql) throws SQLException {
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  /** A DataSource that lends out {@code physical} and ignores close(), like a pool. */
  private static DataSource unclosable(Connection physical) {
    Connection borrowed =
        proxy(
            Connection.class,
            (method, args) ->
                method.getName().equals("close") ? null : method.invoke(physical, args));
    return proxy(
        DataSource.class,
        (method, args) -> {
          if (method.getName().equals("getConnection")) {
            return borrowed;
          }
          throw new UnsupportedOperationException(method.getName());
        });
  }

  @FunctionalInterface
  interface Handler {
    @Nullable Object handle(java.lang.reflect.Method method, Object @Nullable [] args)
        throws Throwable;
  }

  static <T> T proxy(Class<T> type, Handler handler) {
    Object proxy =
        Proxy.newProxyInstance(
            type.getClassLoader(),
            new Class<?>[] {type},
            (self, method, args) -> {
              try {
                return handler.handle(method, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
    return type.cast(proxy);
  }
}
