package dev.fencing.jpa;

import static dev.fencing.jpa.JpaFixture.refusal;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingRefusedException;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import jakarta.persistence.LockModeType;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.function.Function;
import org.hibernate.Session;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A lock that forces the version of a per-row {@code @Fenced} entity up ({@link Ticket}): Hibernate
 * sends {@code update ticket set version=? where id=? and version=?} with no pre-update event and
 * no entity event of its {@code EventMonitor} (at once for {@code PESSIMISTIC_FORCE_INCREMENT},
 * before commit for {@code OPTIMISTIC_FORCE_INCREMENT}), so nothing announces it, and the {@code
 * FencedDataSource} refuses it as a bulk or native write of a per-row table: a false refusal (safe,
 * nothing is written), pinned here as today's behaviour ({@code find} with {@code
 * PESSIMISTIC_FORCE_INCREMENT} even returns null: Hibernate swallows the refusal and rolls the
 * transaction back). On a protected table ({@code fencing.protect_rows}) the database judges the
 * row, and the increment passes for the current holder and is refused for a zombie.
 */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class ForceIncrementTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static JpaFixture jpa;

  /** The ways an application forces a version increment, each in one transaction. */
  enum Increment {
    LOCK_OPTIMISTIC(
        s -> {
          s.lock(s.find(Ticket.class, "a"), LockModeType.OPTIMISTIC_FORCE_INCREMENT);
          return "locked";
        }),
    LOCK_PESSIMISTIC(
        s -> {
          s.lock(s.find(Ticket.class, "a"), LockModeType.PESSIMISTIC_FORCE_INCREMENT);
          return "locked";
        }),
    FIND_OPTIMISTIC(s -> s.find(Ticket.class, "a", LockModeType.OPTIMISTIC_FORCE_INCREMENT)),
    /**
     * Hibernate's {@code find} catches the refusal of the increment it runs while loading
     * (HHH90010102, "transaction rolled back"): it returns null, and the transaction is only marked
     * for rollback, so its commit rolls back without an exception.
     */
    FIND_PESSIMISTIC(s -> s.find(Ticket.class, "a", LockModeType.PESSIMISTIC_FORCE_INCREMENT)),
    QUERY_OPTIMISTIC(
        s ->
            s.createQuery("from Ticket where id = 'a'", Ticket.class)
                .setLockMode(LockModeType.OPTIMISTIC_FORCE_INCREMENT)
                .getSingleResult()),
    QUERY_PESSIMISTIC(
        s ->
            s.createQuery("from Ticket where id = 'a'", Ticket.class)
                .setLockMode(LockModeType.PESSIMISTIC_FORCE_INCREMENT)
                .getSingleResult());

    private final Function<Session, @Nullable Object> lock;

    Increment(Function<Session, @Nullable Object> lock) {
      this.lock = lock;
    }

    /** Runs the increment in a transaction of its own. */
    void run() {
      jpa.sessionFactory.inTransaction(s -> assertThat(lock.apply(s)).isNotNull());
    }

    /**
     * Runs the increment, which must be refused with a {@code type}: thrown, or (the {@code find}
     * that swallows it) counted by the data source while {@code find} returns null and the
     * transaction rolls back.
     */
    void refused(Class<? extends FencingRefusedException> type) {
      double before = refusals(type);
      if (this == FIND_PESSIMISTIC) {
        jpa.sessionFactory.inTransaction(
            s -> {
              assertThat(lock.apply(s)).isNull();
              assertThat(s.getTransaction().getRollbackOnly()).isTrue();
            });
      } else {
        refusal(type, this::run);
      }
      assertThat(refusals(type)).isEqualTo(before + 1);
    }
  }

  private static double refusals(Class<? extends FencingRefusedException> type) {
    return jpa.meters.counter("fencing.refusals", "reason", type.getSimpleName()).count();
  }

  @BeforeAll
  static void start() {
    jpa = JpaFixture.start(db, Ticket.class, Turnstile.class);
  }

  @AfterEach
  void reset() {
    admin("SELECT fencing.unprotect('ticket')"); // reset() truncates the tables
    jpa.reset();
  }

  @AfterAll
  static void stop() {
    jpa.close();
  }

  private static void admin(String sql) {
    try (Connection c = jpa.pool.getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
  }

  private static long version(String id) {
    return jpa.queryLong("SELECT version FROM ticket WHERE id = ?", id);
  }

  @ParameterizedTest
  @EnumSource(Increment.class)
  void aForceIncrementOfAPerRowEntityIsRefusedToday(Increment increment) {
    jpa.seed("ticket:a", new Ticket("a", 10));

    try (FencingScope scope = Fencing.bind(jpa.current("ticket:a"))) {
      increment.refused(MissingFencingTokenException.class);
    }
    assertThat(version("a")).isZero();
  }

  @Test
  void locksThatIncrementNothingAndDirtyUpdatesPass() {
    jpa.seed("ticket:a", new Ticket("a", 10));

    try (FencingScope scope = Fencing.bind(jpa.current("ticket:a"))) {
      jpa.sessionFactory.inTransaction(
          s -> s.lock(s.find(Ticket.class, "a"), LockModeType.OPTIMISTIC));
      jpa.sessionFactory.inTransaction(
          s -> s.find(Ticket.class, "a", LockModeType.PESSIMISTIC_WRITE));
      assertThat(version("a")).isZero();
      // the workaround on an unprotected table: change the entity, its update increments
      jpa.sessionFactory.inTransaction(
          s -> s.find(Ticket.class, "a", LockModeType.PESSIMISTIC_WRITE).seats = 9);
    }
    assertThat(version("a")).isEqualTo(1);
    assertThat(jpa.queryLong("SELECT seats FROM ticket WHERE id = 'a'")).isEqualTo(9);
  }

  @Test
  void aForceIncrementOfAnEntityWithOneResourcePasses() {
    jpa.seed("gates", new Turnstile("t"));

    try (FencingScope scope = Fencing.bind(jpa.current("gates"))) {
      jpa.sessionFactory.inTransaction(
          s -> s.lock(s.find(Turnstile.class, "t"), LockModeType.OPTIMISTIC_FORCE_INCREMENT));
      jpa.sessionFactory.inTransaction(
          s -> s.find(Turnstile.class, "t", LockModeType.PESSIMISTIC_FORCE_INCREMENT));
    }
    assertThat(jpa.queryLong("SELECT version FROM turnstile WHERE id = 't'")).isEqualTo(2);
  }

  @ParameterizedTest
  @EnumSource(Increment.class)
  void onAProtectedTableTheCurrentHoldersIncrementPasses(Increment increment) {
    jpa.seed("ticket:a", new Ticket("a", 10));
    admin("SELECT fencing.protect_rows('ticket', 'id', 'ticket:')");

    try (FencingScope scope = Fencing.bind(jpa.current("ticket:a"))) {
      increment.run();
    }
    assertThat(version("a")).isEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(Increment.class)
  void onAProtectedTableAZombiesIncrementIsRefused(Increment increment) {
    jpa.seed("ticket:a", new Ticket("a", 10));
    admin("SELECT fencing.protect_rows('ticket', 'id', 'ticket:')");

    try (FencingScope scope = Fencing.bind(jpa.stale("ticket:a"))) {
      increment.refused(StaleFencingTokenException.class);
    }
    assertThat(version("a")).isZero();
  }
}
