package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.LONG_TTL;
import static dev.fencing.jdbc.FencingTestSupport.insert;
import static dev.fencing.jdbc.FencingTestSupport.maxSeen;
import static dev.fencing.jdbc.FencingTestSupport.present;
import static dev.fencing.jdbc.FencingTestSupport.queryLong;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Two real databases, shard A and shard B, each with its own fence, and one thread binding tokens
 * of resources living in both: each {@link FencedDataSource} checks only the resources placed in
 * its database ({@link FencedDataSource.Builder#resources}), refuses a stale token of its own, and
 * never refuses a write because of the other database's token.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class SeveralDatabasesTest {
  @RegisterExtension static final TestDatabaseExtension shardA = new TestDatabaseExtension();
  @RegisterExtension static final TestDatabaseExtension shardB = new TestDatabaseExtension();

  private static final AtomicInteger IDS = new AtomicInteger(1);

  private static DataSource plainA;
  private static DataSource plainB;
  private static FencedDataSource fencedA;
  private static FencedDataSource fencedB;

  private final List<LeaseClient> clients = new ArrayList<>();

  @BeforeAll
  static void migrateBoth() throws SQLException {
    FencingTestSupport.migrate(shardA);
    FencingTestSupport.migrate(shardB);
    plainA = shardA.dataSource();
    plainB = shardB.dataSource();
    FencingTestSupport.createTestSchema(plainA);
    FencingTestSupport.createTestSchema(plainB);
    fencedA = FencedDataSource.builder(plainA).resources(r -> r.startsWith("shard-a/")).build();
    fencedB = FencedDataSource.builder(plainB).resources(r -> r.startsWith("shard-b/")).build();
  }

  @AfterEach
  void closeClients() {
    clients.forEach(LeaseClient::close);
  }

  private Lease acquire(DataSource plain, String resource) throws SQLException {
    LeaseClient client = LeaseClient.builder(plain).holder("job-" + IDS.get()).build();
    clients.add(client);
    return client.tryAcquire(resource, LONG_TTL).orElseThrow();
  }

  @Test
  void tokensOfBothShardsBoundOnOneThreadWritesToEachAccepted() throws Exception {
    Lease a = acquire(plainA, "shard-a/orders-1");
    Lease b = acquire(plainB, "shard-b/orders-1");
    int idA = IDS.getAndIncrement();
    int idB = IDS.getAndIncrement();

    try (FencingScope scope = Fencing.bind(a, b)) {
      write(fencedA, idA);
      write(fencedB, idB);
    }

    assertThat(present(plainA, idA)).isTrue();
    assertThat(present(plainB, idB)).isTrue();
    assertThat(maxSeen(plainA, "shard-a/orders-1")).isEqualTo(a.token().value());
    assertThat(maxSeen(plainB, "shard-b/orders-1")).isEqualTo(b.token().value());
    assertThat(rejections(plainA, "shard-a/orders-1")).isZero();
    assertThat(rejections(plainB, "shard-b/orders-1")).isZero();
  }

  @Test
  void withoutPlacementTheOtherShardsResourceIsUnknown() throws Exception {
    // the default (every bound token is checked): why several databases need resources(...)
    FencedDataSource unplaced = FencedDataSource.wrap(plainA);
    Lease a = acquire(plainA, "shard-a/orders-2");
    Lease b = acquire(plainB, "shard-b/orders-2");
    int idA = IDS.getAndIncrement();

    try (FencingScope scope = Fencing.bind(a, b)) {
      assertThatThrownBy(() -> write(unplaced, idA))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("unknown fencing resource \"shard-b/orders-2\"")
          .extracting(e -> ((SQLException) e).getSQLState())
          .isEqualTo(FencingSqlState.INVALID_RESOURCE.code());
    }
    assertThat(present(plainA, idA)).isFalse();
  }

  @Test
  void staleTokenForShardAIsRefusedOnlyInShardA() throws Exception {
    Lease first = acquire(plainA, "shard-a/orders-3");
    FencingToken stale = first.token();
    first.close();
    Lease second = acquire(plainA, "shard-a/orders-3");
    try (FencingScope scope = Fencing.bind(second)) {
      write(fencedA, IDS.getAndIncrement());
    }
    Lease b = acquire(plainB, "shard-b/orders-3");
    int idA = IDS.getAndIncrement();
    int idB = IDS.getAndIncrement();

    try (FencingScope scope = Fencing.bind(stale, b.token())) {
      assertThatThrownBy(() -> write(fencedA, idA))
          .isInstanceOf(StaleFencingTokenException.class)
          .satisfies(
              e ->
                  assertThat(((FencingRefusedException) e).resource()).isEqualTo(stale.resource()));
      write(fencedB, idB);
    }

    assertThat(present(plainA, idA)).isFalse();
    assertThat(present(plainB, idB)).as("shard B's write with its current token").isTrue();
    assertThat(maxSeen(plainA, "shard-a/orders-3")).isEqualTo(second.token().value());
    assertThat(rejections(plainA, "shard-a/orders-3")).isEqualTo(1);
    assertThat(rejections(plainB, "shard-a/orders-3"))
        .as("shard B never saw shard A's stale token")
        .isZero();
    assertThat(rejections(plainB, "shard-b/orders-3")).isZero();
  }

  @Test
  void unknownResourceOfShardBDoesNotRefuseWritesInShardA() throws Exception {
    Lease a = acquire(plainA, "shard-a/orders-4");
    FencingToken unknownInB = FencingToken.of("shard-b/never-created", 12345);
    int idA = IDS.getAndIncrement();
    int idB = IDS.getAndIncrement();

    try (FencingScope scope = Fencing.bind(a.token(), unknownInB)) {
      write(fencedA, idA);
      // placed in B, it is checked there: unknown, the write fails
      assertThatThrownBy(() -> write(fencedB, idB))
          .isInstanceOf(SQLException.class)
          .extracting(e -> ((SQLException) e).getSQLState())
          .isEqualTo(FencingSqlState.INVALID_RESOURCE.code());
    }

    assertThat(present(plainA, idA)).isTrue();
    assertThat(present(plainB, idB)).isFalse();
    assertThat(maxSeen(plainA, "shard-a/orders-4")).isEqualTo(a.token().value());
  }

  @Test
  void requireTokenCountsOnlyTokensOfItsOwnDatabase() throws Exception {
    FencedDataSource strictA =
        FencedDataSource.builder(plainA)
            .resources(r -> r.startsWith("shard-a/"))
            .requireToken(true)
            .build();
    Lease b = acquire(plainB, "shard-b/orders-5");
    int idA = IDS.getAndIncrement();

    try (FencingScope scope = Fencing.bind(b)) {
      assertThatThrownBy(() -> write(strictA, idA))
          .isInstanceOf(MissingFencingTokenException.class);
    }
    assertThat(present(plainA, idA)).isFalse();
  }

  @Test
  void fencingAnotherDatabasesTokenIsBadInput() throws Exception {
    Lease b = acquire(plainB, "shard-b/orders-6");

    assertThatThrownBy(() -> fencedA.fence(b.token()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("shard-b/orders-6")
        .hasMessageContaining("resources");
    assertThat(rejections(plainA, "shard-b/orders-6")).isZero();
    assertThat(maxSeen(plainB, "shard-b/orders-6")).isEqualTo(b.token().value());
  }

  private static void write(DataSource fenced, int id) throws SQLException {
    try (Connection c = fenced.getConnection()) {
      insert(c, id);
    }
  }

  private static long rejections(DataSource plain, String resource) throws SQLException {
    return queryLong(plain, "SELECT count(*) FROM fencing.rejection WHERE resource = ?", resource);
  }
}
