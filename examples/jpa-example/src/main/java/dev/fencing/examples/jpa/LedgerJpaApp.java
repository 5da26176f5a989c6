package dev.fencing.examples.jpa;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingExceptions;
import dev.fencing.jdbc.FencingRefusedException;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.migrations.FencingMigrations;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.Persistence;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The JPA quick start as an application: {@code setup} as the deployer (the fence's migrations and
 * {@code ledger-setup.sql}), {@code run} as the application's login: a zombie takes the lease and
 * pauses past it, a worker persists a {@link LedgerEntry}, the zombie's persist is refused and its
 * transaction rolled back; if it commits instead, {@code run} fails (exit 1). Same command line as
 * the JDBC example ({@code --help}).
 */
public final class LedgerJpaApp {
  static final String RESOURCE = "ledger";

  static final String USAGE =
      """
      usage: LedgerJpaApp setup --url JDBC_URL --user DEPLOYER [--owner-role NAME] [--app-role NAME] [--login NAME]
             LedgerJpaApp run --url JDBC_URL --user LOGIN
             LedgerJpaApp --help
      setup  migrate the fence and create the ledger table, the login and its grants (as the deployer)
      run    a worker and a zombie persist ledger entries (as the application's login)
      defaults: --owner-role ledger_fencing_owner --app-role ledger_fencing_app --login ledger_app
      password: environment FENCING_DB_PASSWORD
      """;

  private LedgerJpaApp() {}

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

  /** The application, connected as its login. */
  @SuppressWarnings("try") // a scope is opened for its effect on the thread
  static void run(DataSource login, PrintStream out) throws SQLException {
    HikariConfig config = new HikariConfig();
    config.setDataSource(login);
    config.setMaximumPoolSize(4);
    try (HikariDataSource pool = new HikariDataSource(config);
        EntityManagerFactory emf =
            Persistence.createEntityManagerFactory(
                "ledger",
                Map.of("jakarta.persistence.nonJtaDataSource", FencedDataSource.wrap(pool)));
        LeaseClient zombieLeases = LeaseClient.builder(pool).holder("zombie").build();
        LeaseClient workerLeases = LeaseClient.builder(pool).holder("worker").build()) {

      Lease zombie = zombieLeases.acquire(RESOURCE, Duration.ofSeconds(1), Duration.ofSeconds(30));
      out.println("zombie acquired " + RESOURCE + ", token " + zombie.token().value());

      try (Lease lease =
              workerLeases.acquire(RESOURCE, Duration.ofSeconds(30), Duration.ofSeconds(30));
          FencingScope scope = Fencing.bind(lease);
          EntityManager em = emf.createEntityManager()) {
        em.getTransaction().begin();
        em.persist(new LedgerEntry("deposit by the worker", 50));
        em.getTransaction().commit(); // keep the scope open through commit: the flush writes
        out.println("worker acquired " + RESOURCE + ", token " + lease.token().value() + ", wrote");
      }

      boolean zombieWrote = false;
      try (FencingScope scope = Fencing.bind(zombie.token());
          EntityManager em = emf.createEntityManager()) {
        em.getTransaction().begin();
        em.persist(new LedgerEntry("withdrawal by the zombie", -70));
        em.getTransaction().commit();
        zombieWrote = true;
      } catch (RuntimeException e) {
        FencingRefusedException refusal = FencingExceptions.find(e).orElseThrow(() -> e);
        out.println(
            "zombie: refused, "
                + refusal.getClass().getSimpleName()
                + " "
                + refusal.getSQLState()
                + " (token "
                + refusal.presentedToken()
                + ", newest "
                + refusal.maxSeen()
                + ")");
      }
      zombie.close();
      if (zombieWrote) {
        // the demonstration checks itself: said on stdout, and the run fails (exit 1)
        out.println("zombie wrote: THE FENCE DID NOT HOLD");
        throw new IllegalStateException("the zombie's write committed: the fence did not hold");
      }

      try (EntityManager em = emf.createEntityManager()) {
        out.println(
            "ledger: "
                + em
                    .createQuery("select e from LedgerEntry e order by e.id", LedgerEntry.class)
                    .getResultList()
                    .stream()
                    .map(LedgerEntry::text)
                    .toList());
      }
    }
  }

  private static String resource(String name) {
    try (InputStream in = LedgerJpaApp.class.getClassLoader().getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("missing from the class path: " + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
