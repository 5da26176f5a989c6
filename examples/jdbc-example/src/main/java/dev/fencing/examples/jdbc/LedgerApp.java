package dev.fencing.examples.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingRefusedException;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.migrations.FencingMigrations;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The README's quick start as an application, in two steps as teams deploy it:
 *
 * <pre>
 * LedgerApp setup --url jdbc:postgresql://host/db --user DEPLOYER [--owner-role R] [--app-role R] [--login NAME]
 * LedgerApp run   --url jdbc:postgresql://host/db --user LOGIN
 * </pre>
 *
 * {@code setup} applies the fence's migrations and {@code ledger-setup.sql} (the application's
 * table, its login, the grants, {@code protect}). {@code run} is the application: a zombie takes
 * the lease and pauses past it, a worker takes it over and writes, the zombie wakes and writes:
 * refused twice (once by the client, which knows its lease ran out; once by PostgreSQL, for a token
 * carried without its lease), and the application reads its own refusals back; if a zombie's write
 * commits instead, {@code run} fails (exit 1). The password comes from {@code FENCING_DB_PASSWORD}.
 */
public final class LedgerApp {
  static final String RESOURCE = "ledger";

  static final String USAGE =
      """
      usage: LedgerApp setup --url JDBC_URL --user DEPLOYER [--owner-role NAME] [--app-role NAME] [--login NAME]
             LedgerApp run --url JDBC_URL --user LOGIN
             LedgerApp --help
      setup  migrate the fence and create the ledger table, the login and its grants (as the deployer)
      run    a worker and a zombie write to the ledger (as the application's login)
      defaults: --owner-role ledger_fencing_owner --app-role ledger_fencing_app --login ledger_app
      password: environment FENCING_DB_PASSWORD
      """;

  private LedgerApp() {}

  /** Runs {@code setup} or {@code run} and exits: 0 done, 1 failed, 2 bad usage. */
  public static void main(String[] args) {
    System.exit(main(args, System.getenv("FENCING_DB_PASSWORD"), System.out, System.err));
  }

  static int main(String[] args, String password, PrintStream out, PrintStream err) {
    if (List.of(args).contains("--help")) {
      out.print(USAGE);
      return 0;
    }
    if (args.length == 0 || !List.of("setup", "run").contains(args[0])) {
      err.print((args.length == 0 ? "" : "unknown command " + args[0] + "\n") + USAGE);
      return 2;
    }
    Map<String, String> options = new LinkedHashMap<>();
    options.put("--owner-role", "ledger_fencing_owner");
    options.put("--app-role", "ledger_fencing_app");
    options.put("--login", "ledger_app");
    for (int i = 1; i < args.length; i += 2) {
      if (!List.of("--url", "--user", "--owner-role", "--app-role", "--login").contains(args[i])
          || i + 1 >= args.length) {
        err.print("bad option " + args[i] + "\n" + USAGE);
        return 2;
      }
      options.put(args[i], args[i + 1]);
    }
    if (!options.containsKey("--url") || !options.containsKey("--user")) {
      err.print("--url and --user are required\n" + USAGE);
      return 2;
    }
    PGSimpleDataSource dataSource = new PGSimpleDataSource();
    dataSource.setURL(options.get("--url"));
    dataSource.setUser(options.get("--user"));
    if (password != null) {
      dataSource.setPassword(password);
    }
    try {
      if (args[0].equals("setup")) {
        setup(
            dataSource,
            options.get("--owner-role"),
            options.get("--app-role"),
            options.get("--login"),
            out);
      } else {
        run(dataSource, out);
      }
      return 0;
    } catch (SQLException | RuntimeException e) {
      err.println(args[0] + " failed: " + e.getMessage());
      return 1;
    }
  }

