package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Under {@code preferQueryMode=simple} pgjdbc's {@code PreparedStatement.getMetaData()} (with no
 * open result set) and {@code getParameterMetaData()} run the statement itself as a simple query
 * (simple mode cannot describe; with assertions enabled pgjdbc throws an AssertionError instead).
 * Fenced, that execution is checked: a zombie's refused, nothing written; and after a carried
 * execution {@code getMetaData()} reads the open result set, as unfenced, running nothing again.
 */
@SuppressWarnings("try")
class SimpleMetaDataTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    exec(plain, "CREATE TABLE meta_rows (id serial PRIMARY KEY, v int NOT NULL)");
  }

  @Test
  void aZombiesGetMetaDataWritesNothing() throws Exception {
    assertAZombieWritesNothingThrough(
        "getMetaData", "INSERT INTO meta_rows (v) VALUES (?) RETURNING v", ps -> ps.getMetaData());
  }

  @Test
  void aZombiesGetParameterMetaDataWritesNothing() throws Exception {
    assertAZombieWritesNothingThrough(
        "getParameterMetaData",
        "INSERT INTO meta_rows (v) VALUES (?)",
        ps -> ps.getParameterMetaData());
  }

  private static void assertAZombieWritesNothingThrough(
      String name, String sql, MatrixFixture.PreparedBody call) throws Exception {
    String zombie = externalResource(plain, "meta-zombie-" + name, 6);
    exec(plain, "TRUNCATE meta_rows RESTART IDENTITY");
    try (FencingScope scope = Fencing.bind(FencingToken.of(zombie, 5));
        Connection c = MatrixFixture.simple(db).getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setInt(1, 5);
      MatrixFixture.assertRefusedAsStale(() -> call.run(ps));
      assertThat(c.getAutoCommit()).isTrue();
    }
    assertThat(FencingTestSupport.queryLong(plain, "SELECT count(*) FROM meta_rows"))
        .as("a zombie's write through " + name)
        .isZero();
  }

  @Test
  void getMetaDataAfterACarriedExecuteQueryRunsNothingAgain() throws Exception {
    String holder = externalResource(plain, "meta-holder", 5);
    exec(plain, "TRUNCATE meta_rows RESTART IDENTITY");
    try (FencingScope scope = Fencing.bind(FencingToken.of(holder, 5));
        Connection c = MatrixFixture.simple(db).getConnection();
        PreparedStatement ps =
            c.prepareStatement("INSERT INTO meta_rows (v) VALUES (?) RETURNING v")) {
      ps.setInt(1, 5);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(ps.getMetaData().getColumnCount()).isEqualTo(1);
      }
    }
    assertThat(FencingTestSupport.queryLong(plain, "SELECT count(*) FROM meta_rows"))
        .as("unfenced: one row (getMetaData reads the open result set)")
        .isEqualTo(1);
  }
}
