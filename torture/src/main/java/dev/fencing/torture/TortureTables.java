package dev.fencing.torture;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What a {@link TortureRun} reads and writes in its database, besides the workers' own writes: the
 * torture tables, the fence's issuance and rejection logs for the run's resources, and the workers'
 * backends. Each call takes a connection of its own; the observing ones return a neutral value
 * while the database is down (a fault may have killed it).
 */
final class TortureTables {

  /**
   * What the database holds of a run: the writes landed, the tokens issued, the refusals logged.
   */
  record Recorded(
      List<History.Write> writes,
      List<History.Issuance> issuances,
      List<History.Rejection> rejections) {}

  private final TortureDatabase database;
  private final List<String> resources;

  /**
   * The resource's own table, protected as a whole ({@code fencing.protect}) in fenced runs: the
   * writes of {@link Worker.Route#TABLE} and {@link Worker.Route#MARKED} to the run's resource
   * number {@code index}.
   */
  static String tableOf(int index) {
    if (index < 0) {
      throw new IllegalArgumentException("not a resource of the run");
    }
    return "torture_table_" + index;
  }

  /** Every write of the run, whichever route it took: all the tables share the commit counter. */
  private String writes() {
    StringBuilder sql =
        new StringBuilder(
            "(SELECT resource, n, token, worker, seq, max_seen FROM torture_write"
                + " UNION ALL SELECT resource, n, token, worker, seq, max_seen FROM"
                + " torture_protected");
    for (int i = 0; i < resources.size(); i++) {
      sql.append(" UNION ALL SELECT resource, n, token, worker, seq, max_seen FROM ")
          .append(tableOf(i));
    }
    return sql.append(")").toString();
  }

  /**
   * {@link #writes()} with the {@code max_seen} each write's transaction read inside its COMMIT.
   */
  private String writesAtCommit() {
    return "(SELECT w.*, coalesce(c.max_seen, w.max_seen) AS max_seen_at_commit FROM "
        + writes()
        + " w LEFT JOIN torture_commit_seen c USING (resource, n))";
  }

  /** The tables of {@code resources} (the run's list, filled in before {@link #create()}). */
  TortureTables(TortureDatabase database, List<String> resources) {
    this.database = database;
    this.resources = resources;
  }

