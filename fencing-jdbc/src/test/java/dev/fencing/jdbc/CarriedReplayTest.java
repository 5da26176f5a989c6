package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.testing.RoundTrips;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The carried check replays the parameters the caller set, whenever they were set: {@link
 * CarriedCheck} sets up its combined statement and its recording lazily (issue 13, client CPU), so
 * these pin what must not depend on when that happens. Each execution that carries takes one round
 * trip (the check and the statement before one Sync) and writes the values set; one that cannot
 * carry behaves as the driver.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class CarriedReplayTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final AtomicInteger RESOURCES = new AtomicInteger();
  private static final String INSERT = "INSERT INTO replay (v, at) VALUES (?, ?)";
  private static final Timestamp AT = Timestamp.valueOf("2026-01-02 03:04:05.678");
  private static DataSource plain;
  private String resource = "";

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    exec(plain, "CREATE TABLE replay (id serial PRIMARY KEY, v text NOT NULL, at timestamp)");
  }

  @BeforeEach
  void fresh() throws SQLException {
    exec(plain, "TRUNCATE replay");
    resource = externalResource(plain, "replay-" + RESOURCES.incrementAndGet(), 5);
  }

  @Test
  void parametersSetBeforeTheTokenWasBoundAreCarriedWithTheirValues() throws SQLException {
    try (Connection c = FencedDataSource.wrap(plain).getConnection();
        RoundTrips trips = new RoundTrips()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement(INSERT)) {
        Timestamp at = (Timestamp) AT.clone();
        ps.setString(1, "set unbound");
        ps.setTimestamp(2, at);
        at.setTime(0); // changed after its setter: the driver sent what was set
        try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 5))) {
          trips.reset();
          assertThat(ps.executeUpdate()).isOne();
          assertThat(trips.count()).as("carried: %s", trips.sent()).isOne();
          c.commit();
        }
      }
    }
    assertThat(rows()).containsExactly("set unbound " + AT);
    assertThat(maxSeen()).isEqualTo(5);
  }

  @Test
  void aReExecutionAfterARefusedCarryCarriesTheSameValues() throws SQLException {
    try (Connection c = FencedDataSource.wrap(plain).getConnection();
        RoundTrips trips = new RoundTrips()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement(INSERT)) {
        ps.setString(1, "again");
        ps.setTimestamp(2, AT);
        try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 4))) {
          trips.reset();
          assertThatThrownBy(ps::executeUpdate).isInstanceOf(StaleFencingTokenException.class);
          // as before the lazy carrier (b6f2da9): the check carried with the insert, the
          // ROLLBACK, the refusal recorded in a transaction of its own and its COMMIT
          assertThat(trips.count()).as("refused: %s", trips.sent()).isEqualTo(4);
        }
        c.rollback(); // the refused transaction stays failed until the application rolls it back
        try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 6))) {
          trips.reset();
          assertThat(ps.executeUpdate()).isOne();
          assertThat(trips.count()).as("carried again: %s", trips.sent()).isOne();
          c.commit();
        }
      }
    }
    assertThat(rows()).containsExactly("again " + AT);
    assertThat(maxSeen()).isEqualTo(6);
  }

  @Test
  void aWriteAfterASavepointRollbackUndidTheCheckCarriesItAgain() throws SQLException {
    try (Connection c = FencedDataSource.wrap(plain).getConnection();
        FencingScope scope = Fencing.bind(FencingToken.of(resource, 5));
        RoundTrips trips = new RoundTrips()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement(INSERT)) {
        ps.setString(1, "kept");
        ps.setTimestamp(2, AT);
        Savepoint before = c.setSavepoint();
        trips.reset();
        assertThat(ps.executeUpdate()).isOne();
        assertThat(trips.count()).as("carried: %s", trips.sent()).isOne();
        c.rollback(before); // the check's lock and marker with it
        trips.reset();
        assertThat(ps.executeUpdate()).isOne();
        assertThat(trips.count()).as("carried again: %s", trips.sent()).isOne();
        assertThat(trips.sent()).anyMatch(m -> m.contains("Bind") && m.contains("kept"));
        c.commit();
      }
    }
    assertThat(rows()).containsExactly("kept " + AT);
  }

  @Test
  void clearParametersLeavesNothingToReplay() throws SQLException {
    List<String> unfenced = clearedThenOneSet(plain);
    exec(plain, "TRUNCATE replay");
    List<String> fenced;
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 5))) {
      fenced = clearedThenOneSet(FencedDataSource.wrap(plain));
    }
    assertThat(fenced).isEqualTo(unfenced);
    assertThat(unfenced.get(0)).as("the driver's own error").contains("parameter 2");
    assertThat(rows()).containsExactly("second " + AT);
  }

  /**
   * Parameters set, cleared, one set again: the driver's error for the one unset; then both set.
   */
  private static List<String> clearedThenOneSet(DataSource ds) throws SQLException {
    List<String> seen = new ArrayList<>();
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement(INSERT)) {
        ps.setString(1, "first");
        ps.setTimestamp(2, AT);
        ps.clearParameters();
        ps.setString(1, "only");
        try {
          seen.add("updated " + ps.executeUpdate());
        } catch (SQLException e) {
          seen.add(e.getSQLState() + " " + e.getMessage());
          c.rollback();
        }
        ps.clearParameters();
        ps.setString(1, "second");
        ps.setTimestamp(2, AT);
        seen.add("updated " + ps.executeUpdate());
        c.commit();
      }
    }
    return seen;
  }

  @Test
  void aBatchAfterSingleExecutionsCarriesTheCheckWithItsOwnEntries() throws SQLException {
    try (Connection c = FencedDataSource.wrap(plain).getConnection();
        FencingScope scope = Fencing.bind(FencingToken.of(resource, 5));
        RoundTrips trips = new RoundTrips()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement(INSERT)) {
        ps.setString(1, "single");
        ps.setTimestamp(2, AT);
        assertThat(ps.executeUpdate()).isOne();
        c.commit();
        ps.setString(1, "b1");
        ps.addBatch();
        ps.setString(1, "b2");
        ps.addBatch();
        trips.reset();
        assertThat(ps.executeBatch()).containsExactly(1, 1);
        assertThat(trips.count()).as("the batch carried the check: %s", trips.sent()).isOne();
        // and a single execution after the batch, in a new transaction: carried, as set last
        c.commit();
        ps.setString(1, "after");
        ps.setTimestamp(2, AT);
        trips.reset();
        assertThat(ps.executeUpdate()).isOne();
        assertThat(trips.count()).as("carried: %s", trips.sent()).isOne();
        c.commit();
      }
    }
    assertThat(rows()).containsExactly("single " + AT, "b1 " + AT, "b2 " + AT, "after " + AT);
  }

  private static List<String> rows() throws SQLException {
    List<String> rows = new ArrayList<>();
    try (Connection c = plain.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT v, at FROM replay ORDER BY id")) {
      while (rs.next()) {
        rows.add(rs.getString(1) + " " + rs.getTimestamp(2));
      }
    }
    return rows;
  }

  private long maxSeen() throws SQLException {
    return FencingTestSupport.maxSeen(plain, resource);
  }
}
