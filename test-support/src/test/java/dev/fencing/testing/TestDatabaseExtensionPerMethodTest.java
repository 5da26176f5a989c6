package dev.fencing.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** On an instance field, each test method gets its own database. */
class TestDatabaseExtensionPerMethodTest {

  @RegisterExtension final TestDatabaseExtension db = new TestDatabaseExtension();

  @Test
  void first() throws SQLException {
    createMarker();
  }

  @Test
  void second() throws SQLException {
    createMarker();
  }

  /** Fails with "relation already exists" if the two methods shared a database. */
  private void createMarker() throws SQLException {
    assertThat(db.name()).startsWith("fencing_testdatabaseextensionpermethod_");
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      s.execute("CREATE TABLE marker (id int)");
    }
  }
}