  /**
   * Creates the torture tables if need be and a counter of each resource: {@code torture_write}
   * (the writes of {@link Worker.Route#DIRECT} and {@link Worker.Route#HIDDEN}), {@code
   * torture_protected} (those of {@link Worker.Route#PROTECTED}; protected per row by its {@code
   * resource} with {@code fencing.protect_rows} when {@code fenced}, unprotected otherwise), for
   * each resource its {@link #tableOf table} (those of {@link Worker.Route#TABLE} and {@link
   * Worker.Route#MARKED}; protected as a whole for the resource with {@code fencing.protect} when
   * {@code fenced}: statement triggers, which earlier runs' protections are replaced by), and the
   * overloads {@code public.generate_series(text)} and {@code public.generate_series(text, bigint,
   * bigint, int, bigint)} that write what the hidden route writes (a built-in's name, so {@code
   * FencedDataSource}'s classifier takes their call for a read).
   */
  void create(boolean fenced) throws SQLException {
    try (Connection c = database.dataSource().getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          "CREATE TABLE IF NOT EXISTS torture_counter (resource text PRIMARY KEY, n bigint NOT"
              + " NULL)");
      List<String> tables = new ArrayList<>(List.of("torture_write", "torture_protected"));
      for (int i = 0; i < resources.size(); i++) {
        tables.add(tableOf(i));
      }
      for (String table : tables) {
        s.execute(
            "CREATE TABLE IF NOT EXISTS "
                + table
                + " (resource text NOT NULL, n bigint NOT NULL,"
                + " token bigint NOT NULL, worker int NOT NULL, seq bigint NOT NULL,"
                + " max_seen bigint NOT NULL, committed_at timestamptz NOT NULL DEFAULT"
                + " clock_timestamp(), PRIMARY KEY (resource, n))");
      }
      s.execute(
          "CREATE OR REPLACE FUNCTION public.generate_series(p_resource text) RETURNS SETOF bigint"
              + " LANGUAGE sql AS $$ UPDATE public.torture_counter SET n = n + 1"
              + " WHERE resource = p_resource RETURNING n $$");
      s.execute(
          "CREATE OR REPLACE FUNCTION public.generate_series(p_resource text, p_n bigint,"
              + " p_token bigint, p_worker int, p_seq bigint) RETURNS SETOF bigint LANGUAGE sql"
              + " AS $$ INSERT INTO public.torture_write (resource, n, token, worker, seq,"
              + " max_seen) SELECT p_resource, p_n, p_token, p_worker, p_seq, s.max_seen"
              + " FROM fencing.status(p_resource) s RETURNING n $$");
      // max_seen as each write's transaction sees it inside its COMMIT (deferred triggers run
      // there, after the commit's check; READ COMMITTED: a fresh snapshot per statement)
      s.execute(
          "CREATE TABLE IF NOT EXISTS torture_commit_seen (resource text NOT NULL, n bigint NOT"
              + " NULL, max_seen bigint NOT NULL, PRIMARY KEY (resource, n))");
      s.execute(
          "CREATE OR REPLACE FUNCTION public.torture_commit_seen() RETURNS trigger LANGUAGE"
              + " plpgsql AS $$ BEGIN INSERT INTO public.torture_commit_seen (resource, n,"
              + " max_seen) SELECT NEW.resource, NEW.n, s.max_seen"
              + " FROM fencing.status(NEW.resource) s; RETURN NULL; END $$");
      for (String table : tables) {
        s.execute("DROP TRIGGER IF EXISTS torture_commit_seen ON " + table);
        s.execute(
            "CREATE CONSTRAINT TRIGGER torture_commit_seen AFTER INSERT ON "
                + table
                + " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW"
                + " EXECUTE FUNCTION public.torture_commit_seen()");
      }
      s.execute(
          fenced
              ? "SELECT fencing.protect_rows('torture_protected', 'resource')"
              : "SELECT fencing.unprotect('torture_protected')");
      try (PreparedStatement protect =
              c.prepareStatement("SELECT fencing.protect(?::regclass, ?)");
          PreparedStatement unprotect =
              c.prepareStatement("SELECT fencing.unprotect(?::regclass)")) {
        for (int i = 0; i < resources.size(); i++) {
          PreparedStatement ps = fenced ? protect : unprotect;
          ps.setString(1, tableOf(i));
          if (fenced) {
            ps.setString(2, resources.get(i));
          }
          ps.execute();
        }
      }
      try (PreparedStatement ps =
          c.prepareStatement("INSERT INTO torture_counter (resource, n) VALUES (?, 0)")) {
        for (String resource : resources) {
          ps.setString(1, resource);
          ps.executeUpdate();
        }
      }
    }
  }

  /**
   * A connection whose open transaction holds a lock on the rejection log that makes {@code
   * record_rejection} wait; the caller rolls it back and closes it.
   */
  Connection lockRejectionLog() throws SQLException {
    Connection c = database.dataSource().getConnection();
    try {
      c.setAutoCommit(false);
      try (Statement s = c.createStatement()) {
        s.execute("LOCK TABLE fencing.rejection IN SHARE MODE");
      }
      return c;
    } catch (SQLException e) {
      c.close();
      throw e;
    }
  }

  /** Whether a backend of {@code worker} waits for a lock in {@code record_rejection}. */
  boolean waitsForLock(int worker) {
    try (Connection c = database.dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = ?"
                    + " AND wait_event_type = 'Lock' AND query LIKE '%record_rejection%'")) {
      ps.setString(1, Worker.applicationName(worker));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1) > 0;
      }
    } catch (SQLException e) {
      return false;
    }
  }

  /**
   * Terminates the backends of {@code worker} that are inside a transaction right now.
   *
   * @return how many
   */
  int terminate(int worker) throws SQLException {
    try (Connection c = database.dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity"
                    + " WHERE application_name = ? AND xact_start IS NOT NULL"
                    + " AND pid <> pg_backend_pid()")) {
      ps.setString(1, Worker.applicationName(worker));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  /**
   * Whether {@code resource} was contended while {@code worker} holds a transaction open on it with
   * {@code token}: a newer token was issued for it, or a backend of another worker waits for a lock
   * the worker's write transaction holds (the fence's handover waiting for the transaction, or the
   * successor's write waiting for its row), not one of its lease connection. False while the
   * database is down.
   */
  boolean contended(int worker, String resource, long token) {
    try (Connection c = database.dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT EXISTS (SELECT FROM fencing.issuance i JOIN fencing.resource r"
                    + " ON r.id = i.resource_id WHERE r.name = ? AND i.token > ?)"
                    + " OR EXISTS (SELECT FROM pg_stat_activity z, pg_stat_activity w"
                    + " WHERE z.application_name = ?"
                    + " AND (z.query LIKE '%torture%' OR z.query LIKE '%generate_series%')"
                    + " AND w.application_name LIKE 'torture-w%'"
                    + " AND w.pid <> z.pid AND z.pid = ANY (pg_blocking_pids(w.pid)))")) {
      ps.setString(1, resource);
      ps.setLong(2, token);
      ps.setString(3, Worker.applicationName(worker));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    } catch (SQLException e) {
      return false; // down for the moment
    }
  }

  /** Tokens issued for the run's resources so far; -1 while the database is down. */
  long issuances() {
    try (Connection c = database.dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT count(*) FROM fencing.issuance i JOIN fencing.resource r"
                    + " ON r.id = i.resource_id WHERE r.name = ANY (?)")) {
      ps.setArray(1, c.createArrayOf("text", resources.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      return -1; // down for the moment
    }
  }

  /** The newest token a write of {@code resource} landed with; 0 while the database is down. */
  long maxToken(String resource) {
    try (Connection c = database.dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT coalesce(max(token), 0) FROM " + writes() + " w WHERE resource = ?")) {
      ps.setString(1, resource);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      return 0; // down for the moment
    }
  }

  /** Writes landed per worker; empty while the database is down. */
  Map<Integer, Long> writesPerWorker() {
    Map<Integer, Long> counts = new HashMap<>();
    try (Connection c = database.dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT worker, count(*) FROM "
                    + writes()
                    + " w WHERE resource = ANY (?)"
                    + " GROUP BY worker")) {
      ps.setArray(1, c.createArrayOf("text", resources.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          counts.put(rs.getInt(1), rs.getLong(2));
        }
      }
    } catch (SQLException e) {
      // down for the moment
    }
    return counts;
  }

  /** The writes, issuances and rejections of the run's resources. */
  Recorded recorded() throws SQLException {
    List<History.Write> writes = new ArrayList<>();
    List<History.Issuance> issuances = new ArrayList<>();
    List<History.Rejection> rejections = new ArrayList<>();
    try (Connection c = database.dataSource().getConnection()) {
      Array names = c.createArrayOf("text", resources.toArray());
      try (PreparedStatement ps =
          c.prepareStatement(
              "SELECT resource, n, token, worker, seq, max_seen, max_seen_at_commit FROM "
                  + writesAtCommit()
                  + " w WHERE resource = ANY (?)")) {
        ps.setArray(1, names);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            writes.add(
                new History.Write(
                    rs.getString(1),
                    rs.getLong(2),
                    rs.getLong(3),
                    rs.getInt(4),
                    rs.getLong(5),
                    rs.getLong(6),
                    rs.getLong(7)));
          }
        }
      }
      try (PreparedStatement ps =
          c.prepareStatement(
              "SELECT r.name, i.token, i.holder FROM fencing.issuance i"
                  + " JOIN fencing.resource r ON r.id = i.resource_id WHERE r.name = ANY (?)")) {
        ps.setArray(1, names);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            issuances.add(new History.Issuance(rs.getString(1), rs.getLong(2), rs.getString(3)));
          }
        }
      }
      try (PreparedStatement ps =
          c.prepareStatement(
              "SELECT resource, token, sqlstate FROM fencing.rejection WHERE resource = ANY (?)")) {
        ps.setArray(1, names);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            rejections.add(
                new History.Rejection(
                    rs.getString(1), rs.getObject(2, Long.class), rs.getString(3)));
          }
        }
      }
    }
    return new Recorded(writes, issuances, rejections);
  }
}
