package dev.fencing.torture;

import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.LeaseClient;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * One worker process of the torture test: takes leases on random resources and writes to them,
 * recording every write in the fenced data itself (resource, token, worker, sequence number, commit
 * position) and every acknowledgement, refusal and acquisition in its own {@link WorkerLog} before
 * going on. Started by {@link TortureRun} as {@code java -cp ... dev.fencing.torture.Worker url id
 * resources fenced|unfenced lease|token ttl-ms seed log-file}.
 *
 * <p>Fenced, it writes through a {@link FencedDataSource} with its lease (or only the lease's
 * token) bound ({@link FencedRoute}), or through a plain connection into a protected table ({@link
 * ProtectedRoute}); this class takes the leases and the harness's commands and picks each write's
 * route and hold. Unfenced, it writes through the plain data source and trusts itself: it writes
 * while it believes its lease valid. Its standard input takes commands: {@code STOP} ends it after
 * the current write; {@code HOLD BEFORE} or {@code HOLD MID} makes the next write stop before its
 * first statement (after the self-check) or between its statements, {@code HOLD COMMIT} after its
 * last statement, before its commit, {@code HOLD REPEAT} the next write that follows a committed
 * one under the same lease on the same connection (its token was checked in an earlier transaction)
 * before its first statement, {@code HOLD REPLAY} the next write that can replay the marker of an
 * earlier {@link Route#MARKED} write under the same lease, {@code HOLD CARRY_ON} the next write on
 * the fenced connection, which carries on in its transaction after a refusal ({@link HoldPoint});
 * ({@code HOLD <point> <route>}: and takes {@link Route} route); a held write prints {@code HELD
 * resource token seq}, waits for {@code GO}, and then prints {@code RESULT seq ACK|REFUSED|ERROR}.
 */
public final class Worker {
  /** Where a held write waits, or the worker's pause after a failure. */
  @FunctionalInterface
  interface Step {
    void run();
  }

  /** Where a held write waits for {@code GO}. */
  enum HoldPoint {
    /** Before the first statement of the next write. */
    BEFORE,
    /** Between the statements of the next write: its check passed, its transaction is open. */
    MID,
    /**
     * Before the first statement of the next write that follows a committed write under the same
     * lease on the same connection: a transaction whose token an earlier one already checked.
     */
    REPEAT,
    /**
     * After the last statement of the next write, before its commit: its statements done, its
     * transaction open (the commit's check, for a write the client did not see, still to come).
     */
    COMMIT,
    /**
     * Before the next write that follows a committed {@link Route#MARKED} write under the same
     * lease, which then replays that earlier transaction's marker ({@code set_config(
     * 'fencing.checked', <the marker it read>, true)}) instead of checking its token: a marker of
     * another transaction, which the statement trigger must not accept. Its write takes {@link
     * Route#MARKED} (until one such write committed under the lease, the worker's writes do).
     */
    REPLAY,
    /**
     * Before the first statement of the next write, which takes {@link Route#DIRECT} (refused at a
     * statement; a refused {@code commit()} ends its transaction, as any failed commit does); when
     * that write is refused, the worker does not roll back: its token's scope ends with the refused
     * statement (as a {@code try}-with-resources around it), and it carries on in the same
     * transaction with no token bound, writing the record again and committing. The refused
     * transaction must stay failed: nothing of it may commit, and its result is {@code REFUSED}
     * only if the carried-on statement failed with {@code 25P02}, the refusal as its cause ({@link
     * FencedRoute#carriedOn}).
     */
    CARRY_ON
  }

  /**
   * How a write reaches the data. The run mixes them so that each of the fence's checks is the only
   * one between a zombie and the data on some writes.
   */
  enum Route {
    /**
     * Through the fenced connection in plain SQL: {@code UPDATE torture_counter}, {@code INSERT
     * INTO torture_write}; {@code FencedDataSource} sees the write and checks it first.
     */
    DIRECT,
    /**
     * Through the fenced connection, hidden from its SQL classifier: {@code SELECT * FROM
     * generate_series(...)} calls the harness's overloads of a built-in's name ({@link
     * TortureTables#create}) which write the same rows; only the commit's check (with {@code
     * COMMIT}, behind {@code pg_current_xact_id_if_assigned()}) sees the write.
     */
    HIDDEN,
    /**
     * Through a plain connection of the worker (no {@code FencedDataSource}), into the protected
     * table {@code torture_protected}: {@code SELECT fencing.carry(resource, token)}, then the
     * writes; only the protected table's trigger checks the token (fenced runs; unfenced, the table
     * is not protected and nothing is carried). A refusal is recorded by the worker with {@code
     * fencing.record_rejection}, as any client of the one-call recipe would.
     */
    PROTECTED,
    /**
     * Like {@link #PROTECTED}, into the resource's own table {@code torture_table_<i>} ({@link
     * TortureTables#tableOf}), protected as a whole with {@code fencing.protect}: only its
     * statement trigger ({@code enforce_statement}) checks the carried token.
     */
    TABLE,
    /**
     * Through the plain connection into the resource's table of {@link #TABLE}, the token checked
     * first with {@code SELECT fencing.check_token(resource, token)}, nothing carried: the trigger
     * accepts the write on the marker the check left in {@code fencing.checked} (the check's proof
     * carried to the trigger). The worker keeps the marker it read for {@link HoldPoint#REPLAY}.
     */
    MARKED;

    /** Whether the write goes through the fenced connection ({@link FencedDataSource}). */
    boolean fencedConnection() {
      return this == DIRECT || this == HIDDEN;
    }
  }

  private static final Duration ACQUIRE_WAIT = Duration.ofSeconds(5);
  private static final long RETRY_PAUSE_MILLIS = 100;

  private final LeaseClient leases;
  private final int id;
  private final List<String> resources;
  private final boolean fenced;
  private final boolean bindLease;
  private final Duration ttl;
  private final Random random;
  private final WorkerLog log;
  private final PrintStream out;
  private final BlockingQueue<String> commands = new LinkedBlockingQueue<>();
  private volatile boolean stopping;
  private @Nullable HoldPoint hold;
  private @Nullable Route holdRoute;
  private final FencedRoute fencedRoute;
  private final ProtectedRoute protectedRoute;
  private long seq;
  // the last write committed on the fenced connection (not the protected route's own)
  private boolean committedOnConnection;

  private Worker(String[] args) throws IOException {
    String url = args[0];
    this.id = Integer.parseInt(args[1]);
    this.resources = List.of(args[2].split(","));
    this.fenced = args[3].equals("fenced");
    this.bindLease = args[4].equals("lease");
    this.ttl = Duration.ofMillis(Long.parseLong(args[5]));
    this.random = new Random(Long.parseLong(args[6]));
    this.log = WorkerLog.open(Path.of(args[7]));
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(url);
    String password = System.getenv("FENCING_DB_PASSWORD");
    if (password != null) {
      ds.setPassword(password);
    }
    ds.setApplicationName(applicationName(id));
    ds.setConnectTimeout(5);
    ds.setSocketTimeout(60);
    this.fencedRoute = new FencedRoute(fenced ? FencedDataSource.wrap(ds) : ds, bindLease, id, log);
    this.protectedRoute = new ProtectedRoute(ds, fenced, id, resources, log);
    this.leases = LeaseClient.builder(ds).holder(applicationName(id)).keepAlive(true).build();
    this.out = System.out;
  }

  /** The {@code application_name} of worker {@code id}'s connections. */
  static String applicationName(int id) {
    return "torture-w" + id;
  }

  /** Runs a worker; see the class comment for the arguments. */
  public static void main(String[] args) throws IOException {
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    if (args.length != 8) {
      System.err.println(
          "usage: Worker url id resources fenced|unfenced lease|token ttl-ms seed log-file");
      System.exit(2);
    }
    Worker worker = new Worker(args);
    Thread reader = new Thread(worker::readCommands, "torture-commands");
    reader.setDaemon(true);
    reader.start();
    worker.out.println("READY");
    worker.out.flush();
    worker.run();
    worker.out.println("STOPPED");
    worker.out.flush();
    System.exit(0);
  }

  private void readCommands() {
    try (BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (line.equals("STOP")) {
          stopping = true;
        }
        commands.add(line);
      }
    } catch (IOException e) {
      // the harness went away
    }
    stopping = true;
    commands.add("STOP");
  }

  private void run() throws IOException {
    while (!stopping) {
      takeCommands();
      String resource = resources.get(random.nextInt(resources.size()));
      Lease lease;
      try {
        lease = leases.acquire(resource, ttl, ACQUIRE_WAIT);
      } catch (SQLTimeoutException e) {
        continue;
      } catch (SQLException | RuntimeException e) {
        log.error(seq, e);
        pause();
        continue;
      }
      log.acquired(resource, lease.token().value());
      try (lease) {
        int writesUnderLease = 1 + random.nextInt(5);
        boolean repeat = false; // a write under this lease committed on the current connection
        for (int i = 0;
            (i < writesUnderLease
                    || hold == HoldPoint.REPEAT && repeat
                    || hold == HoldPoint.REPLAY
                        && protectedRoute.hasMarker(resource, lease.token().value()))
                && !stopping;
            i++) {
          takeCommands();
          // Unfenced, the client trusts itself: it writes while it believes the lease is valid.
          if (!fenced && lease.isLost()) {
            break;
          }
          if (!write(lease, repeat)) {
            break;
          }
          // a write of the protected route commits on another connection: the current one may
          // be one the fence's recording was cut off on (terminated), not a committed one
          repeat |= committedOnConnection;
        }
      }
    }
    // A clean end: a rollback on the fenced connection records any refusal whose recording was
    // cut off earlier (FencedDataSource records them after the next commit or rollback).
    fencedRoute.rollback(seq);
    leases.close();
    fencedRoute.close();
    protectedRoute.close();
    log.close();
  }

  private void takeCommands() {
    for (String command = commands.poll(); command != null; command = commands.poll()) {
      if (command.startsWith("HOLD ")) {
        String[] words = command.split(" ");
        hold = HoldPoint.valueOf(words[1]);
        holdRoute = words.length > 2 ? Route.valueOf(words[2]) : null;
      }
    }
  }

  /**
   * One write transaction; false if the lease should be given up. {@code repeat}: an earlier write
   * under the same lease committed on the current connection.
   */
  private boolean write(Lease lease, boolean repeat) throws IOException {
    long mySeq = ++seq;
    committedOnConnection = false;
    String resource = lease.resource();
    long token = lease.token().value();
    boolean replayable = protectedRoute.hasMarker(resource, token);
    HoldPoint heldAt =
        hold == HoldPoint.REPEAT && !repeat || hold == HoldPoint.REPLAY && !replayable
            ? null
            : hold;
    // every write draws its route, so a held one does not shift the seeded choices after it
    Route route = Route.values()[random.nextInt(Route.values().length)];
    if (hold == HoldPoint.REPLAY) {
      route = Route.MARKED; // the replay, or the marked write whose marker it will replay
    }
    if (heldAt != null) {
      hold = null;
      if (holdRoute != null && heldAt != HoldPoint.REPLAY) {
        route = holdRoute;
      }
      holdRoute = null;
      if (heldAt == HoldPoint.CARRY_ON) {
        route = Route.DIRECT; // refused at a statement: a refused commit() ends its transaction
      }
    }
    if (!route.fencedConnection()) {
      return writeProtected(route, resource, token, mySeq, heldAt);
    }
    if (heldAt == HoldPoint.BEFORE || heldAt == HoldPoint.REPEAT || heldAt == HoldPoint.CARRY_ON) {
      awaitGo(resource, token, mySeq);
    }
    FencedRoute.Outcome outcome =
        fencedRoute.write(
            lease, route, mySeq, heldAt, () -> awaitGo(resource, token, mySeq), this::pause);
    committedOnConnection = outcome.committed();
    if (heldAt != null) {
      out.println("RESULT " + mySeq + " " + outcome.result());
      out.flush();
    }
    return outcome.committed();
  }

  /**
   * One write through the plain connection into a protected table ({@link Route#PROTECTED}, {@link
   * Route#TABLE}, {@link Route#MARKED}); false if the lease should be given up.
   */
  private boolean writeProtected(
      Route route, String resource, long token, long mySeq, @Nullable HoldPoint at)
      throws IOException {
    if (at == HoldPoint.BEFORE || at == HoldPoint.REPEAT || at == HoldPoint.REPLAY) {
      awaitGo(resource, token, mySeq);
    }
    String result =
        protectedRoute.write(
            route, resource, token, mySeq, at, () -> awaitGo(resource, token, mySeq), this::pause);
    if (at != null) {
      out.println("RESULT " + mySeq + " " + result);
      out.flush();
    }
    return result.equals("ACK");
  }

  private void awaitGo(String resource, long token, long mySeq) {
    out.println("HELD " + resource + " " + token + " " + mySeq);
    out.flush();
    while (true) {
      String command;
      try {
        command = commands.take();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      if (command.equals("GO") || command.equals("STOP")) {
        return;
      }
    }
  }

  /** Natural pacing after a failure, so a worker does not spin while the server restarts. */
  private void pause() {
    try {
      TimeUnit.MILLISECONDS.sleep(RETRY_PAUSE_MILLIS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
