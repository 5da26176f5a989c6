package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.LONG_TTL;
import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.queryLong;
import static dev.fencing.jdbc.FencingTestSupport.rejections;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.fencing.testing.TestDatabaseExtension;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;

/**
 * Issue 12, item 6: one refusal, one exception type. A protected table's refusal of a write that
 * carries no token for its resource (ZF002, raised by the table's trigger, not by the client's
 * check) reaches the caller as {@link MissingFencingTokenException} naming the resource, and is
 * recorded once, on every path a write takes through {@link FencedDataSource}: statements, prepared
 * statements, batches of both, COPY from a reader and streaming COPY, in autocommit mode and in a
 * transaction, with no token bound and with a token bound only for another resource. Only public
 * JDBC API is used, so the cases hold whatever the connection's internals.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class OneRefusalOneTypeTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final String GUARDED = "one-type/guarded";
  private static final String OTHER = "one-type/other";

  private static DataSource plain;
  private static FencedDataSource fenced;
  private static LeaseClient leases;
  private static Lease other;

  /** A way a write reaches the database. */
  enum Path {
    STATEMENT {
      @Override
      void write(Connection c, int id) throws Exception {
        try (Statement s = c.createStatement()) {
          s.executeUpdate("INSERT INTO guarded VALUES (" + id + ")");
        }
      }
    },
    PREPARED {
      @Override
      void write(Connection c, int id) throws Exception {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO guarded VALUES (?)")) {
          ps.setInt(1, id);
          ps.executeUpdate();
        }
      }
    },
    PREPARED_BATCH {
      @Override
      void write(Connection c, int id) throws Exception {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO guarded VALUES (?)")) {
          for (int i = 0; i < 3; i++) {
            ps.setInt(1, id + i);
            ps.addBatch();
          }
          ps.executeBatch();
        }
      }
    },
    STATEMENT_BATCH {
      @Override
      void write(Connection c, int id) throws Exception {
        try (Statement s = c.createStatement()) {
          s.addBatch("INSERT INTO guarded VALUES (" + id + ")");
          s.addBatch("INSERT INTO guarded VALUES (" + (id + 1) + ")");
          s.executeBatch();
        }
      }
    },
    COPY_FROM_READER {
      @Override
      void write(Connection c, int id) throws Exception {
        c.unwrap(PGConnection.class)
            .getCopyAPI()
            .copyIn("COPY guarded FROM STDIN", new StringReader(id + "\n" + (id + 1) + "\n"));
      }
    },
    COPY_STREAMING {
      @Override
      void write(Connection c, int id) throws Exception {
        CopyIn copy = c.unwrap(PGConnection.class).getCopyAPI().copyIn("COPY guarded FROM STDIN");
        byte[] row = (id + "\n").getBytes(StandardCharsets.UTF_8);
        copy.writeToCopy(row, 0, row.length);
        copy.endCopy();
      }
    };

    abstract void write(Connection c, int id) throws Exception;
  }

  /** What the writing thread has bound. */
  enum Bound {
    NOTHING,
    ANOTHER_RESOURCE
  }

  @BeforeAll
  static void setUp() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = FencingTestSupport.plain(db, ds -> ds);
    fenced = FencedDataSource.wrap(plain);
    exec(plain, "CREATE TABLE guarded (id int PRIMARY KEY)");
    exec(plain, "SELECT fencing.create_resource(?)", GUARDED);
    exec(plain, "SELECT fencing.protect('guarded', ?)", GUARDED);
    leases = LeaseClient.builder(plain).holder("one-type").build();
    other = leases.tryAcquire(OTHER, LONG_TTL).orElseThrow();
  }

  @AfterAll
  static void tearDown() {
    other.close();
    leases.close();
  }

  static Stream<Arguments> paths() {
    List<Arguments> cases = new ArrayList<>();
    int id = 0;
    for (Path path : Path.values()) {
      for (boolean autoCommit : new boolean[] {true, false}) {
        for (Bound bound : Bound.values()) {
          if (path == Path.COPY_STREAMING && autoCommit && bound != Bound.NOTHING) {
            continue; // refused before it starts: a streaming COPY cannot be fenced in autocommit
          }
          cases.add(arguments(path, autoCommit, bound, 100 * ++id));
        }
      }
    }
    return cases.stream();
  }

  @ParameterizedTest(name = "{0}, autocommit {1}, bound: {2}")
  @MethodSource("paths")
  void theTablesRefusalIsAMissingTokenRefusalRecordedOnce(
      Path path, boolean autoCommit, Bound bound, int id) throws Exception {
    long rows = queryLong(plain, "SELECT count(*) FROM guarded");
    long recorded = rejections(plain, GUARDED, "missing_token");

    Throwable thrown;
    try (FencingScope scope = bound == Bound.NOTHING ? null : Fencing.bind(other);
        Connection c = fenced.getConnection()) {
      c.setAutoCommit(autoCommit);
      thrown = catchThrowable(() -> path.write(c, id));
      if (!autoCommit) {
        c.rollback();
      }
    }

    assertThat(thrown).isExactlyInstanceOf(MissingFencingTokenException.class);
    MissingFencingTokenException refusal = (MissingFencingTokenException) thrown;
    assertThat(refusal.resource()).isEqualTo(GUARDED);
    assertThat(refusal.getSQLState()).isEqualTo("ZF002");
    assertThat(refusal.presentedToken()).isNull();
    assertThat(refusal.getMessage()).contains("table public.guarded is protected");
    assertThat(queryLong(plain, "SELECT count(*) FROM guarded")).as("written").isEqualTo(rows);
    assertThat(rejections(plain, GUARDED, "missing_token")).as("recorded").isEqualTo(recorded + 1);
  }
}
