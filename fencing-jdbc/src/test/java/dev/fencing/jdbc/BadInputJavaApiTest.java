package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.PATIENCE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.fencing.testing.FenceSnapshot;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The bad input catalogue (docs/BAD-INPUT.md), Java entry point: malformed and hostile arguments to
 * {@link FencingToken}, {@link Fencing}, {@link LeaseClient}, {@link Lease}, {@link
 * FencedDataSource} and {@link FencingExceptions}, misuse of closed and lost leases, and concurrent
 * misuse. Each case names the exception type and a fragment of its message, and proves with a
 * {@link FenceSnapshot} that nothing was written: the fence's tables and catalog, the token
 * sequence, the application table, and the rejection log (which gains exactly the row of a refusal
 * by the database, and nothing else).
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class BadInputJavaApiTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final Duration TTL = Duration.ofMinutes(5);
  private static final String APP = "bad_java";
  private static final String KNOWN = "bad-java/known";
  private static final String EXTERNAL = "bad-java/external";

  private static PGSimpleDataSource plain;
  private static FencedDataSource fenced;
  private static LeaseClient client;
  private static LeaseClient closedClient;
  private static Lease known;

  private final ExecutorService pool = Executors.newCachedThreadPool();
  private final List<LeaseClient> clients = new ArrayList<>();

  @BeforeAll
  static void setUp() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = FencingTestSupport.plain(db, ds -> ds);
    FencingTestSupport.exec(plain, "CREATE TABLE " + APP + " (id int PRIMARY KEY)");
    FencingTestSupport.exec(plain, "INSERT INTO " + APP + " VALUES (1)");
    FencingTestSupport.externalResource(plain, EXTERNAL, 0);
    fenced = FencedDataSource.wrap(plain);
    client = LeaseClient.builder(plain).holder("bad-java").build();
    closedClient = LeaseClient.builder(plain).holder("closed").build();
    closedClient.close();
    known = client.tryAcquire(KNOWN, TTL).orElseThrow();
  }

  @AfterAll
  static void tearDown() {
    known.close();
    client.close();
  }

  @AfterEach
  void cleanUp() {
    pool.shutdownNow();
    clients.forEach(LeaseClient::close);
    assertThat(Fencing.current().isEmpty()).as("binding left on the test thread").isTrue();
  }

  // ---------------------------------------------------------------------------------------------
  // Arguments refused before anything reaches the database
  // ---------------------------------------------------------------------------------------------

  static Stream<Arguments> refusedArguments() {
    String positive = "fencing token must be positive, was ";
    String allowed = "; allowed are letters, digits and _ . : / @ + = # -";
    String holder = "holder must be 1 to 200 characters without control characters";
    String schema = "schema must be a lower-case SQL identifier";
    String renewFraction = "renewFraction must be between 0.001 and 0.5";
    return Stream.of(
        refused(
            "B01",
            "FencingToken: null resource",
            () -> new FencingToken(null, 1),
            NullPointerException.class,
            "resource"),
        refused(
            "B02",
            "FencingToken: empty resource",
            () -> FencingToken.of("", 1),
            IllegalArgumentException.class,
            "resource name is empty"),
        refused(
            "B03",
            "FencingToken: token 0",
            () -> FencingToken.of(KNOWN, 0),
            IllegalArgumentException.class,
            positive + "0"),
        refused(
            "B03",
            "FencingToken: token -1",
            () -> FencingToken.of(KNOWN, -1),
            IllegalArgumentException.class,
            positive + "-1"),
        refused(
            "B03",
            "FencingToken: token Long.MIN_VALUE",
            () -> FencingToken.of(KNOWN, Long.MIN_VALUE),
            IllegalArgumentException.class,
            positive + Long.MIN_VALUE),
        refused(
            "B04",
            "FencingToken: NUL byte",
            () -> FencingToken.of("nul\u0000", 1),
            IllegalArgumentException.class,
            "a control character (code 0) at position 4" + allowed),
        refused(
            "B05",
            "FencingToken: newline",
            () -> FencingToken.of("a\nb", 1),
            IllegalArgumentException.class,
            "a control character (code 10) at position 2"),
        refused(
            "B05",
            "FencingToken: ESC",
            () -> FencingToken.of("\u001b[31m", 1),
            IllegalArgumentException.class,
            "a control character (code 27) at position 1"),
        refused(
            "B06",
            "FencingToken: 201 characters",
            () -> FencingToken.of("r".repeat(201), 1),
            IllegalArgumentException.class,
            "resource name is 201 characters long; the limit is 200"),
        refused(
            "B06",
            "FencingToken: 10^6 characters",
            () -> FencingToken.of("r".repeat(1_000_000), 1),
            IllegalArgumentException.class,
            "resource name is 1000000 characters long"),
        refused(
            "B07",
            "FencingToken: SQL injection",
            () -> FencingToken.of("x'; DROP TABLE fencing.resource; --", 1),
            IllegalArgumentException.class,
            "the character \"'\" at position 2"),
        refused(
            "B07",
            "FencingToken: double quote",
            () -> FencingToken.of("a\"b", 1),
            IllegalArgumentException.class,
            "the character \"\"\" at position 2"),
        refused(
            "B08",
            "FencingToken: Cyrillic a that looks like a Latin a",
            () -> FencingToken.of("ledger-\u0430", 1),
            IllegalArgumentException.class,
            "the character \"\u0430\" at position 8"),
        refused(
            "B08",
            "FencingToken: emoji (a surrogate pair counts as one character)",
            () -> FencingToken.of("ab\uD83D\uDE00", 1),
            IllegalArgumentException.class,
            "the character \"\uD83D\uDE00\" at position 3"),
        refused(
            "B09",
            "FencingToken: LIKE metacharacter %",
            () -> FencingToken.of("ledger%", 1),
            IllegalArgumentException.class,
            "the character \"%\" at position 7"),
        refused(
            "B10",
            "Fencing.bind: null array of leases",
            () -> Fencing.bind((Lease[]) null),
            NullPointerException.class,
            "leases"),
        refused(
            "B10",
            "Fencing.bind: null token",
            () -> Fencing.bind((FencingToken) null),
            NullPointerException.class,
            "token"),
        refused(
            "B10",
            "Fencing.wrap: null task",
            () -> Fencing.wrap((Runnable) null),
            NullPointerException.class,
            "task"),
        refused(
            "B11",
            "LeaseClient.builder: null DataSource",
            () -> LeaseClient.builder(null),
            NullPointerException.class,
            "dataSource"),
        refused(
            "B11",
            "LeaseClient holder: empty",
            () -> LeaseClient.builder(plain).holder("").build(),
            IllegalArgumentException.class,
            holder),
        refused(
            "B11",
            "LeaseClient holder: NUL byte",
            () -> LeaseClient.builder(plain).holder("a\u0000b").build(),
            IllegalArgumentException.class,
            holder),
        refused(
            "B11",
            "LeaseClient holder: 201 characters",
            () -> LeaseClient.builder(plain).holder("h".repeat(201)).build(),
            IllegalArgumentException.class,
            holder),
        refused(
            "B137",
            "LeaseClient holder: a C1 control character (NEL)",
            () -> LeaseClient.builder(plain).holder("worker\u0085").build(),
            IllegalArgumentException.class,
            holder),
        refused(
            "B137",
            "LeaseClient holder: U+2028, a line separator",
            () -> LeaseClient.builder(plain).holder("line\u2028separator").build(),
            IllegalArgumentException.class,
            holder),
        refused(
            "B137",
            "LeaseClient holder: an unpaired surrogate",
            () -> LeaseClient.builder(plain).holder("a\ud800b").build(),
            IllegalArgumentException.class,
            holder),
        refused(
            "B137",
            "LeaseClient holder: 201 emoji (402 UTF-16 units)",
            () -> LeaseClient.builder(plain).holder("\ud83d\ude00".repeat(201)).build(),
            IllegalArgumentException.class,
            holder),
        refused(
            "B12",
            "LeaseClient schema: SQL injection",
            () -> LeaseClient.builder(plain).schema("fencing.x; DROP TABLE t; --").build(),
            IllegalArgumentException.class,
            schema),
        refused(
            "B12",
            "LeaseClient schema: quoted identifier",
            () -> LeaseClient.builder(plain).schema("\"Fencing\"").build(),
            IllegalArgumentException.class,
            schema),
        refused(
            "B13",
            "LeaseClient handoverTimeout: zero",
            () -> LeaseClient.builder(plain).handoverTimeout(Duration.ZERO).build(),
            IllegalArgumentException.class,
            "handoverTimeout must be between 1 ms and 1 h"),
        refused(
            "B13",
            "LeaseClient renewFraction: NaN",
            () -> LeaseClient.builder(plain).renewFraction(Double.NaN).build(),
            IllegalArgumentException.class,
            renewFraction),
        refused(
            "B138",
            "LeaseClient renewFraction: 0.99 (the first renewal after the reckoned expiry)",
            () -> LeaseClient.builder(plain).renewFraction(0.99).build(),
            IllegalArgumentException.class,
            renewFraction),
        refused(
            "B138",
            "LeaseClient renewFraction: just above 1/2",
            () -> LeaseClient.builder(plain).renewFraction(Math.nextUp(0.5)).build(),
            IllegalArgumentException.class,
            renewFraction),
        refused(
            "B138",
            "LeaseClient renewFraction: 1e-9 (a renewal every 600 µs of a 7-day lease)",
            () -> LeaseClient.builder(plain).renewFraction(1e-9).build(),
            IllegalArgumentException.class,
            renewFraction),
        refused(
            "B138",
            "LeaseClient renewFraction: just below 1/1000",
            () -> LeaseClient.builder(plain).renewFraction(Math.nextDown(0.001)).build(),
            IllegalArgumentException.class,
            renewFraction),
        refused(
            "B14",
            "tryAcquire: null resource",
            () -> client.tryAcquire(null, TTL),
            NullPointerException.class,
            "resource"),
        refused(
            "B14",
            "tryAcquire: NUL byte in resource",
            () -> client.tryAcquire("bad-java/nul\u0000", TTL),
            IllegalArgumentException.class,
            "a control character (code 0) at position 13"),
        refused(
            "B14",
            "acquire: SQL injection as resource",
            () -> client.acquire("x'); DROP TABLE fencing.lease; --", TTL, Duration.ZERO),
            IllegalArgumentException.class,
            "the character \"'\" at position 2"),
        refused(
            "B15",
            "tryAcquire: ttl of ten years",
            () -> client.tryAcquire("bad-java/ttl", Duration.ofDays(3650)),
            IllegalArgumentException.class,
            "ttl must be between 1 ms and 7 days, was PT87600H"),
        refused(
            "B15",
            "tryAcquire: negative ttl",
            () -> client.tryAcquire("bad-java/ttl", Duration.ofSeconds(-1)),
            IllegalArgumentException.class,
            "ttl must be between 1 ms and 7 days"),
        refused(
            "B15",
            "tryAcquire: null ttl",
            () -> client.tryAcquire("bad-java/ttl", null),
            NullPointerException.class,
            "ttl"),
        refused(
            "B16",
            "acquire: negative timeout",
            () -> client.acquire("bad-java/timeout", TTL, Duration.ofNanos(-1)),
            IllegalArgumentException.class,
            "timeout must not be negative"),
        refused(
            "B17",
            "tryAcquire on a closed client",
            () -> closedClient.tryAcquire("bad-java/closed", TTL),
            IllegalStateException.class,
            "lease client closed is closed"),
        refused(
            "B18",
            "tryAcquire on an external resource",
            () -> client.tryAcquire(EXTERNAL, TTL),
            SQLException.class,
            "is fenced by external tokens; it has no lease here"),
        refused(
            "B19",
            "FencedDataSource.builder: null target",
            () -> FencedDataSource.builder(null),
            NullPointerException.class,
            "target"),
        refused(
            "B19",
            "FencedDataSource schema: SQL injection",
            () -> FencedDataSource.builder(plain).schema("fencing;drop"),
            IllegalArgumentException.class,
            "schema must be a lower-case SQL identifier"),
        refused(
            "B19",
            "FencedDataSource meterRegistry: not a MeterRegistry",
            () -> FencedDataSource.builder(plain).meterRegistry("registry").build(),
            IllegalArgumentException.class,
            "meterRegistry must be an io.micrometer"),
        refused(
            "B20",
            "FencingExceptions.missingToken: null resource",
            () -> FencingExceptions.missingToken(null, "no token"),
            NullPointerException.class,
            "resource"));
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("refusedArguments")
  void refusedWithoutWrites(
      String id, String label, ThrowingCallable call, Class<?> type, String message)
      throws SQLException {
    FenceSnapshot before = snapshot();
    Throwable thrown = catchThrowable(call);
    assertThat(thrown).as("%s %s", id, label).isInstanceOf(type).hasMessageContaining(message);
    assertThat(snapshot()).as(id).isEqualTo(before);
  }

  @Test
  @DisplayName("B20 FencingExceptions.find: null, a cause cycle, a fence error that is no refusal")
  void findIsTotal() {
    assertThat(FencingExceptions.find(null)).isEmpty();
    RuntimeException a = new RuntimeException("a");
    RuntimeException b = new RuntimeException("b", a);
    a.initCause(b); // a cycle: a -> b -> a
    assertThat(FencingExceptions.find(a)).isEmpty();
    assertThat(FencingExceptions.find(new SQLException("bad ttl", "ZF006"))).isEmpty();
    assertThat(FencingExceptions.find(new SQLException("garbage", "ZF001")))
        .hasValueSatisfying(r -> assertThat(r.resource()).isEqualTo("?"));
  }

  @Test
  @DisplayName("B36 the Java resource-name rule is the database's")
  void javaRuleAgreesWithTheDatabase() throws SQLException {
    List<String> names =
        List.of(
            "ok",
            "Svc_1.a:b/c@d+e=f#g-h",
            "n".repeat(200),
            "n".repeat(201),
            "with space",
            "tab\there",
            "it's",
            "caf\u00e9",
            "ledger-\u0430",
            "50%",
            "under_score",
            "semi;colon",
            "ab\uD83D\uDE00",
            "back\\slash",
            "\u007f");
    try (Connection c = plain.getConnection()) {
      for (String name : names) {
        Throwable java = catchThrowable(() -> FencingToken.requireValidResource(name));
        Throwable sql =
            catchThrowable(
                () -> FencingTestSupport.query(c, "SELECT * FROM fencing.status(?)", name));
        if (java == null) {
          // valid names reach the lookup: unknown, but not malformed
          assertThat(sql).as(name).hasMessageContaining("unknown fencing resource");
        } else {
          assertThat(((SQLException) sql).getSQLState()).as(name).isEqualTo("ZF004");
          assertThat(sql).as(name).hasMessageContaining(java.getMessage());
        }
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Writes through FencedDataSource with bad or lost tokens
  // ---------------------------------------------------------------------------------------------

  @Test
  @DisplayName("B21 write with a token never issued (Long.MAX_VALUE)")
  void writeWithNeverIssuedToken() throws SQLException {
    FenceSnapshot before = snapshot();
    Throwable thrown = write(FencingToken.of(KNOWN, Long.MAX_VALUE));
    assertThat(thrown)
        .isInstanceOf(FencingTokenNeverIssuedException.class)
        .hasMessageContaining("fencing token " + Long.MAX_VALUE)
        .hasMessageContaining("was never issued");
    assertOnlyRejected(before, "never_issued");
  }

  @Test
  @DisplayName("B22 write with the token of another resource")
  void writeWithAnotherResourcesToken() throws SQLException {
    Lease other = client.tryAcquire("bad-java/other", TTL).orElseThrow();
    try {
      FenceSnapshot before = snapshot();
      // other's token is newer than any token of KNOWN: never issued for KNOWN
      Throwable thrown = write(FencingToken.of(KNOWN, other.token().value()));
      assertThat(thrown)
          .isInstanceOf(FencingTokenNeverIssuedException.class)
          .hasMessageContaining("for resource \"" + KNOWN + "\" was never issued");
      assertOnlyRejected(before, "never_issued");
    } finally {
      other.close();
    }
  }

  @Test
  @DisplayName("B23 write with a token of a resource that does not exist")
  void writeWithUnknownResource() throws SQLException {
    FenceSnapshot before = snapshot();
    Throwable thrown = write(FencingToken.of("bad-java/never-created", 1));
    assertThat(thrown)
        .isInstanceOf(SQLException.class)
        .hasMessageContaining("unknown fencing resource \"bad-java/never-created\"");
    assertThat(((SQLException) thrown).getSQLState()).isEqualTo("ZF004");
    assertThat(snapshot()).isEqualTo(before);
  }

  @Test
  @DisplayName("B24 write with no token bound where one is required")
  void writeWithoutTokenWhereRequired() throws SQLException {
    FencedDataSource strict = FencedDataSource.builder(plain).requireToken(true).build();
    FenceSnapshot before = snapshot();
    Throwable thrown = catchThrowable(() -> insert(strict, 2));
    assertThat(thrown)
        .isInstanceOf(MissingFencingTokenException.class)
        .hasMessageContaining("a write needs a fencing token, and none is bound");
    assertThat(snapshot()).isEqualTo(before);
  }

  @Test
  @DisplayName("B25 write with a lease that was closed")
  void writeWithClosedLease() throws SQLException {
    Lease lease = client.tryAcquire("bad-java/closed-lease", TTL).orElseThrow();
    lease.close();
    FenceSnapshot before = snapshot();
    Throwable thrown;
    try (FencingScope scope = Fencing.bind(lease)) {
      thrown = catchThrowable(() -> insert(fenced, 3));
    }
    assertThat(thrown)
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("is lost; its token is no longer carried");
    // refused by the client itself, and recorded like every refusal (V7)
    assertOnlyRejected(before, "lease_lost");
  }

  @Test
  @DisplayName("B26 write with a lease another holder superseded")
  void writeWithSupersededLease() throws SQLException {
    String r = "bad-java/superseded-write";
    Lease old = client.tryAcquire(r, Duration.ofMillis(1)).orElseThrow();
    Lease current = takeOver(r);
    try {
      FenceSnapshot before = snapshot();
      Throwable viaLease;
      try (FencingScope scope = Fencing.bind(old)) {
        viaLease = catchThrowable(() -> insert(fenced, 4));
      }
      assertThat(viaLease).isInstanceOf(LeaseLostException.class);
      assertOnlyRejected(before, "lease_lost");

      // the bare token, without the lease that would tell the client: the database refuses it
      FenceSnapshot beforeToken = snapshot();
      Throwable viaToken = write(old.token());
      assertThat(viaToken)
          .isInstanceOf(StaleFencingTokenException.class)
          .hasMessageContaining("stale fencing token " + old.token().value());
      assertOnlyRejected(beforeToken, "stale_token");
    } finally {
      current.close();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Misuse of closed and lost leases
  // ---------------------------------------------------------------------------------------------

  @Test
  @DisplayName("B27 renew after close")
  void renewAfterClose() throws SQLException {
    Lease lease = client.tryAcquire("bad-java/renew-closed", TTL).orElseThrow();
    lease.close();
    FenceSnapshot before = snapshot();
    assertThat(catchThrowable(lease::renew))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("is lost: it was closed");
    assertThat(snapshot()).isEqualTo(before);
  }

  @Test
  @DisplayName("B28 close twice")
  void closeTwice() throws SQLException {
    Lease lease = client.tryAcquire("bad-java/close-twice", TTL).orElseThrow();
    lease.close();
    FenceSnapshot before = snapshot();
    lease.close();
    assertThat(lease.isLost()).isTrue();
    assertThat(snapshot()).isEqualTo(before);
  }

  @Test
  @DisplayName("B29 renew a lease another holder superseded")
  void renewSuperseded() throws SQLException {
    String r = "bad-java/superseded-renew";
    Lease old = client.tryAcquire(r, Duration.ofMillis(1)).orElseThrow();
    Lease current = takeOver(r);
    try {
      FenceSnapshot before = snapshot();
      assertThat(catchThrowable(old::renew))
          .isInstanceOf(StaleFencingTokenException.class)
          .hasMessageContaining("stale fencing token " + old.token().value());
      assertThat(old.isLost()).isTrue();
      assertThat(snapshot()).isEqualTo(before);
    } finally {
      current.close();
    }
  }

  @Test
  @DisplayName("B30 close a lease another holder superseded")
  void closeSuperseded() throws SQLException {
    String r = "bad-java/superseded-close";
    Lease old = client.tryAcquire(r, Duration.ofMillis(1)).orElseThrow();
    Lease current = takeOver(r);
    try {
      FenceSnapshot before = snapshot();
      old.close(); // never throws; the release is refused (stale) and only logged
      assertThat(snapshot()).isEqualTo(before);
      assertThat(FencingTestSupport.leaseValid(plain, r)).isTrue();
    } finally {
      current.close();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Concurrent misuse
  // ---------------------------------------------------------------------------------------------

  @Test
  @DisplayName("B31 two threads close the same lease at once")
  void concurrentClose() throws Exception {
    String r = "bad-java/concurrent-close";
    Lease lease = client.tryAcquire(r, TTL).orElseThrow();
    CyclicBarrier start = new CyclicBarrier(2);
    List<Future<?>> closes = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      closes.add(
          pool.submit(
              () -> {
                start.await();
                lease.close();
                return null;
              }));
    }
    for (Future<?> f : closes) {
      f.get(PATIENCE.toSeconds(), TimeUnit.SECONDS); // neither throws
    }
    assertThat(FencingTestSupport.leaseValid(plain, r)).isFalse();
    FenceSnapshot after = snapshot();
    lease.close();
    assertThat(snapshot()).isEqualTo(after);
    // released once: the next acquisition succeeds at once with a greater token
    Lease next = client.tryAcquire(r, TTL).orElseThrow();
    assertThat(next.token().value()).isGreaterThan(lease.token().value());
    next.close();
  }

  @Test
  @DisplayName("B32 two threads renew the same lease at once")
  void concurrentRenew() throws Exception {
    String r = "bad-java/concurrent-renew";
    Lease lease = client.tryAcquire(r, TTL).orElseThrow();
    try {
      CyclicBarrier start = new CyclicBarrier(2);
      List<Future<Instant>> renewals = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        renewals.add(
            pool.submit(
                () -> {
                  start.await();
                  return lease.renew();
                }));
      }
      Instant latest = Instant.MIN;
      for (Future<Instant> f : renewals) {
        Instant e = f.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        latest = e.isAfter(latest) ? e : latest;
      }
      Object inDatabase =
          FencingTestSupport.query(plain, "SELECT expires_at FROM fencing.status(?)", r);
      assertThat(((java.sql.Timestamp) inDatabase).toInstant()).isEqualTo(latest);
      assertThat(lease.isLost()).isFalse();
    } finally {
      lease.close();
    }
  }

  @Test
  @DisplayName("B33 a scope closed from another thread")
  void scopeClosedFromAnotherThread() throws Exception {
    FencingToken token = known.token();
    try (FencingScope scope = Fencing.bind(token)) {
      Throwable thrown =
          pool.submit(() -> catchThrowable(scope::close))
              .get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      assertThat(thrown)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("closed on another thread");
      assertThat(Fencing.current().token(KNOWN)).contains(token);
    }
    assertThat(Fencing.current().isEmpty()).isTrue();
  }

  @Test
  @DisplayName("B34 scopes closed out of order")
  void scopesClosedOutOfOrder() {
    FencingScope outer = Fencing.bind(known.token());
    FencingScope inner = Fencing.bind(FencingToken.of("bad-java/inner", 1));
    assertThat(catchThrowable(outer::close))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed while an inner scope is still open");
    assertThat(Fencing.current().token("bad-java/inner")).isPresent();
    inner.close();
    outer.close();
    assertThat(Fencing.current().isEmpty()).isTrue();
  }

  @Test
  @DisplayName("B35 the same resource bound twice with different tokens")
  void sameResourceBoundTwice() throws SQLException {
    FenceSnapshot before = snapshot();
    try (FencingScope scope = Fencing.bind(known)) {
      long otherValue = known.token().value() + 1000;
      assertThat(catchThrowable(() -> Fencing.bind(FencingToken.of(KNOWN, otherValue))))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining(
              "resource " + KNOWN + " is already bound to token " + known.token().value())
          .hasMessageContaining("cannot also bind token " + otherValue);
      assertThat(Fencing.current().token(KNOWN)).contains(known.token());
    }
    assertThat(
            catchThrowable(
                () -> Fencing.bind(FencingToken.of(KNOWN, 1), FencingToken.of(KNOWN, 2))))
        .isInstanceOf(IllegalStateException.class);
    assertThat(Fencing.current().isEmpty()).isTrue();
    assertThat(snapshot()).isEqualTo(before);
  }

  @Test
  @DisplayName("B37 a procedure that commits inside itself, in autocommit with a token bound")
  void procedureCommittingInsideItself() throws SQLException {
    FencingTestSupport.exec(
        plain,
        "CREATE OR REPLACE PROCEDURE bad_java_commit_inside() LANGUAGE plpgsql AS $$ BEGIN"
            + " INSERT INTO "
            + APP
            + " VALUES (37); COMMIT; INSERT INTO "
            + APP
            + " VALUES (38); END $$");
    FenceSnapshot before = snapshot();
    Throwable thrown;
    try (FencingScope scope = Fencing.bind(known);
        Connection c = fenced.getConnection();
        Statement s = c.createStatement()) {
      thrown = catchThrowable(() -> s.execute("CALL bad_java_commit_inside()"));
      assertThat(c.getAutoCommit()).isTrue();
    }
    assertThat(thrown)
        .isInstanceOf(SQLException.class)
        .hasMessageContaining("commits or rolls back inside itself cannot be fenced")
        .cause()
        .hasMessageContaining("invalid transaction termination");
    assertThat(((SQLException) thrown).getSQLState()).isEqualTo("2D000");
    assertThat(snapshot()).isEqualTo(before);
  }

  // ---------------------------------------------------------------------------------------------

  private static Arguments refused(
      String id, String label, ThrowingCallable call, Class<?> type, String message) {
    return arguments(id, label, call, type, message);
  }

  private static FenceSnapshot snapshot() throws SQLException {
    try (Connection c = plain.getConnection()) {
      return FenceSnapshot.take(c, APP);
    }
  }

  /** Asserts nothing changed but one rejection with {@code reason}. */
  private static void assertOnlyRejected(FenceSnapshot before, String reason) throws SQLException {
    FenceSnapshot after = snapshot();
    assertThat(after.fence()).isEqualTo(before.fence());
    assertThat(after.application()).isEqualTo(before.application());
    assertThat(after.rejectionsSince(before)).singleElement().asString().contains(reason);
  }

  /** Inserts into the application table through {@code ds} with {@code token} bound. */
  private static @Nullable Throwable write(FencingToken token) {
    try (FencingScope scope = Fencing.bind(token)) {
      return catchThrowable(() -> insert(fenced, 9));
    }
  }

  private static void insert(DataSource ds, int id) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("INSERT INTO " + APP + " VALUES (?)")) {
      ps.setInt(1, id);
      ps.executeUpdate();
    }
  }

  /** Another client acquires {@code resource} once the 1 ms lease on it has expired. */
  private Lease takeOver(String resource) {
    LeaseClient other = LeaseClient.builder(plain).holder("successor").build();
    clients.add(other);
    return await()
        .atMost(PATIENCE)
        .until(() -> other.tryAcquire(resource, TTL), Optional::isPresent)
        .orElseThrow();
  }
}
