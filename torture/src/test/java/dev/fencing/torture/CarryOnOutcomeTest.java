package dev.fencing.torture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * How the {@link Worker.HoldPoint#CARRY_ON} zombie's carried-on statement is classified ({@link
 * FencedRoute#carriedOn}), on failures a real {@link FencedDataSource} raises. The zombie is
 * refused at its first statement with the refusal's own SQLSTATE ({@code ZF001}, which the worker
 * logs and the rejection log holds); a later statement of that refused transaction fails with
 * {@code 25P02} (the transaction kept failed), the refusal as its cause: that, and only that, is
 * {@code REFUSED}. A connection that forgot the refused transaction would run the carried-on
 * statements in a new transaction and refuse its commit anew (a fresh {@code ZF001}, the check of
 * the tokens the transaction bound): that must not pass as the transaction kept failed, or the
 * carry-on zombie could not catch the connection forgetting it.
 */
class CarryOnOutcomeTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;
  private static FencedDataSource fenced;

  @BeforeAll
  static void migrate() throws SQLException {
    FencingMigrations.builder(db.migrationDataSource())
        .ownerRole(db.ownerRole())
        .applicationRole(db.appRole())
        .build()
        .migrate();
    plain = db.dataSource();
    fenced = FencedDataSource.wrap(plain);
    try (Connection c = plain.getConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE TABLE carried (note text)");
    }
  }

  @Test
  void aLaterStatementOfTheRefusedTransactionIsTheRefusalKeptFailed() throws SQLException {
    try (LeaseClient leases = LeaseClient.builder(plain).holder("carry-on").build();
        Connection c = fenced.getConnection()) {
      FencingToken stale = staleToken(leases, "kept-failed");
      c.setAutoCommit(false);
      SQLException refused = insertWith(stale, c);
      assertThat(refused.getSQLState()).as("the first statement: the refusal").isEqualTo("ZF001");

      SQLException carried = catchThrowableOfType(SQLException.class, () -> insert(c));
      assertThat(carried.getSQLState()).as("a later statement, no token bound").isEqualTo("25P02");
      assertThat(FencedRoute.carriedOn(carried)).isEqualTo("REFUSED");
      c.rollback();
    }
  }

  @Test
  void aRefusalOfItsOwnIsNotTheTransactionKeptFailed() throws SQLException {
    try (LeaseClient leases = LeaseClient.builder(plain).holder("carry-on").build();
        Connection c = fenced.getConnection()) {
      FencingToken stale = staleToken(leases, "anew");
      c.setAutoCommit(false);
      SQLException anew = insertWith(stale, c);
      assertThat(anew.getSQLState()).isEqualTo("ZF001");
      assertThat(FencedRoute.carriedOn(anew))
          .as(
              "a statement refused by a check of its own (%s), as a connection that forgot the"
                  + " refused transaction would refuse the carried-on commit: not 25P02",
              anew.getSQLState())
          .isEqualTo("ERROR");
      c.rollback();
    }
  }

  /** A token of {@code resource} older than the one issued after it (that lease released too). */
  private static FencingToken staleToken(LeaseClient leases, String resource) throws SQLException {
    FencingToken stale;
    try (Lease first = leases.acquire(resource, Duration.ofMinutes(1), Duration.ZERO)) {
      stale = first.token();
    }
    try (Lease next = leases.acquire(resource, Duration.ofMinutes(1), Duration.ZERO)) {
      return stale;
    }
  }

  /** The refusal of an insert with {@code token} bound. */
  private static SQLException insertWith(FencingToken token, Connection c) {
    try (FencingScope scope = Fencing.bind(token)) {
      return catchThrowableOfType(SQLException.class, () -> insert(c));
    }
  }

  private static void insert(Connection c) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.executeUpdate("INSERT INTO carried (note) VALUES ('carried on')");
    }
  }
}
