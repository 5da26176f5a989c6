package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.LONG_TTL;
import static dev.fencing.jdbc.FencingTestSupport.insert;
import static dev.fencing.jdbc.FencingTestSupport.nextBlock;
import static dev.fencing.jdbc.FencingTestSupport.present;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A token bound first by number (an outer layer that only knows the token) and then with its {@link
 * Lease} is carried with the lease, in either order: once the client knows the lease is lost (here
 * released, so the database, which has issued no newer token, would still accept it), the next
 * write is refused before it is sent ({@link LeaseLostException}), as with the lease bound alone.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class LostLeaseBindingTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;
  private static LeaseClient leases;

  @BeforeAll
  static void migrate() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    FencingTestSupport.createTestSchema(plain);
    leases = LeaseClient.builder(plain).holder("lost-lease-binding").build();
  }

  @AfterAll
  static void close() {
    leases.close();
  }

  @Test
  void aTokenBoundBeforeItsLeaseDoesNotHideTheLeasesLoss() throws Exception {
    int base = nextBlock();
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    Lease lease = leases.tryAcquire("lost-token-first", LONG_TTL).orElseThrow();
    try (FencingScope outer = Fencing.bind(lease.token());
        FencingScope inner = Fencing.bind(lease);
        Connection c = fenced.getConnection()) {
      lease.close();
      assertThatThrownBy(() -> insert(c, base)).isInstanceOf(LeaseLostException.class);
    }
    assertThat(present(plain, base)).isFalse();
  }

  @Test
  void aTokenBoundAfterItsLeaseDoesNotHideTheLeasesLoss() throws Exception {
    int base = nextBlock();
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    Lease lease = leases.tryAcquire("lost-lease-first", LONG_TTL).orElseThrow();
    try (FencingScope outer = Fencing.bind(lease);
        FencingScope inner = Fencing.bind(lease.token());
        Connection c = fenced.getConnection()) {
      lease.close();
      assertThatThrownBy(() -> insert(c, base)).isInstanceOf(LeaseLostException.class);
    }
    assertThat(present(plain, base)).isFalse();
  }

  @Test
  void aContextPropagatedWithTheTokenOnlyDoesNotHideTheLeasesLoss() throws Exception {
    int base = nextBlock();
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    Lease lease = leases.tryAcquire("lost-propagated", LONG_TTL).orElseThrow();
    FencingContext tokenOnly;
    try (FencingScope scope = Fencing.bind(lease.token())) {
      tokenOnly = scope.context();
    }
    try (FencingScope carried = tokenOnly.bind();
        FencingScope withLease = Fencing.bind(lease);
        Connection c = fenced.getConnection()) {
      lease.close();
      assertThatThrownBy(() -> insert(c, base)).isInstanceOf(LeaseLostException.class);
    }
    assertThat(present(plain, base)).isFalse();
  }
}
