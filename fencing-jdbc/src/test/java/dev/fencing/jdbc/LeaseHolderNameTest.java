package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The holder name is checked by the builder with the database's rule ({@code try_acquire}: 1 to 200
 * characters, none a control character), before anything is sent. Before, Java's check counted
 * UTF-16 units and knew only the ASCII control characters: a holder with a C1 control character
 * (U+0085, NEL) was built and every acquisition then failed in the database (ZF006), and a holder
 * of 150 emoji, which the database accepts, was refused as longer than 200 characters.
 */
class LeaseHolderNameTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private final List<LeaseClient> clients = new ArrayList<>();

  @BeforeAll
  static void migrate() {
    FencingTestSupport.migrate(db);
  }

  @AfterEach
  void closeClients() {
    clients.forEach(LeaseClient::close);
  }

  /** A DataSource that must not be used: a refused holder sends nothing. */
  private static DataSource unreachable() {
    return LeaseClientTest.proxy(
        DataSource.class,
        (method, args) -> {
          throw new SQLException("must not be called", "08001");
        });
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "worker\u0085", // NEL, a C1 control character: [[:cntrl:]] in the database
        "worker\u009b7",
        "\u0080",
        "worker\u007f",
        "line\u2028separator", // a control in glibc's UTF-8 locales
        "a\ud800b", // an unpaired surrogate: no character at all (pgjdbc would send '?')
        "a\udc00"
      })
  void aHolderTheDatabaseWouldRefuseIsRefusedByTheBuilder(String holder) {
    assertThatThrownBy(() -> LeaseClient.builder(unreachable()).holder(holder).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("holder must be 1 to 200 characters without control characters");
  }

  @Test
  void theDatabaseRefusesWhatTheBuilderRefuses() {
    // the same holder sent as it is: the database's own rule, ZF006
    assertThatThrownBy(
            () ->
                FencingTestSupport.query(
                    db.dataSource(),
                    "SELECT acquired FROM fencing.try_acquire('holder/nel', ?, interval '1 minute')",
                    "worker\u0085"))
        .isInstanceOf(SQLException.class)
        .hasMessageContaining("holder must be 1 to 200 characters");
  }

  @Test
  void aHolderOf200CharactersOutsideTheBmpIsAccepted() throws SQLException {
    String holder = "\ud83d\udd12".repeat(200); // 200 characters, 400 UTF-16 units
    LeaseClient client = LeaseClient.builder(db.dataSource()).holder(holder).build();
    clients.add(client);
    try (Lease lease = client.tryAcquire("holder/emoji", Duration.ofMinutes(1)).orElseThrow()) {
      assertThat(lease.holder()).isEqualTo(holder);
      assertThat(
              FencingTestSupport.query(
                  db.dataSource(), "SELECT holder FROM fencing.status('holder/emoji')"))
          .isEqualTo(holder);
    }
    assertThatThrownBy(
            () -> LeaseClient.builder(unreachable()).holder(holder + "\ud83d\udd12").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("holder must be 1 to 200 characters");
  }
}
