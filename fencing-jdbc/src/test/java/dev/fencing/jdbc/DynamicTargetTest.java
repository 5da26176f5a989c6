package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.FencingTestSupport.queryLong;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Writes whose text names no table: an {@code EXECUTE} of a statement the connection prepared
 * ({@link PreparedExecutions}), and a {@code DO} body's {@code EXECUTE} of a string computed at run
 * time. A worker bound to another resource's token only (current, so the check alone lets it
 * through) is refused before the write runs, and nothing is written; the holder of the table's
 * resource runs them as the database would unfenced.
 */
class DynamicTargetTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;
  private static FencingToken holder;
  private static FencingToken otherResource;
  private FencedDataSource fenced;

  @BeforeAll
  static void migrate() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    exec(plain, "CREATE TABLE dyn_account (id int PRIMARY KEY, v int, execute int)");
    exec(plain, "INSERT INTO dyn_account VALUES (1, 0, 0)");
    holder = FencingToken.of(externalResource(plain, "dyn-accounts", 20), 20);
    otherResource = FencingToken.of(externalResource(plain, "dyn-other", 5), 5);
  }

  @BeforeEach
  void declare() throws SQLException {
    exec(plain, "UPDATE dyn_account SET v = 0");
    fenced = FencedDataSource.wrap(plain);
    FencedTables.of(fenced).orElseThrow().requireToken("dyn_account", "dyn-accounts");
  }

  private static long value() throws SQLException {
    return queryLong(plain, "SELECT v FROM dyn_account WHERE id = 1");
  }

  private static int update(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement()) {
      return s.executeUpdate(sql);
    }
  }

  /**
   * {@code PREPARE} (by the holder, on a connection a later worker gets), then {@code EXECUTE}: the
   * statement the name stands for is asked of the server, in autocommit and in a transaction.
   */
  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void anExecuteOfAPreparedWriteNeedsTheTokenOfItsTable(boolean autocommit) throws SQLException {
    try (Connection c = fenced.getConnection()) {
      c.setAutoCommit(autocommit);
      try (FencingScope scope = Fencing.bind(holder)) {
        exec(c, "PREPARE dyn_p (int) AS UPDATE dyn_account SET v = $1 WHERE id = 1");
        if (!autocommit) {
          c.commit();
        }
      }
      try (FencingScope scope = Fencing.bind(otherResource)) {
        assertThatThrownBy(() -> update(c, "EXECUTE dyn_p(7)"))
            .isInstanceOf(MissingFencingTokenException.class)
            .hasMessageContaining("dyn-accounts");
        if (!autocommit) {
          c.rollback(); // the refused transaction stays failed until rolled back
        }
        assertThatThrownBy(() -> update(c, "execute /* x */ \"dyn_p\" ( 8 ) ;"))
            .isInstanceOf(MissingFencingTokenException.class);
        if (!autocommit) {
          c.rollback(); // the refused transaction stays failed until rolled back
        }
        try (PreparedStatement ps = c.prepareStatement("EXECUTE dyn_p(9)")) {
          assertThatThrownBy(ps::executeUpdate).isInstanceOf(MissingFencingTokenException.class);
        }
        if (!autocommit) {
          c.rollback(); // the refused transaction stays failed until rolled back
        }
        // EXPLAIN ANALYZE runs the CREATE TABLE ... AS EXECUTE, and so the UPDATE prepared
        assertThatThrownBy(
                () -> exec(c, "EXPLAIN ANALYZE CREATE TEMP TABLE dyn_x AS EXECUTE dyn_p(6)"))
            .isInstanceOf(MissingFencingTokenException.class);
        if (!autocommit) {
          c.rollback();
        }
      }
      assertThat(value()).isZero();
      try (FencingScope scope = Fencing.bind(holder)) {
        assertThat(update(c, "EXECUTE dyn_p(7)")).isEqualTo(1);
        try (PreparedStatement ps = c.prepareStatement("EXECUTE dyn_p(9)")) {
          assertThat(ps.executeUpdate()).isEqualTo(1);
        }
        if (!autocommit) {
          c.commit();
        }
      }
      assertThat(value()).isEqualTo(9);
      // a read prepared under a name runs with another resource's token
      try (FencingScope scope = Fencing.bind(otherResource)) {
        exec(c, "PREPARE dyn_read AS SELECT v FROM dyn_account");
        exec(c, "EXECUTE dyn_read");
        if (!autocommit) {
          c.commit();
        }
      }
    }
  }

  /**
   * A name the connection has not prepared, or one the same text may prepare anew before it runs:
   * every declared table's token is needed (the server's own error only once they are bound).
   */
  @Test
  void anUnknownNameOrOneAfterAnotherStatementNeedsEveryDeclaredToken() throws SQLException {
    try (Connection c = fenced.getConnection()) {
      try (FencingScope scope = Fencing.bind(otherResource)) {
        assertThatThrownBy(() -> update(c, "EXECUTE dyn_nosuch(1)"))
            .isInstanceOf(MissingFencingTokenException.class);
        exec(c, "PREPARE dyn_q AS SELECT 1");
        assertThatThrownBy(
                () ->
                    exec(
                        c,
                        "DEALLOCATE dyn_q; CREATE FUNCTION pg_temp.dyn_f() RETURNS void"
                            + " LANGUAGE sql AS $$ SELECT 1 $$; EXECUTE dyn_q"))
            .isInstanceOf(MissingFencingTokenException.class);
      }
      try (FencingScope scope = Fencing.bind(holder)) {
        assertThatThrownBy(() -> update(c, "EXECUTE dyn_nosuch(1)"))
            .isInstanceOf(SQLException.class)
            .isNotInstanceOf(FencingRefusedException.class)
            .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("26000"));
      }
    }
    assertThat(value()).isZero();
  }

  /**
   * A {@code DO} body that {@code EXECUTE}s a string computed when it runs: {@code format} with
   * {@code %I}, a concatenation, a variable. Each is first shown to write on the server.
   */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "DO $$ BEGIN EXECUTE format('UPDATE %I SET v = %s WHERE id = 1', 'dyn_account', VALUE);"
            + " END $$",
        "DO $$ BEGIN EXECUTE 'UPDATE ' || 'dyn_acc' || 'ount SET v = VALUE WHERE id = 1'; END $$",
        "DO $$ DECLARE q text := 'UPDATE dyn_' || 'account SET v = VALUE'; BEGIN EXECUTE q; END $$",
        "DO $$ BEGIN EXECUTE format('UPDATE public.%s SET v = VALUE', 'dyn_account'); END $$",
      })
  void aBodyExecutingAComputedStringNeedsEveryDeclaredToken(String body) throws SQLException {
    exec(plain, body.replace("VALUE", "3"));
    assertThat(value()).as("unfenced, the body writes").isEqualTo(3);
    exec(plain, "UPDATE dyn_account SET v = 0");
    try (Connection c = fenced.getConnection()) {
      try (FencingScope scope = Fencing.bind(otherResource)) {
        assertThatThrownBy(() -> exec(c, body.replace("VALUE", "4")))
            .isInstanceOf(MissingFencingTokenException.class)
            .hasMessageContaining("dyn-accounts");
      }
      assertThat(value()).isZero();
      try (FencingScope scope = Fencing.bind(holder)) {
        exec(c, body.replace("VALUE", "5"));
      }
    }
    assertThat(value()).isEqualTo(5);
  }

  /**
   * In a transaction an error has aborted, the lookup fails as the {@code EXECUTE} itself would:
   * the server's own error, not a refusal, and the transaction rolls back as usual.
   */
  @Test
  void inAnAbortedTransactionTheServersErrorSurfaces() throws SQLException {
    try (Connection c = fenced.getConnection();
        FencingScope scope = Fencing.bind(holder)) {
      exec(c, "PREPARE dyn_r AS UPDATE dyn_account SET v = 2 WHERE id = 1");
      c.setAutoCommit(false);
      assertThatThrownBy(() -> exec(c, "SELECT 1 / 0")).isInstanceOf(SQLException.class);
      assertThatThrownBy(() -> update(c, "EXECUTE dyn_r"))
          .isInstanceOf(SQLException.class)
          .isNotInstanceOf(FencingRefusedException.class)
          .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("25P02"));
      c.rollback();
      assertThat(update(c, "EXECUTE dyn_r")).isEqualTo(1);
      c.commit();
    }
    assertThat(value()).isEqualTo(2);
  }

  /** A column named {@code execute} is no {@code EXECUTE}: no round trip, no refusal. */
  @Test
  void aColumnNamedExecuteIsNoExecute() throws SQLException {
    try (Connection c = fenced.getConnection();
        FencingScope scope = Fencing.bind(otherResource)) {
      exec(c, "SELECT execute FROM dyn_account");
      exec(c, "DO $$ BEGIN PERFORM execute FROM dyn_account; END $$");
    }
  }
}