  /** The deployment step: the fence's migrations, then the application's table and login. */
  static void setup(
      DataSource deployer, String ownerRole, String appRole, String login, PrintStream out)
      throws SQLException {
    FencingMigrations fence =
        FencingMigrations.builder(deployer).ownerRole(ownerRole).applicationRole(appRole).build();
    out.println("fence migrations applied: " + fence.migrate());
    fence.absentOptionalFeatures().forEach(out::println);
    String sql =
        resource("ledger-setup.sql")
            .replace("${fencing_app}", appRole)
            .replace("${app_login}", login);
    try (Connection c = deployer.getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
    out.println("ledger_entry created, protected by resource " + RESOURCE + "; login " + login);
  }

  /** The application, connected as its login: a worker and a zombie. */
  static void run(DataSource login, PrintStream out) throws SQLException {
    HikariConfig config = new HikariConfig();
    config.setDataSource(login);
    config.setMaximumPoolSize(4);
    try (HikariDataSource pool = new HikariDataSource(config);
        LeaseClient zombieLeases = LeaseClient.builder(pool).holder("zombie").build();
        LeaseClient workerLeases = LeaseClient.builder(pool).holder("worker").build()) {
      DataSource db = FencedDataSource.wrap(pool);

      // The zombie takes the lease for one second, then stops (a GC pause, a partition).
      Lease zombie = zombieLeases.acquire(RESOURCE, Duration.ofSeconds(1), Duration.ofSeconds(30));
      out.println("zombie acquired " + RESOURCE + ", token " + zombie.token().value());

      // The worker's acquire waits until the zombie's lease expires on the database clock.
      try (Lease lease =
              workerLeases.acquire(RESOURCE, Duration.ofSeconds(30), Duration.ofSeconds(30));
          FencingScope scope = Fencing.bind(lease)) {
        insert(db, "deposit by the worker", 50);
        out.println("worker acquired " + RESOURCE + ", token " + lease.token().value() + ", wrote");
      }

      // The zombie wakes up and writes, as if nothing happened.
      try (FencingScope scope = Fencing.bind(zombie)) {
        insert(db, "withdrawal by the zombie", -70);
        throw fenceDidNotHold(out);
      } catch (FencingRefusedException e) {
        out.println("zombie with its lease bound: refused, " + describe(e));
      }
      FencingToken token = zombie.token(); // e.g. handed to another thread or process
      try (FencingScope scope = Fencing.bind(token)) {
        insert(db, "withdrawal by the zombie", -70);
        throw fenceDidNotHold(out);
      } catch (FencingRefusedException e) {
        out.println("zombie with only its token bound: refused, " + describe(e));
      }
      zombie.close();

      // The application reads its own refusals (it may not read or change the rejection table).
      try (Connection c = pool.getConnection();
          PreparedStatement ps =
              c.prepareStatement(
                  "SELECT reason, sqlstate, token, max_seen FROM fencing.rejections(?) ORDER BY id")) {
        ps.setString(1, RESOURCE);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            out.printf(
                "recorded refusal: %s %s, token %d, max_seen %d%n",
                rs.getString(1), rs.getString(2), rs.getLong(3), rs.getLong(4));
          }
        }
      }
      try (Connection c = pool.getConnection();
          Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT text FROM ledger_entry ORDER BY id")) {
        StringBuilder ledger = new StringBuilder("ledger:");
        while (rs.next()) {
          ledger.append(" [").append(rs.getString(1)).append(']');
        }
        out.println(ledger);
      }
    }
  }

  /** The zombie's write committed: said on stdout, and the run fails (exit 1). */
  private static IllegalStateException fenceDidNotHold(PrintStream out) {
    out.println("zombie wrote: THE FENCE DID NOT HOLD");
    return new IllegalStateException("the zombie's write committed: the fence did not hold");
  }

  private static void insert(DataSource db, String text, long amount) throws SQLException {
    try (Connection c = db.getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps =
          c.prepareStatement("INSERT INTO ledger_entry (text, amount) VALUES (?, ?)")) {
        ps.setString(1, text);
        ps.setLong(2, amount);
        ps.executeUpdate(); // the first write: PostgreSQL checks the bound token first
      }
      c.commit();
    }
  }

  private static String describe(FencingRefusedException e) {
    return e.getClass().getSimpleName()
        + " "
        + e.getSQLState()
        + " (token "
        + e.presentedToken()
        + ", newest "
        + e.maxSeen()
        + ")";
  }

  private static String resource(String name) {
    try (InputStream in = LedgerApp.class.getClassLoader().getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("missing from the class path: " + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
