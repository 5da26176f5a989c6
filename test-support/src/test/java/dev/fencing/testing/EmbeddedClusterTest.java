package dev.fencing.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

class EmbeddedClusterTest {

  @Test
  void committedDataAndSequencesSurviveACrash() throws SQLException {
    try (EmbeddedCluster cluster = EmbeddedCluster.start()) {
      DataSource ds = cluster.dataSource("postgres");
      try (Connection c = ds.getConnection()) {
        assertThat(show(c, "fsync")).isEqualTo("on");
        assertThat(show(c, "synchronous_commit")).isEqualTo("on");
        assertThat(show(c, "full_page_writes")).isEqualTo("on");
        try (Statement s = c.createStatement()) {
          s.execute("CREATE SEQUENCE token_seq");
          s.execute("CREATE TABLE issued (token bigint PRIMARY KEY, note text NOT NULL)");
        }
      }

      long lastCommitted = 0;
      for (int round = 1; round <= 2; round++) {
        // values handed out by nextval alone, in transactions that write nothing else
        try (Connection c = ds.getConnection();
            Statement s = c.createStatement()) {
          for (int i = 0; i < 5; i++) {
            s.executeQuery("SELECT nextval('token_seq')").close();
          }
        }
        // a committed transaction that returned a value and wrote a row
        try (Connection c = ds.getConnection()) {
          c.setAutoCommit(false);
          try (Statement s = c.createStatement();
              ResultSet rs =
                  s.executeQuery(
                      "INSERT INTO issued VALUES (nextval('token_seq'), 'round "
                          + round
                          + "') RETURNING token")) {
            assertThat(rs.next()).isTrue();
            lastCommitted = rs.getLong(1);
          }
          c.commit();
        }
        int portBefore = cluster.port();
        Connection open = ds.getConnection();
        cluster.crash();
        assertThatThrownBy(() -> query(open, "SELECT 1")).isInstanceOf(SQLException.class);
        open.close();

        cluster.restart();
        assertThat(cluster.port()).isEqualTo(portBefore);
        ds = cluster.dataSource("postgres");
        try (Connection c = ds.getConnection()) {
          assertThat(query(c, "SELECT count(*) FROM issued")).isEqualTo(round);
          assertThat(query(c, "SELECT max(token) FROM issued")).isEqualTo(lastCommitted);
          assertThat(query(c, "SELECT nextval('token_seq')")).isGreaterThan(lastCommitted);
        }
      }
    }
  }

  private static String show(Connection c, String setting) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SHOW " + setting)) {
      rs.next();
      return rs.getString(1);
    }
  }

  private static long query(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
