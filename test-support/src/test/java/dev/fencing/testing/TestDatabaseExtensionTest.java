package dev.fencing.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class TestDatabaseExtensionTest {

  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  @Test
  void givesTheClassItsOwnDatabase() throws SQLException {
    assertThat(db.name()).startsWith("fencing_testdatabaseextensiontest_");
    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT current_database()")) {
      assertThat(rs.next()).isTrue();
      assertThat(rs.getString(1)).isEqualTo(db.name());
    }
  }
}
