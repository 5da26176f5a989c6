package dev.fencing.jdbc;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import org.jspecify.annotations.Nullable;

/**
 * An execution method of JDBC 4.3's {@code Statement} and {@code PreparedStatement}, and how to
 * call it on the driver's statement with the caller's arguments ({@code null} for none, else the
 * arguments in order, boxed, as a JDK proxy passed them): what {@link StatementFence} runs once the
 * fence has had its say. {@link #jdbcName} is the method's name, which the carriers decide by.
 */
enum StatementExecution {
  EXECUTE("execute", false) {
    @Override
    Object run(Statement s, Object @Nullable [] a) throws SQLException {
      return ((PreparedStatement) s).execute();
    }
  },
  EXECUTE_SQL("execute", false) {
    @Override
    Object run(Statement s, Object @Nullable [] a) throws SQLException {
      return s.execute(sql(a));
    }
  },
  EXECUTE_SQL_KEYS("execute", false) {
    @Override
    Object run(Statement s, Object @Nullable [] a) throws SQLException {
      return s.execute(sql(a), (Integer) second(a));
    }
  },
  EXECUTE_SQL_INDEXES("execute", false) {
    @Override
    Object run(Statement s, Object @Nullable [] a) throws SQLException {
      return s.execute(sql(a), (int[]) second(a));
    }
  },
  EXECUTE_SQL_NAMES("execute", false) {
    @Override
    Object run(Statement s, Object @Nullable [] a) throws SQLException {
      return s.execute(sql(a), (String[]) second(a));
    }
  },
  EXECUTE_QUERY("executeQuery", false) {
    @Override
    Object run(Statement s, Object @Nullable [] a) throws SQLException {
      return ((PreparedStatement) s).executeQuery();
    }
  },
  EXECUTE_QUERY_SQL("executeQuery", false) {
    @Override
    Object run(Statement s, Object @Nullable [] a) throws SQLException {
      return s.executeQuery(sql(a));
    }
  },
  EXECUTE_UPDATE("executeUpdate", false) {
    @Override
    Object run(Statement s, Object @Nullable [] a) throws SQLException {
      return ((PreparedStatement) s).executeUpdate();
    }
  },
  EXECUTE_UPDATE_SQL("executeUpdate", false) {
    @Override
    Object run(Statement s, Object @Nullable [] a) throws SQLException {
      return s.executeUpdate(sql(a));
    }
  },
  EXECUTE_UPDATE_SQL_KEYS("executeUpdate", false) {
    @Override
    Object run(Statement s, Object @Nullable [] a) throws SQLException {
      return s.executeUpdate(sql(a), (Integer) second(a));
    }
  },
  EXECUTE_UPDATE_SQL_INDEXES("executeUpdate", false) {
    @Override
    Object run(Statement s, Object @Nullable [] a) throws SQLException {
      return s.executeUpdate(sql(a), (int[]) second(a));
    }
  },
  EXECUTE_UPDATE_SQL_NAMES("executeUpdate", false) {
    @Override
    Object run(Statement s, Object @Nullable [] a) throws SQLException {
      return s.executeUpdate(sql(a), (String[]) second(a));
    }
  },
  EXECUTE_LARGE_UPDATE("executeLargeUpdate", false) {
    @Override
    Object run(Statement s, Object @Nullable [] a) throws SQLException {
      return ((PreparedStatement) s).executeLargeUpdate();
    }
  },
  EXECUTE_LARGE_UPDATE_SQL("executeLargeUpdate", false) {
    @Override
    Object run(Statement s, Object @Nullable [] a) throws SQLException {
      return s.executeLargeUpdate(sql(a));
    }
  },
  EXECUTE_LARGE_UPDATE_SQL_KEYS("executeLargeUpdate", false) {
    @Override
    Object run(Statement s, Object @Nullable [] a) throws SQLException {
      return s.executeLargeUpdate(sql(a), (Integer) second(a));
    }
  },
  EXECUTE_LARGE_UPDATE_SQL_INDEXES("executeLargeUpdate", false) {
    @Override
    Object run(Statement s, Object @Nullable [] a) throws SQLException {
      return s.executeLargeUpdate(sql(a), (int[]) second(a));
    }
  },
  EXECUTE_LARGE_UPDATE_SQL_NAMES("executeLargeUpdate", false) {
    @Override
    Object run(Statement s, Object @Nullable [] a) throws SQLException {
      return s.executeLargeUpdate(sql(a), (String[]) second(a));
    }
  },
  EXECUTE_BATCH("executeBatch", true) {
    @Override
    Object run(Statement s, Object @Nullable [] a) throws SQLException {
      return s.executeBatch();
    }
  },
  EXECUTE_LARGE_BATCH("executeLargeBatch", true) {
    @Override
    Object run(Statement s, Object @Nullable [] a) throws SQLException {
      return s.executeLargeBatch();
    }
  };

  /** The JDBC method's name. */
  final String jdbcName;

  /** Whether it executes the statement's batch. */
  final boolean batch;

  StatementExecution(String jdbcName, boolean batch) {
    this.jdbcName = jdbcName;
    this.batch = batch;
  }

  /** Calls the method on {@code s} with the arguments {@code a}; its result boxed. */
  abstract @Nullable Object run(Statement s, Object @Nullable [] a) throws SQLException;

  private static String sql(Object @Nullable [] a) {
    return (String) java.util.Objects.requireNonNull(a)[0];
  }

  private static @Nullable Object second(Object @Nullable [] a) {
    return java.util.Objects.requireNonNull(a)[1];
  }
}
