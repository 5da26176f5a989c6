package dev.fencing.benchmark.compare;

import dev.fencing.benchmark.compare.Approach.Hold;
import dev.fencing.benchmark.compare.Approach.Outcome;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;

/**
 * The zombie race of the founding document, the same for every approach. The protected state is an
 * account balance in PostgreSQL, changed by read-modify-write:
 *
 * <ol>
 *   <li>client 1 acquires the lock, reads the balance (100) and plans to withdraw 30;
 *   <li>client 1 pauses (its thread waits at a latch) until the lock service itself says client 1's
 *       lease is over;
 *   <li>client 2 acquires, reads 100, withdraws 50 and commits: balance 50;
 *   <li>client 1 wakes and writes its planned balance, 70, through its usual write path.
 * </ol>
 *
 * <p>If client 1's write gets through, client 2's withdrawal is lost: the balance reads 70 where
 * only 50 is left. Then the tokens of several more acquisitions are collected to see whether they
 * only increase. A second {@link Order} lets client 1 write between client 2's acquisition and
 * client 2's first write.
 */
final class Scenario {
  static final long OPENING_BALANCE = 100;
  static final long CLIENT_1_WITHDRAWS = 30;
  static final long CLIENT_2_WITHDRAWS = 50;

  /** Acquisitions after the race, to see whether tokens only increase. */
  static final int MORE_ACQUISITIONS = 6;

  private final DataSource dataSource;

