package dev.fencing.benchmark.throughput;

import dev.fencing.benchmark.throughput.BankEntities.Rows;
import dev.fencing.jdbc.FencingToken;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;
import org.hibernate.SessionFactory;
import org.jspecify.annotations.Nullable;

/** The transactions: pgbench's TPC-B-like one and a single-row update, in JDBC and Hibernate. */
final class Workloads {
  private static final String S = Bank.SCHEMA + ".";
  private static final String UPDATE_ACCOUNT =
      "UPDATE " + S + "pgbench_accounts SET abalance = abalance + ? WHERE aid = ?";
  private static final String SELECT_ACCOUNT =
      "SELECT abalance FROM " + S + "pgbench_accounts WHERE aid = ?";
  private static final String UPDATE_TELLER =
      "UPDATE " + S + "pgbench_tellers SET tbalance = tbalance + ? WHERE tid = ?";
  private static final String UPDATE_BRANCH =
      "UPDATE " + S + "pgbench_branches SET bbalance = bbalance + ? WHERE bid = ?";
  private static final String INSERT_HISTORY =
      "INSERT INTO "
          + S
          + "pgbench_history (tid, bid, aid, delta, mtime) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP)";
  private static final String SELECT_TELLER =
      "SELECT tbalance FROM " + S + "pgbench_tellers WHERE tid = ?";
  private static final String SELECT_BRANCH =
      "SELECT bbalance FROM " + S + "pgbench_branches WHERE bid = ?";
  private static final String LOCK_ROW =
      "SELECT holder FROM " + S + "bench_lock WHERE name = ? FOR UPDATE";
  private static final String FLOOR =
      "SELECT 1 FROM " + S + "bench_floor WHERE name = ? AND max_seen = ? FOR SHARE";

  /** An extra statement a transaction sends first, before its first write. */
  @FunctionalInterface
  interface Preamble {
    void run(Connection c) throws SQLException;
  }

  private Workloads() {}

  /** The ids of one transaction: a branch, and a teller and an account of that branch. */
  record Pick(int bid, int tid, int aid, int delta) {
    static Pick random(Plan plan, ThreadLocalRandom random) {
      int bid = 1 + random.nextInt(plan.branches());
      int tid = (bid - 1) * plan.tellersPerBranch() + 1 + random.nextInt(plan.tellersPerBranch());
      int aid = (bid - 1) * plan.accountsPerBranch() + 1 + random.nextInt(plan.accountsPerBranch());
      return new Pick(bid, tid, aid, random.nextInt(-5000, 5001));
    }
  }

