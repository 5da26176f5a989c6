package dev.fencing.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

class TestDatabaseTest {

  @Test
  void createsAUsableDatabaseAndDropsItOnClose() throws SQLException {
    String name;
    try (TestDatabase db = TestDatabase.create("TestDatabaseTest: create/drop!")) {
      name = db.name();
      assertThat(name).matches("fencing_testdatabasetest__create_drop__[0-9a-f]{8}");
      assertThat(exists(name)).isTrue();

      try (Connection c = db.connect();
          Statement s = c.createStatement()) {
        s.execute("CREATE TABLE t (id int PRIMARY KEY)");
        s.execute("INSERT INTO t VALUES (1)");
      }
      try (Connection c = db.dataSource().getConnection();
          Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT current_database(), count(*) FROM t")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getString(1)).isEqualTo(name);
        assertThat(rs.getLong(2)).isEqualTo(1);
      }
      // a connection still open at close() does not keep the database alive
      Connection left = db.connect();
      assertThat(left.isValid(1)).isTrue();
    }
    assertThat(exists(name)).isFalse();
  }

  @Test
  void connectsAsAnotherRole() throws SQLException {
    String role = "fencing_role_" + Long.toHexString(System.nanoTime());
    try (TestDatabase db = TestDatabase.create("role")) {
      try (Connection c = db.connect();
          Statement s = c.createStatement()) {
        s.execute("CREATE ROLE " + role + " LOGIN");
      }
      try (Connection c = db.connect(role);
          Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT current_user")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getString(1)).isEqualTo(role);
      }
    } finally {
      try (Connection admin = TestPostgres.get().adminConnection();
          Statement s = admin.createStatement()) {
        s.execute("DROP ROLE IF EXISTS " + role);
      }
    }
  }

  @Test
  void sanitizesHints() {
    assertThat(TestDatabase.sanitize("My-Test.Class")).isEqualTo("my_test_class");
    assertThat(TestDatabase.sanitize("x".repeat(50))).hasSize(30);
    assertThat(TestDatabase.sanitize("")).isEqualTo("db");
  }

  private static boolean exists(String name) throws SQLException {
    try (Connection admin = TestPostgres.get().adminConnection();
        PreparedStatement ps =
            admin.prepareStatement("SELECT count(*) FROM pg_database WHERE datname = ?")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1) == 1;
      }
    }
  }
}
