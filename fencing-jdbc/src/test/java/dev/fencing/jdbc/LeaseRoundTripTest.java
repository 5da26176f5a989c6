package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 14: a lease operation is one round trip. pgjdbc ends every round trip with a Sync message
 * (and logs it at FINEST); the lease client's connection is opened before counting, so only the
 * operations' own messages count.
 */
class LeaseRoundTripTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final Logger PGJDBC = Logger.getLogger("org.postgresql.core.v3.QueryExecutorImpl");

  private final AtomicInteger syncs = new AtomicInteger();
  private final Handler counter =
      new Handler() {
        @Override
        public void publish(LogRecord record) {
          if (" FE=> Sync".equals(record.getMessage())) {
            syncs.incrementAndGet();
          }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
      };
  private Level previousLevel = Level.INFO;
  private boolean previousParents = true;

  @BeforeAll
  static void migrate() {
    FencingTestSupport.migrate(db);
  }

  @BeforeEach
  void countSyncs() {
    previousLevel = PGJDBC.getLevel();
    previousParents = PGJDBC.getUseParentHandlers();
    PGJDBC.setUseParentHandlers(false); // quiet: the records only go to the counter
    PGJDBC.setLevel(Level.FINEST);
    PGJDBC.addHandler(counter);
  }

  @AfterEach
  void stopCounting() {
    PGJDBC.removeHandler(counter);
    PGJDBC.setLevel(previousLevel);
    PGJDBC.setUseParentHandlers(previousParents);
  }

  @Test
  void acquireIsOneRoundTripAndReleaseIsOne() throws SQLException {
    for (boolean autoCommit : new boolean[] {true, false}) {
      try (Connection c = db.connect()) {
        c.setAutoCommit(autoCommit);
        LeaseClient client =
            LeaseClient.builder(new OneConnection(c)).holder("round-trips").build();
        try {
          String resource = "round-trip-" + autoCommit;
          syncs.set(0);
          Lease lease = client.tryAcquire(resource, Duration.ofSeconds(30)).orElseThrow();
          assertThat(syncs.get()).as("round trips of an acquisition").isEqualTo(1);

          syncs.set(0);
          lease.close();
          assertThat(syncs.get()).as("round trips of a release").isEqualTo(1);

          syncs.set(0);
          assertThat(client.tryAcquire(resource, Duration.ofSeconds(30))).isPresent();
          assertThat(syncs.get()).as("round trips of the next acquisition").isEqualTo(1);
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
  private static final class OneConnection implements DataSource {
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
