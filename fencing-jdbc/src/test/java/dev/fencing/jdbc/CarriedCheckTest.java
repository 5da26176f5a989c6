package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.FencingTestSupport.queryLong;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.testing.RoundTrips;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.ds.PGSimpleDataSource;
import org.postgresql.jdbc.PreferQueryMode;

/**
 * Issue 13, no extra round trip: the check of a transaction's first write travels with the write
 * ({@link CarriedCheck}). A fenced transaction takes as many round trips as the unfenced one; a
 * zombie is refused by the check that travels with its write, which the server then skips.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class CarriedCheckTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final AtomicInteger RESOURCES = new AtomicInteger();
  private static DataSource plain;

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    exec(plain, "CREATE TABLE acct (id int PRIMARY KEY, v int NOT NULL)");
    exec(plain, "INSERT INTO acct SELECT g, 0 FROM generate_series(1, 10) g");
    exec(plain, "CREATE TABLE hist (id serial PRIMARY KEY, aid int NOT NULL, delta int NOT NULL)");
  }

  private static String resource(long maxSeen) throws SQLException {
    return externalResource(plain, "carry-" + RESOURCES.incrementAndGet(), maxSeen);
  }

  /** One transaction on {@code c}: {@code updates} single-row UPDATEs, a SELECT, an INSERT. */
  private static void transaction(Connection c, int updates) throws SQLException {
    for (int i = 1; i <= updates; i++) {
      try (PreparedStatement ps = c.prepareStatement("UPDATE acct SET v = v + ? WHERE id = ?")) {
        ps.setInt(1, 1);
        ps.setInt(2, i);
        assertThat(ps.executeUpdate()).isEqualTo(1);
      }
    }
    if (updates > 1) {
      try (PreparedStatement ps = c.prepareStatement("SELECT v FROM acct WHERE id = ?")) {
        ps.setInt(1, 1);
        try (ResultSet rs = ps.executeQuery()) {
          assertThat(rs.next()).isTrue();
        }
      }
      try (PreparedStatement ps =
          c.prepareStatement("INSERT INTO hist (aid, delta) VALUES (?, ?)")) {
        ps.setInt(1, 1);
        ps.setInt(2, 1);
        ps.executeUpdate();
      }
    }
    if (!c.getAutoCommit()) {
      c.commit();
    }
  }

  /** Round trips of two transactions back to back on one connection of {@code ds}. */
  private static List<Integer> roundTrips(DataSource ds, boolean autoCommit, int updates)
      throws SQLException {
    try (Connection c = ds.getConnection();
        RoundTrips trips = new RoundTrips()) {
      c.setAutoCommit(autoCommit);
      trips.reset();
      transaction(c, updates);
      int first = trips.count();
      trips.reset();
      transaction(c, updates);
      return List.of(first, trips.count());
    }
  }

  @Test
  void aFencedTransactionTakesAsManyRoundTripsAsTheUnfencedOne() throws SQLException {
    String resource = resource(5);
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    for (int updates : new int[] {1, 3}) {
      List<Integer> unfenced = roundTrips(plain, false, updates);
      List<Integer> seen;
      try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 5))) {
        seen = roundTrips(fenced, false, updates);
      }
      assertThat(seen)
          .as("round trips of two fenced transactions of %s UPDATE(s)", updates)
          .isEqualTo(unfenced)
          .containsExactly(updates == 1 ? 2 : 6, updates == 1 ? 2 : 6);
    }
  }

  @Test
  void anAutocommitWriteTakesOneRoundTripAsUnfenced() throws SQLException {
    String resource = resource(5);
    List<Integer> unfenced = roundTrips(plain, true, 1);
    List<Integer> seen;
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 5))) {
      seen = roundTrips(FencedDataSource.wrap(plain), true, 1);
    }
    assertThat(unfenced).containsExactly(1, 1);
    assertThat(seen).as("the check and the write, one implicit transaction").isEqualTo(unfenced);
  }

  @Test
  void withSimpleQueriesAnAutocommitWriteTakesOneRoundTripAsUnfenced() throws SQLException {
    String resource = resource(5);
    PGSimpleDataSource simple = MatrixFixture.driver(db, PreferQueryMode.SIMPLE);
    List<Integer> unfenced = roundTrips(simple, true, 1);
    List<Integer> seen;
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 5))) {
      seen = roundTrips(FencedDataSource.wrap(simple), true, 1);
    }
    // the check and the write rendered as pgjdbc sends them, one query message (CarriedSimple)
    assertThat(unfenced).containsExactly(1, 1);
    assertThat(seen).as("the check and the write, one implicit transaction").isEqualTo(unfenced);
  }

  /**
   * In autocommit the carried check and the write are one implicit transaction (one Sync): the
   * write sees the check's advisory share lock of the local resource still held, and a refusal
   * leaves nothing written.
   */
  @Test
  void inAutocommitTheCarriedCheckAndTheWriteAreOneTransaction() throws Exception {
    String resource = "carry-local-" + RESOURCES.incrementAndGet();
    int aid = RESOURCES.get() * 100;
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    try (LeaseClient client = LeaseClient.builder(plain).holder("carry").build()) {
      Lease lease = client.tryAcquire(resource, FencingTestSupport.LONG_TTL).orElseThrow();
      try (FencingScope scope = Fencing.bind(lease);
          Connection c = fenced.getConnection();
          RoundTrips trips = new RoundTrips();
          PreparedStatement ps =
              c.prepareStatement(
                  "INSERT INTO hist (aid, delta) SELECT ?, count(*)::int FROM pg_locks"
                      + " WHERE locktype = 'advisory' AND pid = pg_backend_pid()"
                      + " AND mode = 'ShareLock'")) {
        assertThat(c.getAutoCommit()).isTrue();
        ps.setInt(1, aid);
        trips.reset();
        assertThat(ps.executeUpdate()).isEqualTo(1);
        assertThat(trips.sent().stream().filter(" FE=> Sync"::equals).count())
            .as("one Sync: %s", trips.sent())
            .isEqualTo(1);
        assertThat(trips.count()).isEqualTo(1);
      }
    }
    assertThat(queryLong(plain, "SELECT delta FROM hist WHERE aid = ?", aid))
        .as("the check's lock, seen by the write: one transaction")
        .isEqualTo(1);
    assertThat(
            queryLong(
                plain,
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database ="
                    + " (SELECT oid FROM pg_database WHERE datname = current_database())"))
        .as("released at the implicit commit")
        .isZero();
  }

  @ParameterizedTest
  @EnumSource(
      value = PreferQueryMode.class,
      names = {"EXTENDED", "EXTENDED_FOR_PREPARED", "SIMPLE"})
  void aZombieInAutocommitIsRefusedByTheCarriedCheck(PreferQueryMode mode) throws Exception {
    String resource = resource(6);
    int aid = RESOURCES.get() * 100;
    PGSimpleDataSource driver = MatrixFixture.driver(db, mode);
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 5));
        Connection zombie = FencedDataSource.wrap(driver).getConnection();
        RoundTrips trips = new RoundTrips();
        PreparedStatement ps =
            zombie.prepareStatement("INSERT INTO hist (aid, delta) VALUES (?, -5)")) {
      ps.setInt(1, aid);
      trips.reset();
      MatrixFixture.assertRefusedAsStale(ps::executeUpdate);
      assertThat(trips.sent().stream().anyMatch(m -> m.contains("INSERT INTO hist")))
          .as("the write was sent with its check: %s", trips.sent())
          .isTrue();
      assertThat(zombie.getAutoCommit()).isTrue();
    }
    MatrixFixture.assertNothingWrittenAndRefusalRecorded(
        plain, resource, "SELECT count(*) FROM hist WHERE aid = ?", aid);
  }

  /**
   * The zombie's transaction takes its snapshot, the holder's newer token is accepted and
   * committed, then the zombie's first write carries the check: refused (ZF001), the write skipped
   * by the server although it was sent, the refusal recorded.
   */
  @ParameterizedTest
  @ValueSource(
      ints = {
        Connection.TRANSACTION_READ_COMMITTED,
        Connection.TRANSACTION_REPEATABLE_READ,
        Connection.TRANSACTION_SERIALIZABLE
      })
  void aZombieIsRefusedByTheCheckItsWriteCarries(int isolation) throws Exception {
    String resource = resource(5);
    int aid = RESOURCES.get() * 100;
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    long before = queryLong(plain, "SELECT count(*) FROM hist");
    try (Connection zombie = fenced.getConnection();
        RoundTrips trips = new RoundTrips()) {
      zombie.setAutoCommit(false);
      zombie.setTransactionIsolation(isolation);
      try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 5))) {
        assertThat(FencingTestSupport.query(zombie, "SELECT count(*) FROM hist"))
            .as("the zombie's snapshot")
            .isEqualTo(before);
      }
      // the holder, with the newer token: accepted (a carried check too) and committed
      try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 6));
          Connection holder = fenced.getConnection()) {
        holder.setAutoCommit(false);
        try (PreparedStatement ps =
            holder.prepareStatement("INSERT INTO hist (aid, delta) VALUES (?, ?)")) {
          ps.setInt(1, aid + 6);
          ps.setInt(2, 6);
          assertThat(ps.executeUpdate()).isEqualTo(1);
        }
        holder.commit();
      }
      trips.reset();
      try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 5));
          PreparedStatement ps =
              zombie.prepareStatement("INSERT INTO hist (aid, delta) VALUES (?, -5)")) {
        ps.setInt(1, aid + 5);
        assertThatThrownBy(ps::executeUpdate)
            .isInstanceOf(StaleFencingTokenException.class)
            .satisfies(
                e -> {
                  StaleFencingTokenException stale = (StaleFencingTokenException) e;
                  assertThat(stale.getSQLState()).isEqualTo("ZF001");
                  assertThat(stale.resource()).isEqualTo(resource);
                  assertThat(stale.presentedToken()).isEqualTo(5L);
                });
      }
      List<String> sent = trips.sent();
      int write = indexOf(sent, "INSERT INTO hist (aid, delta) VALUES ($1, -5)");
      assertThat(write).as("the write was sent with the check: %s", sent).isPositive();
      assertThat(indexOf(sent.subList(0, write), "check_one("))
          .as("the check before it, in the same round trip: %s", sent)
          .isNotNegative();
      assertThat(sent.subList(indexOf(sent, "check_one("), write)).doesNotContain(" FE=> Sync");
      assertThat(zombie.getAutoCommit()).isFalse();
      // the refused transaction stays failed (25P02, the refusal as cause) until rolled back
      assertThatThrownBy(zombie::commit)
          .isInstanceOfSatisfying(
              SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("25P02"))
          .hasCauseInstanceOf(StaleFencingTokenException.class);
      zombie.rollback();
    }
    assertThat(queryLong(plain, "SELECT count(*) FROM hist WHERE aid = ?", aid + 5))
        .as("nothing of the zombie written")
        .isZero();
    assertThat(queryLong(plain, "SELECT count(*) FROM hist WHERE aid = ?", aid + 6))
        .as("the holder's write")
        .isEqualTo(1);
    assertThat(FencingTestSupport.rejections(plain, resource, "stale_token"))
        .as("the refusal recorded")
        .isEqualTo(1);
  }

  /**
   * A carried check holds the fence until the commit: the holder's newer token, checked at its
   * first write, waits until the zombie's transaction, accepted first, ends.
   */
  @ParameterizedTest
  @ValueSource(
      ints = {
        Connection.TRANSACTION_READ_COMMITTED,
        Connection.TRANSACTION_REPEATABLE_READ,
        Connection.TRANSACTION_SERIALIZABLE
      })
  void aCarriedCheckHoldsTheFenceUntilTheCommit(int isolation) throws Exception {
    String resource = resource(5);
    int aid = RESOURCES.get() * 100;
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    CompletableFuture<Void> holderDone;
    try (Connection zombie = fenced.getConnection();
        FencingScope scope = Fencing.bind(FencingToken.of(resource, 5))) {
      zombie.setAutoCommit(false);
      zombie.setTransactionIsolation(isolation);
      try (RoundTrips trips = new RoundTrips();
          PreparedStatement ps =
              zombie.prepareStatement("INSERT INTO hist (aid, delta) VALUES (?, 50)")) {
        ps.setInt(1, aid + 5);
        assertThat(ps.executeUpdate()).isEqualTo(1);
        assertThat(trips.count()).as("the check carried").isEqualTo(1);
      }
      holderDone =
          CompletableFuture.runAsync(
              () -> {
                try (FencingScope holderScope = Fencing.bind(FencingToken.of(resource, 6));
                    Connection holder = fenced.getConnection()) {
                  holder.setAutoCommit(false);
                  holder.setTransactionIsolation(isolation);
                  try (PreparedStatement ps =
                      holder.prepareStatement("INSERT INTO hist (aid, delta) VALUES (?, 60)")) {
                    ps.setInt(1, aid + 6);
                    ps.executeUpdate(); // waits until the zombie's transaction ends
                  }
                  holder.commit();
                } catch (SQLException e) {
                  throw new IllegalStateException(e);
                }
              });
      FencingTestSupport.awaitWaitingOnLock(plain, "check_one", 1);
      assertThat(holderDone).isNotDone();
      zombie.commit();
    }
    holderDone.get(FencingTestSupport.PATIENCE.toSeconds(), TimeUnit.SECONDS);
    assertThat(queryLong(plain, "SELECT count(*) FROM hist WHERE aid = ?", aid + 5))
        .as("the zombie, accepted before the handover, committed")
        .isEqualTo(1);
    assertThat(queryLong(plain, "SELECT count(*) FROM hist WHERE aid = ?", aid + 6))
        .as("then the holder")
        .isEqualTo(1);
    assertThat(FencingTestSupport.maxSeen(plain, resource)).isEqualTo(6);
  }

  static Stream<Arguments> isolationsAndLiteralCarriers() {
    List<Arguments> all = new ArrayList<>();
    for (int isolation :
        new int[] {
          Connection.TRANSACTION_READ_COMMITTED,
          Connection.TRANSACTION_REPEATABLE_READ,
          Connection.TRANSACTION_SERIALIZABLE
        }) {
      for (String form : new String[] {"statement", "statement batch", "prepared batch"}) {
        all.add(Arguments.of(isolation, form));
      }
    }
    return all.stream();
  }

  /**
   * As {@link #aZombieIsRefusedByTheCheckItsWriteCarries} for the executions that carry the check
   * with literal arguments: a plain statement, a statement's batch, a prepared statement's batch.
   * The zombie's snapshot is taken, the holder's newer token accepted and committed, then the
   * zombie's write carries the check: refused (ZF001), nothing of it written, the refusal recorded.
   */
  @ParameterizedTest(name = "isolation={0} {1}")
  @MethodSource("isolationsAndLiteralCarriers")
  void aZombieIsRefusedByTheLiteralCheckItsWriteCarries(int isolation, String form)
      throws Exception {
    String resource = resource(5);
    int aid = RESOURCES.get() * 100;
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    long before = queryLong(plain, "SELECT count(*) FROM hist");
    try (Connection zombie = fenced.getConnection();
        RoundTrips trips = new RoundTrips()) {
      zombie.setAutoCommit(false);
      zombie.setTransactionIsolation(isolation);
      try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 5))) {
        assertThat(FencingTestSupport.query(zombie, "SELECT count(*) FROM hist"))
            .as("the zombie's snapshot")
            .isEqualTo(before);
      }
      try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 6));
          Connection holder = fenced.getConnection();
          Statement s = holder.createStatement()) {
        holder.setAutoCommit(false);
        assertThat(s.executeUpdate("INSERT INTO hist (aid, delta) VALUES (" + (aid + 6) + ", 6)"))
            .isEqualTo(1);
        holder.commit();
      }
      trips.reset();
      String write = "INSERT INTO hist (aid, delta) VALUES (" + (aid + 5) + ", -5)";
      try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 5))) {
        assertThatThrownBy(
                () -> {
                  switch (form) {
                    case "statement" -> {
                      try (Statement s = zombie.createStatement()) {
                        s.executeUpdate(write);
                      }
                    }
                    case "statement batch" -> {
                      try (Statement s = zombie.createStatement()) {
                        s.addBatch(write);
                        s.addBatch(write);
                        s.executeBatch();
                      }
                    }
                    default -> {
                      try (PreparedStatement ps =
                          zombie.prepareStatement("INSERT INTO hist (aid, delta) VALUES (?, -5)")) {
                        ps.setInt(1, aid + 5);
                        ps.addBatch();
                        ps.addBatch();
                        ps.executeBatch();
                      }
                    }
                  }
                })
            .isInstanceOf(StaleFencingTokenException.class)
            .satisfies(
                e -> {
                  StaleFencingTokenException stale = (StaleFencingTokenException) e;
                  assertThat(stale.getSQLState()).isEqualTo("ZF001");
                  assertThat(stale.resource()).isEqualTo(resource);
                  assertThat(stale.presentedToken()).isEqualTo(5L);
                });
      }
      List<String> sent = trips.sent();
      int check = indexOf(sent, "check_one(E'" + resource + "'");
      int written = indexOf(sent, "INSERT INTO hist (aid, delta) VALUES (");
      assertThat(check).as("the literal check sent: %s", sent).isNotNegative();
      assertThat(written).as("the write sent with it: %s", sent).isGreaterThan(check);
      assertThat(sent.subList(check, written)).doesNotContain(" FE=> Sync");
      // the refused transaction stays failed (25P02, the refusal as cause) until rolled back
      assertThatThrownBy(zombie::commit)
          .isInstanceOfSatisfying(
              SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("25P02"))
          .hasCauseInstanceOf(StaleFencingTokenException.class);
      zombie.rollback();
    }
    assertThat(queryLong(plain, "SELECT count(*) FROM hist WHERE aid = ?", aid + 5))
        .as("nothing of the zombie written")
        .isZero();
    assertThat(queryLong(plain, "SELECT count(*) FROM hist WHERE aid = ?", aid + 6))
        .as("the holder's write")
        .isEqualTo(1);
    assertThat(FencingTestSupport.rejections(plain, resource, "stale_token"))
        .as("the refusal recorded")
        .isEqualTo(1);
  }

  private static int indexOf(List<String> sent, String fragment) {
    for (int i = 0; i < sent.size(); i++) {
      if (sent.get(i).contains(fragment)) {
        return i;
      }
    }
    return -1;
  }
}
