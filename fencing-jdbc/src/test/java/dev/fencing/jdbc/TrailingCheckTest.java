package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.MatrixFixture.rows;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.RoundTrips;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.jdbc.AutoSave;
import org.postgresql.jdbc.PreferQueryMode;

/**
 * The check behind a read in autocommit ({@link CheckedRead}) is the commit's ({@link
 * TokenChecker}): {@code check_one} for one token, {@code check_tokens} for several, behind the
 * schema-qualified test that the read wrote; sent in the read's round trip, no Sync between.
 * ({@link CarriedCheckMatrixTest} covers one token in every setting.)
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class TrailingCheckTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    FencingTestSupport.createHiddenWrite(plain, "tail");
  }

  @Test
  void severalTokensAreCheckedByCheckTokensAndAStaleOneIsRefused() throws Exception {
    String holder = externalResource(plain, "trailing-holder", 5);
    String zombie = externalResource(plain, "trailing-zombie", 8);
    exec(plain, "TRUNCATE tail_rows RESTART IDENTITY");
    DataSource fenced =
        FencedDataSource.wrap(MatrixFixture.driver(db, PreferQueryMode.EXTENDED, AutoSave.NEVER));
    try (FencingScope scope = Fencing.bind(FencingToken.of(holder, 5), FencingToken.of(zombie, 7));
        Connection c = fenced.getConnection();
        RoundTrips trips = new RoundTrips()) {
      for (boolean prepared : new boolean[] {false, true}) {
        trips.reset();
        MatrixFixture.assertRefusedAsStale(() -> hiddenWrite(c, prepared));
        assertOneRoundTripWithTheCheckBehind(
            trips.sent(),
            "c.is_holdable)) THEN fencing.check_tokens(ARRAY[E'"
                + holder
                + "', E'"
                + zombie
                + "']::text[], ARRAY[5, 7]::bigint[]) END");
      }
    }
    assertThat(FencingTestSupport.queryLong(plain, "SELECT count(*) FROM tail_rows"))
        .as("nothing of the zombie written")
        .isZero();
    assertThat(FencingTestSupport.rejections(plain, zombie, "stale_token"))
        .as("each refusal recorded")
        .isEqualTo(2);
  }

  @Test
  void theHoldersHiddenWriteIsCheckedByCheckOneAndCommitted() throws Exception {
    String holder = externalResource(plain, "trailing-one", 5);
    exec(plain, "TRUNCATE tail_rows RESTART IDENTITY");
    DataSource fenced =
        FencedDataSource.wrap(MatrixFixture.driver(db, PreferQueryMode.EXTENDED, AutoSave.NEVER));
    try (FencingScope scope = Fencing.bind(FencingToken.of(holder, 5));
        Connection c = fenced.getConnection();
        RoundTrips trips = new RoundTrips()) {
      for (boolean prepared : new boolean[] {false, true}) {
        trips.reset();
        assertThat(hiddenWrite(c, prepared)).isEqualTo("[(r=6)]");
        assertOneRoundTripWithTheCheckBehind(
            trips.sent(),
            "c.is_holdable)) THEN fencing.check_one(E'" + holder + "', 5::bigint) END");
        assertThat(trips.count()).as("one round trip").isEqualTo(1);
      }
    }
    assertThat(FencingTestSupport.queryLong(plain, "SELECT count(*) FROM tail_rows")).isEqualTo(2);
    assertThat(FencingTestSupport.maxSeen(plain, holder)).isEqualTo(5);
  }

  private static String hiddenWrite(Connection c, boolean prepared) throws SQLException {
    if (prepared) {
      try (PreparedStatement ps = c.prepareStatement("SELECT r * ? AS r FROM tail_hidden")) {
        ps.setInt(1, 1);
        return rows(ps.executeQuery());
      }
    }
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT r FROM tail_hidden")) {
      return rows(rs);
    }
  }

  private static void assertOneRoundTripWithTheCheckBehind(List<String> sent, String check) {
    int statement = indexOf(sent, "tail_hidden");
    int behind = indexOf(sent, check);
    assertThat(statement).as("the read sent: %s", sent).isNotNegative();
    assertThat(behind)
        .as("the commit's check behind the read: %s", sent)
        .isGreaterThanOrEqualTo(statement);
    assertThat(sent.subList(statement, behind))
        .as("in the read's implicit transaction: %s", sent)
        .noneMatch(m -> m.contains("FE=> Sync"));
    assertThat(sent).as("no other check: %s", sent).noneMatch(m -> m.contains("if_written"));
  }

  private static int indexOf(List<String> sent, String fragment) {
    for (int i = 0; i < sent.size(); i++) {
      if (sent.get(i).contains(fragment)) {
        return i;
      }
    }
    return -1;
  }
}
