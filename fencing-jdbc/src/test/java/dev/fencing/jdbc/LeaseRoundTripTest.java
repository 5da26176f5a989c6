package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.RoundTrips;
import dev.fencing.testing.TestDatabaseExtension;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 14: a lease operation is one round trip, and once the connection has prepared its
 * statements (pgjdbc's prepareThreshold), sends no Parse: nothing is parsed or planned again. Round
 * trips are counted as {@link RoundTrips} does (each read from the server after sending, this
 * thread only); the lease client's connection is opened before counting.
 */
class LeaseRoundTripTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  /** More than pgjdbc's default prepareThreshold (5): the statements are named ones after it. */
  private static final int WARM_UP = 6;

  @BeforeAll
  static void migrate() {
    FencingTestSupport.migrate(db);
  }

  @Test
  void acquireIsOneRoundTripAndReleaseIsOne() throws SQLException {
    for (boolean autoCommit : new boolean[] {true, false}) {
      try (Connection c = db.connect();
          RoundTrips trips = new RoundTrips()) {
        c.setAutoCommit(autoCommit);
        LeaseClient client =
            LeaseClient.builder(new OneConnection(c)).holder("round-trips").build();
        try {
          String resource = "round-trip-" + autoCommit;
          trips.reset();
          Lease lease = client.tryAcquire(resource, Duration.ofSeconds(30)).orElseThrow();
          assertThat(trips.count()).as("round trips of an acquisition: %s", trips.sent()).isOne();

          trips.reset();
          lease.close();
          assertThat(trips.count()).as("round trips of a release: %s", trips.sent()).isOne();

          for (int i = 0; i < WARM_UP; i++) {
            client.tryAcquire(resource, Duration.ofSeconds(30)).orElseThrow().close();
          }
          trips.reset();
          lease = client.tryAcquire(resource, Duration.ofSeconds(30)).orElseThrow();
          assertThat(trips.count())
              .as("round trips of a later acquisition: %s", trips.sent())
              .isOne();
          assertThat(trips.sent())
              .as("a later acquisition parses nothing")
              .noneMatch(m -> m.contains("FE=> Parse"));
          trips.reset();
          lease.close();
          assertThat(trips.count()).as("round trips of a later release: %s", trips.sent()).isOne();
          assertThat(trips.sent())
              .as("a later release parses nothing")
              .noneMatch(m -> m.contains("FE=> Parse"));
          assertThat(c.getAutoCommit())
              .as("the connection's autocommit, given back")
              .isEqualTo(autoCommit);
        } finally {
          client.close();
        }
        assertThat(
                FencingTestSupport.query(
                    c, "SELECT pg_catalog.current_setting('transaction_isolation')"))
            .as("the session's isolation is untouched")
            .isEqualTo("read committed");
      }
    }
  }

  /** A DataSource that lends one open connection, whose close() is a no-op. */
  static final class OneConnection implements DataSource {
    private final Connection c;

    OneConnection(Connection c) {
      this.c = c;
    }

    @Override
    public Connection getConnection() {
      return (Connection)
          Proxy.newProxyInstance(
              Connection.class.getClassLoader(),
              new Class<?>[] {Connection.class},
              (proxy, method, args) -> {
                if (method.getName().equals("close")) {
                  return null;
                }
                try {
                  return method.invoke(c, args);
                } catch (InvocationTargetException e) {
                  throw e.getCause();
                }
              });
    }

    @Override
    public Connection getConnection(String user, String password) {
      return getConnection();
    }

    @Override
    public PrintWriter getLogWriter() {
      return new PrintWriter(System.err);
    }

    @Override
    public void setLogWriter(PrintWriter out) {}

    @Override
    public void setLoginTimeout(int seconds) {}

    @Override
    public int getLoginTimeout() {
      return 0;
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
      throw new SQLFeatureNotSupportedException();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
      throw new SQLException("not a wrapper");
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
      return false;
    }
  }
}
