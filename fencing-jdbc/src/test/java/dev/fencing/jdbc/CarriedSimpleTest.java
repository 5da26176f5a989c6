package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.MatrixFixture.rows;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.RoundTrips;
import dev.fencing.testing.TestDatabaseExtension;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.ds.PGSimpleDataSource;
import org.postgresql.jdbc.PreferQueryMode;

/**
 * A {@code PreparedStatement}'s execution in autocommit with {@code preferQueryMode=simple} carries
 * the check in one query message ({@link CarriedSimple}): one round trip, one implicit transaction
 * (the write sees the check's lock still held), a zombie refused with nothing written and the
 * refusal recorded. {@link CarriedCheckMatrixTest} shows the results identical to unfenced.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class CarriedSimpleTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    FencingTestSupport.createHiddenWrite(plain, "simple");
    exec(plain, "CREATE TABLE simple_texts (id serial PRIMARY KEY, t text NOT NULL)");
    exec(plain, "CREATE TABLE simple_streams (b bytea NOT NULL, t text NOT NULL)");
  }

  /** The write runs in the check's implicit transaction: it sees the check's share lock held. */
  @Test
  void theWriteAndItsCheckAreOneQueryMessageAndOneTransaction() throws Exception {
    String resource = "simple-local-" + System.nanoTime();
    exec(plain, "TRUNCATE simple_rows RESTART IDENTITY");
    try (LeaseClient client = LeaseClient.builder(plain).holder("simple").build()) {
      Lease lease = client.tryAcquire(resource, FencingTestSupport.LONG_TTL).orElseThrow();
      try (FencingScope scope = Fencing.bind(lease);
          Connection c = MatrixFixture.simple(db).getConnection();
          RoundTrips trips = new RoundTrips();
          PreparedStatement ps =
              c.prepareStatement(
                  "INSERT INTO simple_rows (v) SELECT count(*)::int + ? FROM pg_locks"
                      + " WHERE locktype = 'advisory' AND pid = pg_backend_pid()"
                      + " AND mode = 'ShareLock'")) {
        assertThat(c.getAutoCommit()).isTrue();
        for (int i = 0; i < 2; i++) {
          ps.setInt(1, 10 * i);
          trips.reset();
          assertThat(ps.executeUpdate()).isEqualTo(1);
          assertOneQueryMessage(trips, "check_one(E'" + resource + "'", "INSERT INTO simple_rows");
          assertThat(c.getAutoCommit()).isTrue();
        }
      }
    }
    assertThat(rowsOf()).as("the check's lock held by the write").isEqualTo("[(v=1)(v=11)]");
  }

  /**
   * A zombie's prepared writes and hidden-write read under every default isolation level: each
   * refused (ZF001) in one query message with its check, nothing written, every refusal recorded.
   */
  @ParameterizedTest
  @ValueSource(
      ints = {
        Connection.TRANSACTION_READ_COMMITTED,
        Connection.TRANSACTION_REPEATABLE_READ,
        Connection.TRANSACTION_SERIALIZABLE
      })
  void aZombieIsRefusedInOneQueryMessageAndNothingIsWritten(int isolation) throws Exception {
    String zombie = externalResource(plain, "simple-zombie-" + isolation, 6);
    exec(plain, "TRUNCATE simple_rows RESTART IDENTITY");
    Map<String, MatrixFixture.PreparedBody> writes = new LinkedHashMap<>();
    writes.put("executeUpdate", ps -> ps.executeUpdate());
    writes.put("execute", ps -> ps.execute());
    writes.put("executeLargeUpdate", ps -> ps.executeLargeUpdate());
    Map<String, String> sql = new LinkedHashMap<>();
    sql.put("executeUpdate", "INSERT INTO simple_rows (v) VALUES (?)");
    sql.put("execute", "INSERT INTO simple_rows (v) VALUES (?)");
    sql.put("executeLargeUpdate", "INSERT INTO simple_rows (v) VALUES (?)");
    writes.put("executeQuery RETURNING", ps -> rows(ps.executeQuery()));
    sql.put("executeQuery RETURNING", "INSERT INTO simple_rows (v) VALUES (?) RETURNING v");
    writes.put("executeQuery of a view that writes", ps -> rows(ps.executeQuery()));
    sql.put("executeQuery of a view that writes", "SELECT r + ? AS r FROM simple_hidden");
    try (FencingScope scope = Fencing.bind(FencingToken.of(zombie, 5));
        Connection c = MatrixFixture.simple(db).getConnection();
        RoundTrips trips = new RoundTrips()) {
      c.setTransactionIsolation(isolation);
      for (Map.Entry<String, MatrixFixture.PreparedBody> write : writes.entrySet()) {
        try (PreparedStatement ps = c.prepareStatement(sql.get(write.getKey()))) {
          ps.setInt(1, 5);
          trips.reset();
          MatrixFixture.assertRefusedAsStale(() -> write.getValue().run(ps));
          assertOneQueryMessage(trips, "fencing.check_one(E'" + zombie + "'", "simple_");
        }
        assertThat(c.getAutoCommit()).isTrue();
      }
    }
    assertThat(rowsOf()).as("nothing of the zombie written").isEqualTo("[]");
    assertThat(FencingTestSupport.rejections(plain, zombie, "stale_token"))
        .as("every refusal recorded")
        .isEqualTo(writes.size());
  }

  /**
   * The text behind the check is exactly the one pgjdbc sends unfenced, with quotes and backslashes
   * in a parameter, under standard_conforming_strings on and off: the same query message after
   * {@code <check>;}, the same row stored, the same warnings. A value with a {@code ;} is not
   * carried (the long way): the same row stored, and a zombie's refused with nothing written.
   */
  @ParameterizedTest
  @ValueSource(strings = {"on", "off"})
  void theTextBehindTheCheckIsTheDriversOwn(String scs) throws Exception {
    String resource = externalResource(plain, "simple-text-" + scs, 5);
    String zombie = externalResource(plain, "simple-text-zombie-" + scs, 6);
    String insert = "INSERT INTO simple_texts (t) VALUES (?)";
    for (String value : new String[] {"it's a \\ back\\slash \\' and ''", "semi;colon \\';"}) {
      exec(plain, "TRUNCATE simple_texts RESTART IDENTITY");
      String unfencedText;
      String unfencedWarnings;
      try (Connection c = MatrixFixture.simpleDriver(db).getConnection();
          RoundTrips trips = new RoundTrips();
          PreparedStatement ps = c.prepareStatement(insert)) {
        c.createStatement().execute("SET standard_conforming_strings = " + scs);
        ps.setString(1, value);
        trips.reset();
        assertThat(ps.executeUpdate()).isEqualTo(1);
        unfencedText = queryOf(trips.sent().get(0));
        unfencedWarnings = warnings(ps);
      }
      String fencedText;
      String fencedWarnings;
      try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 5));
          Connection c = MatrixFixture.simple(db).getConnection();
          RoundTrips trips = new RoundTrips();
          PreparedStatement ps = c.prepareStatement(insert)) {
        c.createStatement().execute("SET standard_conforming_strings = " + scs);
        ps.setString(1, value);
        trips.reset();
        assertThat(ps.executeUpdate()).isEqualTo(1);
        fencedText =
            trips.sent().stream()
                .filter(m -> m.contains("simple_texts"))
                .map(CarriedSimpleTest::queryOf)
                .findFirst()
                .orElseThrow();
        fencedWarnings = warnings(ps);
      }
      if (value.contains(";")) {
        assertThat(fencedText).as("not carried: the driver's own text").isEqualTo(unfencedText);
      } else {
        assertThat(fencedText)
            .as("the check, then the driver's own text")
            .startsWith("SELECT fencing.check_one(E'" + resource + "'")
            .endsWith(";" + unfencedText);
      }
      assertThat(fencedWarnings).as("warnings").isEqualTo(unfencedWarnings);
      try (Connection c = plain.getConnection();
          PreparedStatement ps = c.prepareStatement("SELECT t FROM simple_texts ORDER BY id")) {
        assertThat(rows(ps.executeQuery()))
            .as("stored as unfenced")
            .isEqualTo("[(t=" + value + ")(t=" + value + ")]");
      }
      try (FencingScope scope = Fencing.bind(FencingToken.of(zombie, 5));
          Connection c = MatrixFixture.simple(db).getConnection();
          PreparedStatement ps = c.prepareStatement(insert)) {
        c.createStatement().execute("SET standard_conforming_strings = " + scs);
        ps.setString(1, value);
        MatrixFixture.assertRefusedAsStale(ps::executeUpdate);
      }
      assertThat(FencingTestSupport.queryLong(plain, "SELECT count(*) FROM simple_texts"))
          .as("nothing of the zombie written")
          .isEqualTo(2);
    }
  }

  /**
   * With the connection's {@code defaultRowFetchSize} set and the statement's fetch size set back
   * to none, a write and a read that hides a write still carry the check in one query message: the
   * plain statement that sends them takes the statement's fetch size, not the connection's default.
   */
  @Test
  void aStatementWithoutFetchSizeCarriesUnderADefaultRowFetchSize() throws Exception {
    String resource = externalResource(plain, "simple-fetch", 5);
    exec(plain, "TRUNCATE simple_rows RESTART IDENTITY");
    PGSimpleDataSource driver = MatrixFixture.driver(db, PreferQueryMode.SIMPLE);
    driver.setDefaultRowFetchSize(10);
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 5));
        Connection c = FencedDataSource.wrap(driver).getConnection();
        RoundTrips trips = new RoundTrips()) {
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO simple_rows (v) VALUES (?)")) {
        assertThat(ps.getFetchSize()).as("the connection's default").isEqualTo(10);
        ps.setFetchSize(0);
        ps.setInt(1, 7);
        trips.reset();
        assertThat(ps.executeUpdate()).isEqualTo(1);
        assertOneQueryMessage(trips, "check_one(E'" + resource + "'", "INSERT INTO simple_rows");
      }
      try (PreparedStatement ps = c.prepareStatement("SELECT r + ? AS r FROM simple_hidden")) {
        ps.setFetchSize(0);
        ps.setInt(1, 1);
        trips.reset();
        assertThat(rows(ps.executeQuery())).isEqualTo("[(r=7)]");
        assertOneQueryMessage(trips, "check_one(E'" + resource + "'", "simple_hidden");
      }
    }
    assertThat(rowsOf()).isEqualTo("[(v=7)(v=3)]");
  }

  /**
   * CarriedSimple itself refuses parameters that are not replayable (a stream): rendering reads the
   * stream, so a fallback after it (here a {@code ;} in another parameter) would have the driver
   * send the emptied stream. Called on the carrier directly: {@link CarriedCheck#canCarry} refuses
   * such executions before they reach it.
   */
  @Test
  void aStreamParameterIsNotRenderedSoTheFallbackSendsIt() throws Exception {
    exec(plain, "TRUNCATE simple_streams");
    String insert = "INSERT INTO simple_streams (b, t) VALUES (?, ?)";
    byte[] bytes = "streamed".getBytes(StandardCharsets.UTF_8);
    try (Connection c = MatrixFixture.simpleDriver(db).getConnection();
        PreparedStatement ps = c.prepareStatement(insert)) {
      CarriedCheck carried = CarriedCheck.of(c, ps, PreparedStatement.class, new Object[] {insert});
      assertThat(carried).isNotNull();
      InputStream in = new ByteArrayInputStream(bytes);
      ps.setBinaryStream(1, in, bytes.length);
      carried.called(
          PreparedStatement.class.getMethod(
              "setBinaryStream", int.class, InputStream.class, int.class),
          new Object[] {1, in, bytes.length});
      ps.setString(2, "semi;colon");
      carried.called(
          PreparedStatement.class.getMethod("setString", int.class, String.class),
          new Object[] {2, "semi;colon"});
      CheckArguments check =
          new CheckArguments(c, "SELECT fencing.check_one(?, ?)", "fencing", List.of());
      assertThat(carried.run("executeUpdate", check)).as("not carried").isNull();
      assertThat(ps.executeUpdate()).isEqualTo(1);
    }
    try (Connection c = plain.getConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT convert_from(b, 'UTF8') AS b, t FROM simple_streams")) {
      assertThat(rows(ps.executeQuery()))
          .as("the stream sent whole by the driver")
          .isEqualTo("[(b=streamed, t=semi;colon)]");
    }
  }

  /** The text of a logged query message ({@code FE=> SimpleQuery(query="...")}). */
  private static String queryOf(String message) {
    String start = "SimpleQuery(query=\"";
    int from = message.indexOf(start);
    assertThat(from).as("a simple query: %s", message).isNotNegative();
    return message.substring(from + start.length(), message.lastIndexOf("\")"));
  }

  private static String warnings(PreparedStatement ps) throws SQLException {
    StringBuilder b = new StringBuilder();
    for (java.sql.SQLWarning w = ps.getWarnings(); w != null; w = w.getNextWarning()) {
      b.append(w.getSQLState()).append(' ').append(w.getMessage()).append('|');
    }
    return b.toString();
  }

  /**
   * One round trip, whose one query message holds the check and the statement (and a refusal's
   * recording, a round trip of its own after it).
   */
  private static void assertOneQueryMessage(RoundTrips trips, String check, String statement) {
    List<String> sent = trips.sent();
    long recordings = sent.stream().filter(m -> m.contains(".record_rejection(")).count();
    assertThat(trips.count()).as("one round trip: %s", sent).isEqualTo(1 + recordings);
    assertThat(sent)
        .as("one query message with the check and the statement: %s", sent)
        .filteredOn(m -> !m.contains(".record_rejection("))
        .singleElement()
        .satisfies(
            m -> assertThat(m).contains("FE=> SimpleQuery").contains(check).contains(statement));
  }

  private static String rowsOf() throws SQLException {
    try (Connection c = plain.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT v FROM simple_rows ORDER BY id")) {
      return rows(ps.executeQuery());
    }
  }
}
