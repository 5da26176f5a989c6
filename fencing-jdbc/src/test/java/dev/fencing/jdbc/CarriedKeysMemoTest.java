package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.RoundTrips;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link CarriedKeys} keeps pgjdbc's {@code RETURNING} clause per SQL text, columns and connection
 * settings: the same insert on connections with different {@code quoteReturningIdentifiers} carries
 * each connection's own clause, whichever connection filled the memo first.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class CarriedKeysMemoTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  @Test
  void theClauseIsKeptPerConnectionSettingsNotOnlyPerText() throws SQLException {
    FencingTestSupport.migrate(db);
    DataSource plain = db.dataSource();
    exec(plain, "CREATE TABLE km (id bigserial PRIMARY KEY, v int NOT NULL)");
    String resource = externalResource(plain, "carried-keys-memo", 5);
    String sql = "INSERT INTO km (v) VALUES (?)";
    long id = 0;
    for (boolean quote : new boolean[] {true, false, true, false}) {
      DataSource driver =
          FencingTestSupport.plain(
              db,
              ds -> {
                ds.setQuoteReturningIdentifiers(quote);
                return ds;
              });
      List<String> sent;
      try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 5));
          Connection c = FencedDataSource.wrap(driver).getConnection();
          RoundTrips trips = new RoundTrips()) {
        c.setAutoCommit(false);
        try (PreparedStatement ps = c.prepareStatement(sql, new String[] {"id"})) {
          ps.setInt(1, 1);
          assertThat(ps.executeUpdate()).isOne();
          try (ResultSet keys = ps.getGeneratedKeys()) {
            assertThat(keys.next()).isTrue();
            assertThat(keys.getLong(1)).as("the key, as the driver returns it").isGreaterThan(id);
            id = keys.getLong(1);
          }
        }
        c.commit();
        sent = trips.sent();
      }
      int check = indexOf(sent, "check_one(");
      int insert = indexOf(sent, "INSERT INTO km");
      assertThat(check).as("the check sent: %s", sent).isNotNegative();
      assertThat(insert).as("the insert after it, carried: %s", sent).isGreaterThan(check);
      assertThat(sent.subList(check, insert)).noneMatch(m -> m.contains("Sync"));
      assertThat(sent.get(insert))
          .as("quoteReturningIdentifiers=%s", quote)
          .contains(quote ? "RETURNING \"id\"" : "RETURNING id");
      if (!quote) {
        assertThat(sent.get(insert)).doesNotContain("\"id\"");
      }
    }
  }

  /**
   * The memo keeps at most {@link SqlClassifier#MEMO_ENTRIES} texts in all, as one memo of
   * (columns, settings, text) did: not that many per column set and setting. Each text it gives is
   * still pgjdbc's own, whatever was forgotten.
   */
  @Test
  void theTextsKeptAreBoundedOverAllColumnSets() throws SQLException {
    String[][] columnSets = {{"id"}, {"v"}, {"id", "v"}};
    try (Connection c = db.dataSource().getConnection()) {
      for (String[] columns : columnSets) {
        for (int i = 0; i < SqlClassifier.MEMO_ENTRIES; i++) {
          String sql = "INSERT INTO km_bound_" + i + " (v) VALUES (?)";
          assertThat(CarriedKeys.appended(c, sql, columns))
              .isEqualTo(sql + "\nRETURNING " + String.join(", ", quoted(columns)));
          assertThat(CarriedKeys.kept())
              .as("texts kept after %s of %s", i + 1, List.of(columns))
              .isLessThanOrEqualTo(SqlClassifier.MEMO_ENTRIES);
        }
      }
      String sql = "INSERT INTO km_bound_0 (v) VALUES (?)";
      assertThat(CarriedKeys.appended(c, sql, new String[] {"id"}))
          .isEqualTo(sql + "\nRETURNING \"id\"");
    }
  }

  private static List<String> quoted(String[] columns) {
    return java.util.Arrays.stream(columns).map(n -> "\"" + n + "\"").toList();
  }

  private static int indexOf(List<String> sent, String text) {
    for (int i = 0; i < sent.size(); i++) {
      if (sent.get(i).contains(text)) {
        return i;
      }
    }
    return -1;
  }
}
