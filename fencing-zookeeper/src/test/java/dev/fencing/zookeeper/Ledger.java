package dev.fencing.zookeeper;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.FencingToken;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/** The fenced table of the tests: {@code ledger (note, token)}. Test code only. */
final class Ledger {
  private Ledger() {}

  static void create(DataSource plain) throws SQLException {
    try (Connection c = plain.getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          "CREATE TABLE ledger (resource text, note text, token bigint NOT NULL,"
              + " PRIMARY KEY (resource, note))");
    }
  }

  /** One fenced transaction writing {@code note} with {@code token} bound. */
  static void write(DataSource fenced, FencingToken token, String note) throws SQLException {
    try (FencingScope scope = Fencing.bind(token);
        Connection c = fenced.getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps =
          c.prepareStatement("INSERT INTO ledger (resource, note, token) VALUES (?, ?, ?)")) {
        ps.setString(1, token.resource());
        ps.setString(2, note);
        ps.setLong(3, token.value());
        ps.executeUpdate();
      }
      c.commit();
    }
  }

  static boolean contains(DataSource plain, String resource, String note) throws SQLException {
    return count(
            plain, "SELECT count(*) FROM ledger WHERE note = ? AND resource = ?", note, resource)
        == 1;
  }

  static long maxSeen(DataSource plain, String resource) throws SQLException {
    return count(plain, "SELECT max_seen FROM fencing.status(?)", resource);
  }

  static long count(DataSource plain, String sql, String... args) throws SQLException {
    try (Connection c = plain.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setString(i + 1, args[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new AssertionError(sql + " returned no row");
        }
        return rs.getLong(1);
      }
    }
  }
}
