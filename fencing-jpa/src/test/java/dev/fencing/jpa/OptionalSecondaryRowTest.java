package dev.fencing.jpa;

import static dev.fencing.jpa.JpaFixture.refusal;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.hibernate.SessionFactory;
import org.hibernate.StaleStateException;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A per-row entity with an optional secondary table ({@link Sticker}): an update whose secondary
 * row is missing sends, before PostgreSQL 15 ({@link Postgres14Dialect}: no {@code MERGE}), an
 * {@code UPDATE} of that table that finds no row and then an {@code INSERT} into it — two
 * statements of one entity write. Both are announced (a false refusal of the second before), for
 * that write only: a native write of the table right after it is still refused, and a zombie's
 * update writes nothing. From 15 on Hibernate sends one {@code MERGE}.
 */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class OptionalSecondaryRowTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static JpaFixture jpa;
  private static SessionFactory merging;

  @BeforeAll
  static void start() {
    jpa =
        JpaFixture.start(
            db, Map.of("hibernate.dialect", Postgres14Dialect.class.getName()), Sticker.class);
    merging =
        JpaFixture.sessionFactory(
            jpa.dataSource, Map.of("hibernate.hbm2ddl.auto", "none"), Sticker.class);
  }

  @AfterEach
  void reset() {
    jpa.reset();
  }

  @AfterAll
  static void stop() {
    merging.close();
    jpa.close();
  }

  private static @Nullable String note(String id) {
    return jpa.queryLong("SELECT count(*) FROM sticker_note WHERE id = ?", id) == 0
        ? null
        : queryText("SELECT note FROM sticker_note WHERE id = ?", id);
  }

  private static String queryText(String sql, String id) {
    try (Connection c = jpa.pool.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return rs.getString(1);
      }
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void aStatelessUpdateThatInsertsTheMissingSecondaryRowPasses() {
    jpa.seed("sticker:a", new Sticker("a", null));
    jpa.seed("sticker:b", new Sticker("b", null));
    assertThat(jpa.count("sticker_note")).isZero();

    try (FencingScope scope = Fencing.bind(jpa.current("sticker:a"))) {
      // UPDATE sticker_note (no row), then INSERT INTO sticker_note: one entity write
      jpa.sessionFactory.inStatelessTransaction(s -> s.update(new Sticker("a", "hello")));
    }
    assertThat(note("a")).isEqualTo("hello");
    assertThat(note("b")).isNull();
  }

  /**
   * No third statement: another transaction inserts the secondary row (uncommitted) before the
   * update, so the entity write's {@code UPDATE} finds no row and its {@code INSERT ... ON CONFLICT
   * DO NOTHING} waits for that transaction (seen in {@code pg_blocking_pids}); once it commits, the
   * insert writes nothing and Hibernate 7.4 fails the write ({@code StaleStateException}, row count
   * 0) instead of updating again ({@code OptionalTableUpdateWithUpsertOperation} retries only a
   * non-optional table). So two announcements suffice; should Hibernate retry, this goes red.
   */
  @Test
  void aConcurrentInsertOfTheSecondaryRowFailsTheUpdateWithoutAThirdStatement() throws Exception {
    jpa.seed("sticker:a", new Sticker("a", null));
    Lease lease = jpa.current("sticker:a");

    try (Connection other = jpa.pool.getConnection()) {
      other.setAutoCommit(false);
      try (PreparedStatement ps =
          other.prepareStatement("INSERT INTO sticker_note (id, note) VALUES ('a', 'theirs')")) {
        ps.executeUpdate();
      }
      CompletableFuture<Void> update =
          CompletableFuture.runAsync(
              () -> {
                try (FencingScope scope = Fencing.bind(lease)) {
                  jpa.sessionFactory.inStatelessTransaction(
                      s -> s.update(new Sticker("a", "hello")));
                }
              });
      int blocker = pidOf(other);
      while (!update.isDone()
          && jpa.queryLong(
                  "SELECT count(*) FROM pg_stat_activity WHERE ? = ANY(pg_blocking_pids(pid))",
                  blocker)
              == 0) {
        Thread.onSpinWait();
      }
      other.commit();
      assertThatThrownBy(() -> update.get(1, TimeUnit.MINUTES))
          .hasRootCauseInstanceOf(StaleStateException.class)
          .rootCause()
          .hasMessageContaining("insert into sticker_note");
    }
    assertThat(note("a")).isEqualTo("theirs");
  }

  private static int pidOf(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT pg_backend_pid()");
        ResultSet rs = ps.executeQuery()) {
      assertThat(rs.next()).isTrue();
      return rs.getInt(1);
    }
  }

  @Test
  void aStatefulUpdateThatInsertsTheSecondaryRowPasses() {
    jpa.seed("sticker:a", new Sticker("a", null));

    try (FencingScope scope = Fencing.bind(jpa.current("sticker:a"))) {
      jpa.sessionFactory.inTransaction(s -> s.find(Sticker.class, "a").note = "one");
      jpa.sessionFactory.inTransaction(s -> s.find(Sticker.class, "a").note = "two");
      jpa.sessionFactory.inTransaction(s -> s.find(Sticker.class, "a").note = null); // DELETE
    }
    assertThat(note("a")).isNull();
  }

  @Test
  void aNativeWriteAfterAnUpdateThatInsertedTheSecondaryRowIsRefused() {
    jpa.seed("sticker:a", new Sticker("a", null));
    jpa.seed("sticker:b", new Sticker("b", "b's"));

    try (FencingScope scope = Fencing.bind(jpa.current("sticker:a"))) {
      refusal(
          MissingFencingTokenException.class,
          () ->
              jpa.sessionFactory.inStatelessTransaction(
                  s -> {
                    s.update(new Sticker("a", "hello")); // UPDATE (no row) + INSERT
                    s.createNativeMutationQuery("update sticker_note set note = 'all'")
                        .executeUpdate();
                  }));
    }
    assertThat(note("a")).isNull(); // rolled back with the refused native write
    assertThat(note("b")).isEqualTo("b's");
  }

  @Test
  void aNativeWriteAfterAnUpdateOfAnExistingSecondaryRowIsRefused() {
    jpa.seed("sticker:a", new Sticker("a", "a's"));
    jpa.seed("sticker:b", new Sticker("b", "b's"));

    try (FencingScope scope = Fencing.bind(jpa.current("sticker:a"))) {
      refusal(
          MissingFencingTokenException.class,
          () ->
              jpa.sessionFactory.inStatelessTransaction(
                  s -> {
                    s.update(new Sticker("a", "hello")); // the UPDATE finds the row: no INSERT
                    s.createNativeMutationQuery("update sticker_note set note = 'all'")
                        .executeUpdate();
                  }));
      // and in a stateful session, whose flush ran the entity's statements before the native one
      refusal(
          MissingFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s -> {
                    s.find(Sticker.class, "a").note = "again";
                    s.flush();
                    s.createNativeMutationQuery("update sticker_note set note = 'all'")
                        .executeUpdate();
                  }));
    }
    assertThat(note("a")).isEqualTo("a's");
    assertThat(note("b")).isEqualTo("b's");
  }

  @Test
  void aZombiesUpdateThatWouldInsertTheSecondaryRowWritesNothing() {
    jpa.seed("sticker:a", new Sticker("a", null));

    try (FencingScope scope = Fencing.bind(jpa.stale("sticker:a"))) {
      refusal(
          StaleFencingTokenException.class,
          () ->
              jpa.sessionFactory.inStatelessTransaction(
                  s -> s.update(new Sticker("a", "zombie's"))));
      refusal(
          StaleFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(s -> s.find(Sticker.class, "a").note = "zombie's"));
    }
    assertThat(jpa.count("sticker_note")).isZero();
  }

  @Test
  void fromPostgreSql15OnTheUpdateIsOneMergeAndPasses() {
    jpa.seed("sticker:a", new Sticker("a", null));
    jpa.seed("sticker:b", new Sticker("b", "b's"));

    try (FencingScope scope = Fencing.bind(jpa.current("sticker:a"))) {
      merging.inStatelessTransaction(s -> s.update(new Sticker("a", "merged")));
      refusal(
          MissingFencingTokenException.class,
          () ->
              merging.inStatelessTransaction(
                  s -> {
                    s.update(new Sticker("a", "again"));
                    s.createNativeMutationQuery("update sticker_note set note = 'all'")
                        .executeUpdate();
                  }));
    }
    assertThat(note("a")).isEqualTo("merged");
    assertThat(note("b")).isEqualTo("b's");
  }
}
