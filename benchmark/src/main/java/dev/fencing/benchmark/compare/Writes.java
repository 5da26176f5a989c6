package dev.fencing.benchmark.compare;

import dev.fencing.benchmark.compare.Approach.Outcome;
import dev.fencing.benchmark.compare.Approach.Write;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingExceptions;
import dev.fencing.jdbc.FencingRefusedException;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.FencingToken;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;
import javax.sql.DataSource;

/** The two write paths of the table: a plain DataSource, and a FencedDataSource with a token. */
final class Writes {
  private Writes() {}

  /** One transaction on {@code dataSource}, committed; nothing checks who is writing. */
  static Outcome plain(DataSource dataSource, Write write) throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try {
        write.run(c);
        c.commit();
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      }
    }
    return Outcome.accepted();
  }

  /**
   * One transaction on a FencedDataSource with {@code token} bound to the calling thread:
   * PostgreSQL checks the token before the first write, in the write's own transaction.
   *
   * @param fenced a {@code FencedDataSource} (or a pool over one)
   */
  static Outcome fenced(DataSource fenced, FencingToken token, Write write) throws SQLException {
    try (FencingScope scope = Fencing.bind(token)) {
      return plain(fenced, write);
    } catch (SQLException e) {
      Optional<FencingRefusedException> refusal = FencingExceptions.find(e);
      if (refusal.isEmpty()) {
        throw e;
      }
      FencingRefusedException r = refusal.get();
      return Outcome.refused(
          r.getClass().getSimpleName()
              + " "
              + r.getSQLState()
              + ": token "
              + r.presentedToken()
              + ", max_seen "
              + r.maxSeen());
    }
  }
}