  /** pgbench's built-in "TPC-B (sort of)": 3 updates, 1 select, 1 insert, one transaction. */
  static void tpcb(DataSource database, Pick p, @Nullable Preamble preamble) throws SQLException {
    try (Connection c = database.getConnection()) {
      try {
        if (preamble != null) {
          preamble.run(c);
        }
        try (PreparedStatement ps = c.prepareStatement(UPDATE_ACCOUNT)) {
          ps.setInt(1, p.delta());
          ps.setInt(2, p.aid());
          one(ps.executeUpdate(), "UPDATE of account", p.aid());
        }
        try (PreparedStatement ps = c.prepareStatement(SELECT_ACCOUNT)) {
          ps.setInt(1, p.aid());
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            rs.getInt(1);
          }
        }
        try (PreparedStatement ps = c.prepareStatement(UPDATE_TELLER)) {
          ps.setInt(1, p.delta());
          ps.setInt(2, p.tid());
          one(ps.executeUpdate(), "UPDATE of teller", p.tid());
        }
        try (PreparedStatement ps = c.prepareStatement(UPDATE_BRANCH)) {
          ps.setInt(1, p.delta());
          ps.setInt(2, p.bid());
          one(ps.executeUpdate(), "UPDATE of branch", p.bid());
        }
        try (PreparedStatement ps = c.prepareStatement(INSERT_HISTORY)) {
          ps.setInt(1, p.tid());
          ps.setInt(2, p.bid());
          ps.setInt(3, p.aid());
          ps.setInt(4, p.delta());
          one(ps.executeUpdate(), "INSERT of history for account", p.aid());
        }
        c.commit();
      } catch (SQLException | RuntimeException e) {
        rollback(c, e);
        throw e;
      }
    }
  }

  /** One {@code UPDATE} of one account, one transaction. */
  static void update(DataSource database, Pick p, @Nullable Preamble preamble) throws SQLException {
    try (Connection c = database.getConnection()) {
      try {
        if (preamble != null) {
          preamble.run(c);
        }
        try (PreparedStatement ps = c.prepareStatement(UPDATE_ACCOUNT)) {
          ps.setInt(1, p.delta());
          ps.setInt(2, p.aid());
          one(ps.executeUpdate(), "UPDATE of account", p.aid());
        }
        c.commit();
      } catch (SQLException | RuntimeException e) {
        rollback(c, e);
        throw e;
      }
    }
  }

  /**
   * The single-row UPDATE's SQL-level floor: the floor's bare locking read and the {@code UPDATE}
   * as one multi-statement {@code PreparedStatement}, so in the UPDATE's own round trip, as the
   * fence carries its check; then COMMIT.
   */
  static void updateAfterFloor(DataSource database, Pick p, FencingToken token)
      throws SQLException {
    try (Connection c = database.getConnection()) {
      try {
        try (PreparedStatement ps = c.prepareStatement(FLOOR + "; " + UPDATE_ACCOUNT)) {
          ps.setString(1, token.resource());
          ps.setLong(2, token.value());
          ps.setInt(3, p.delta());
          ps.setInt(4, p.aid());
          if (!ps.execute()) {
            throw new IllegalStateException("floor read of " + token + " returned no result");
          }
          try (ResultSet rs = ps.getResultSet()) {
            if (!rs.next()) {
              throw new IllegalStateException("floor row " + token + " does not match");
            }
          }
          if (ps.getMoreResults() || ps.getUpdateCount() != 1) {
            throw new IllegalStateException("the UPDATE of account " + p.aid() + " changed no row");
          }
        }
        c.commit();
      } catch (SQLException | RuntimeException e) {
        rollback(c, e);
        throw e;
      }
    }
  }

  /** Three SELECTs (the account's, teller's and branch's balances), then COMMIT: no write. */
  static void readOnly(DataSource database, Pick p) throws SQLException {
    try (Connection c = database.getConnection()) {
      try {
        select(c, SELECT_ACCOUNT, p.aid());
        select(c, SELECT_TELLER, p.tid());
        select(c, SELECT_BRANCH, p.bid());
        c.commit();
      } catch (SQLException | RuntimeException e) {
        rollback(c, e);
        throw e;
      }
    }
  }

  private static void select(Connection c, String sql, int id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setInt(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        rs.getInt(1);
      }
    }
  }

  /**
   * What applications do without a fence: lock the resource's row and check that they still own it,
   * in every transaction, before writing.
   */
  static Preamble lockRow(String name) {
    return c -> {
      try (PreparedStatement ps = c.prepareStatement(LOCK_ROW)) {
        ps.setString(1, name);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next() || !Bank.HOLDER.equals(rs.getString(1))) {
            throw new IllegalStateException("lock row " + name + " is not ours");
          }
        }
      }
    };
  }

  /**
   * The SQL-level floor of the fence's check (issue 14): the bare locking read it needs, as one
   * extra statement, on a benchmark-owned table holding each resource's latest token: {@code SELECT
   * 1 FROM bench_floor WHERE name = ? AND max_seen = ? FOR SHARE}. Nothing else: no function call,
   * no marker, no privilege switch.
   */
  static Preamble floor(FencingToken token) {
    return c -> {
      try (PreparedStatement ps = c.prepareStatement(FLOOR)) {
        ps.setString(1, token.resource());
        ps.setLong(2, token.value());
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            throw new IllegalStateException("floor row " + token + " does not match");
          }
        }
      }
    };
  }

  /**
   * The TPC-B-like transaction as entity work: load the account, teller and branch, change their
   * balances (dirty checking writes them at commit) and persist a history entry.
   */
  static void tpcb(SessionFactory sessions, Rows rows, Pick p) {
    tpcb(sessions, rows, p, null);
  }

  /**
   * {@link #tpcb(SessionFactory, Rows, Pick)} with {@code before} run on the session's connection
   * first, as its own statement ({@code null}: nothing): how the SQL-level {@link #floor floor} is
   * measured under Hibernate.
   */
  static void tpcb(SessionFactory sessions, Rows rows, Pick p, @Nullable Preamble before) {
    sessions.inTransaction(
        session -> {
          if (before != null) {
            session.doWork(before::run);
          }
          session.find(rows.account(), p.aid()).abalance += p.delta();
          session.find(rows.teller(), p.tid()).tbalance += p.delta();
          session.find(rows.branch(), p.bid()).bbalance += p.delta();
          session.persist(rows.history().get().fill(p.tid(), p.bid(), p.aid(), p.delta()));
        });
  }

  /**
   * Fails the transaction unless the statement changed exactly one row: a write that matched no row
   * (a missing row, a statement skipped) is less work, and must not be measured as a faster
   * transaction. Not retryable ({@link Rounds#isRetryable}): the measurement stops.
   */
  private static void one(int changed, String what, int id) {
    if (changed != 1) {
      throw new IllegalStateException(what + " " + id + " changed " + changed + " rows, not 1");
    }
  }

  private static void rollback(Connection c, Exception cause) {
    try {
      c.rollback();
    } catch (SQLException e) {
      cause.addSuppressed(e);
    }
  }
}