  /**
   * @param dataSource a plain DataSource on the database holding the account
   */
  Scenario(DataSource dataSource) throws SQLException {
    this.dataSource = dataSource;
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          "CREATE TABLE IF NOT EXISTS compare_account (resource text PRIMARY KEY,"
              + " balance bigint NOT NULL)");
      s.execute(
          "CREATE TABLE IF NOT EXISTS compare_write (id bigserial PRIMARY KEY,"
              + " resource text NOT NULL, client text NOT NULL, balance bigint NOT NULL)");
    }
  }

  /** How long any step may take before the run gives up: generous, the machine may be busy. */
  static Duration patience(Duration ttl) {
    return ttl.multipliedBy(20).plusSeconds(10);
  }

  /** When client 1, woken, writes. */
  enum Order {
    /** After client 2 has written and committed: the founding document's trace. */
    AFTER_NEW_HOLDER_WROTE,
    /**
     * After client 2 has acquired and read, before it writes: a token that PostgreSQL learns only
     * from a write is not known yet.
     */
    BEFORE_NEW_HOLDER_WRITES
  }

  /**
   * Plays the race on {@code resource} (unused so far) against {@code approach}; in the founding
   * order, {@link #MORE_ACQUISITIONS} more acquisitions follow to see whether tokens only increase.
   */
  Measurement play(Approach approach, String resource, Duration ttl, Order order) throws Exception {
    Duration patience = patience(ttl);
    long wait = patience.toMillis();
    openAccount(resource);
    ExecutorService client1 = Executors.newSingleThreadExecutor(r -> new Thread(r, "client-1"));
    ExecutorService client2 = Executors.newSingleThreadExecutor(r -> new Thread(r, "client-2"));
    CountDownLatch paused = new CountDownLatch(1);
    CountDownLatch wake = new CountDownLatch(1);
    Hold[] zombieHold = new Hold[1];
    try {
      Future<Outcome> zombie =
          client1.submit(
              () -> {
                Hold hold = approach.acquire(resource, "client-1");
                zombieHold[0] = hold;
                long planned = balance(resource) - CLIENT_1_WITHDRAWS;
                paused.countDown();
                if (!wake.await(wait, TimeUnit.MILLISECONDS)) {
                  throw new IllegalStateException("client 1 was never woken");
                }
                try {
                  return hold.write(c -> setBalance(c, resource, "client-1", planned));
                } finally {
                  hold.release();
                }
              });
      awaitOrFail(paused, zombie, patience);
      Hold hold1 = zombieHold[0];
      approach.awaitExpiry(hold1);

      Hold hold2 =
          client2
              .submit(() -> approach.acquire(resource, "client-2"))
              .get(wait, TimeUnit.MILLISECONDS);
      long planned2 = balance(resource) - CLIENT_2_WITHDRAWS;
      Future<Outcome> rightful;
      Outcome stale;
      if (order == Order.AFTER_NEW_HOLDER_WROTE) {
        rightful =
            client2.submit(() -> hold2.write(c -> setBalance(c, resource, "client-2", planned2)));
        rightful.get(wait, TimeUnit.MILLISECONDS);
        wake.countDown();
        stale = zombie.get(wait, TimeUnit.MILLISECONDS);
      } else {
        wake.countDown();
        stale = zombie.get(wait, TimeUnit.MILLISECONDS);
        rightful =
            client2.submit(() -> hold2.write(c -> setBalance(c, resource, "client-2", planned2)));
      }
      Outcome outcome2 = rightful.get(wait, TimeUnit.MILLISECONDS);
      client2.submit(() -> release(hold2)).get(wait, TimeUnit.MILLISECONDS);
      if (!outcome2.isAccepted()) {
        throw new IllegalStateException(
            "client 2, the rightful holder, was refused: " + outcome2.refusal());
      }

      List<Optional<BigInteger>> tokens = new ArrayList<>();
      tokens.add(hold1.token());
      tokens.add(hold2.token());
      for (int i = 0; order == Order.AFTER_NEW_HOLDER_WROTE && i < MORE_ACQUISITIONS; i++) {
        String client = i % 2 == 0 ? "client-1" : "client-2";
        ExecutorService thread = i % 2 == 0 ? client1 : client2;
        tokens.add(
            thread
                .submit(
                    () -> {
                      Hold hold = approach.acquire(resource, client);
                      release(hold);
                      return hold.token();
                    })
                .get(wait, TimeUnit.MILLISECONDS));
      }
      return new Measurement(
          tokens,
          stale,
          balance(resource),
          OPENING_BALANCE - CLIENT_2_WITHDRAWS,
          OPENING_BALANCE - CLIENT_1_WITHDRAWS,
          writers(resource));
    } finally {
      wake.countDown();
      client1.shutdownNow();
      client2.shutdownNow();
    }
  }

  private static Void release(Hold hold) throws Exception {
    hold.release();
    return null;
  }

  private static void awaitOrFail(CountDownLatch latch, Future<?> task, Duration patience)
      throws Exception {
    long deadline = System.nanoTime() + patience.toNanos();
    while (!latch.await(50, TimeUnit.MILLISECONDS)) {
      if (task.isDone()) {
        try {
          task.get();
        } catch (ExecutionException e) {
          throw new IllegalStateException("client 1 failed before its pause", e.getCause());
        }
      }
      if (System.nanoTime() - deadline > 0) {
        throw new TimeoutException("client 1 did not reach its pause within " + patience);
      }
    }
  }

  private void openAccount(String resource) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement("INSERT INTO compare_account (resource, balance) VALUES (?, ?)")) {
      ps.setString(1, resource);
      ps.setLong(2, OPENING_BALANCE);
      ps.executeUpdate();
    }
  }

  /** The client's write: the balance it computed, and a line in the write log. */
  private static void setBalance(Connection c, String resource, String client, long balance)
      throws SQLException {
    try (PreparedStatement update =
            c.prepareStatement("UPDATE compare_account SET balance = ? WHERE resource = ?");
        PreparedStatement log =
            c.prepareStatement(
                "INSERT INTO compare_write (resource, client, balance) VALUES (?, ?, ?)")) {
      update.setLong(1, balance);
      update.setString(2, resource);
      if (update.executeUpdate() != 1) {
        throw new IllegalStateException("no account for " + resource);
      }
      log.setString(1, resource);
      log.setString(2, client);
      log.setLong(3, balance);
      log.executeUpdate();
    }
  }

  private long balance(String resource) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT balance FROM compare_account WHERE resource = ?")) {
      ps.setString(1, resource);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new IllegalStateException("no account for " + resource);
        }
        return rs.getLong(1);
      }
    }
  }

  private List<String> writers(String resource) throws SQLException {
    List<String> writers = new ArrayList<>();
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT client FROM compare_write WHERE resource = ? ORDER BY id")) {
      ps.setString(1, resource);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          writers.add(rs.getString(1));
        }
      }
    }
    return writers;
  }
}
