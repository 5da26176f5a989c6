package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.FencingTestSupport.query;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Objects;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A READ ONLY transaction through a {@link FencedDataSource} that calls a function the classifier
 * cannot prove read-only ({@code SELECT my_report()}): the check sent before it gets the fence's
 * answer (migration V46). Before V46, under REPEATABLE READ / SERIALIZABLE (and for a stale token
 * under any isolation level) it failed with PostgreSQL's 25006 "cannot execute SELECT FOR SHARE in
 * a read-only transaction": a Spring {@code @Transactional(readOnly = true)} under REPEATABLE READ
 * with its lease's token bound could not read.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class ReadOnlyTransactionTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;
  private static FencedDataSource fenced;

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    fenced = FencedDataSource.wrap(plain);
    exec(plain, "CREATE FUNCTION public.my_report() RETURNS bigint LANGUAGE sql AS 'SELECT 42'");
  }

  /** How the transaction is made READ ONLY. */
  enum ReadOnly {
    /** {@code Connection.setReadOnly(true)}, as Spring's {@code readOnly = true} does. */
    JDBC,
    /** {@code SET TRANSACTION READ ONLY} as SQL, first in the transaction. */
    SET_TRANSACTION,
    /** {@code SET default_transaction_read_only = on} for the session. */
    SESSION_DEFAULT,
    /** {@code BEGIN ... READ ONLY} as SQL in autocommit, ended by {@code COMMIT} as SQL. */
    BEGIN_SQL
  }

  private static long lease(String resource) throws SQLException {
    Object token =
        query(
            plain,
            "SELECT token FROM fencing.try_acquire(?, 'holder-a', interval '60 seconds')",
            resource);
    return ((Number) Objects.requireNonNull(token)).longValue();
  }

  /** Runs {@code SELECT my_report()} through the fenced connection in a READ ONLY transaction. */
  private static Object report(String isolation, ReadOnly how) throws SQLException {
    try (Connection c = fenced.getConnection()) {
      exec(c, "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL " + isolation);
      if (how == ReadOnly.SESSION_DEFAULT) {
        exec(c, "SET default_transaction_read_only = on");
      }
      if (how == ReadOnly.BEGIN_SQL) {
        exec(c, "BEGIN READ ONLY");
      } else {
        if (how == ReadOnly.JDBC) {
          c.setReadOnly(true);
        }
        c.setAutoCommit(false);
        if (how == ReadOnly.SET_TRANSACTION) {
          exec(c, "SET TRANSACTION READ ONLY");
        }
      }
      try {
        assertThat(query(c, "SHOW transaction_read_only")).isEqualTo("on");
        assertThat(query(c, "SHOW transaction_isolation"))
            .isEqualTo(isolation.toLowerCase(Locale.ROOT));
        Object result = query(c, "SELECT my_report()");
        if (how == ReadOnly.BEGIN_SQL) {
          exec(c, "COMMIT");
        } else {
          c.commit();
        }
        return Objects.requireNonNull(result);
      } finally {
        if (how == ReadOnly.BEGIN_SQL) {
          exec(c, "ROLLBACK"); // outside a transaction block: a warning only
        } else {
          c.rollback();
          c.setAutoCommit(true);
        }
        c.setReadOnly(false);
        exec(c, "RESET default_transaction_read_only");
      }
    }
  }

  /** The lease's current token: the report runs (red before V46 under RR and SERIALIZABLE). */
  @ParameterizedTest
  @CsvSource({
    "READ COMMITTED,JDBC", "READ COMMITTED,SET_TRANSACTION",
    "READ COMMITTED,SESSION_DEFAULT", "READ COMMITTED,BEGIN_SQL",
    "REPEATABLE READ,JDBC", "REPEATABLE READ,SET_TRANSACTION",
    "REPEATABLE READ,SESSION_DEFAULT", "REPEATABLE READ,BEGIN_SQL",
    "SERIALIZABLE,JDBC", "SERIALIZABLE,SET_TRANSACTION",
    "SERIALIZABLE,SESSION_DEFAULT", "SERIALIZABLE,BEGIN_SQL"
  })
  void theLeasesTokenReads(String isolation, ReadOnly how) throws SQLException {
    String resource = "ro-lease-" + isolation.replace(' ', '-') + "-" + how;
    long token = lease(resource);
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, token))) {
      assertThat(report(isolation, how)).isEqualTo(42L);
    }
  }

  /**
   * A current external token reads; a stale one is refused with the fence's answer, a {@link
   * StaleFencingTokenException} (red before V46: 25006 under every isolation level).
   */
  @ParameterizedTest
  @CsvSource({
    "READ COMMITTED,JDBC", "READ COMMITTED,BEGIN_SQL",
    "REPEATABLE READ,JDBC", "REPEATABLE READ,SET_TRANSACTION",
    "SERIALIZABLE,JDBC", "SERIALIZABLE,SESSION_DEFAULT"
  })
  void anExternalTokenReadsAndAStaleOneIsRefused(String isolation, ReadOnly how)
      throws SQLException {
    String resource =
        externalResource(plain, "ro-external-" + isolation.replace(' ', '-') + "-" + how, 9);
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 9))) {
      assertThat(report(isolation, how)).isEqualTo(42L);
    }
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 8))) {
      assertThatThrownBy(() -> report(isolation, how))
          .isInstanceOf(StaleFencingTokenException.class);
    }
    assertThat(FencingTestSupport.maxSeen(plain, resource)).isEqualTo(9);
  }
}
