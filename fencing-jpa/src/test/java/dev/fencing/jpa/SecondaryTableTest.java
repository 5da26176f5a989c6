package dev.fencing.jpa;

import static dev.fencing.jpa.JpaFixture.refusal;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A {@code @SecondaryTable} of a {@code @Fenced} entity is declared like its primary table: a
 * native write of it needs the entity's own token (fixed resource), or is refused as unannounced
 * (per-row resources, unprotected table); the entity's own writes of both tables pass.
 */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class SecondaryTableTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa = JpaFixture.start(db, Profile.class, Badge.class);
  }

  @AfterEach
  void reset() {
    jpa.reset();
  }

  @AfterAll
  static void stop() {
    jpa.close();
  }

  @Test
  void aNativeWriteOfTheSecondaryTableNeedsTheEntitysToken() {
    jpa.seed("profiles", new Profile("p", 1));

    try (FencingScope scope = Fencing.bind(jpa.current("not-the-profiles"))) {
      MissingFencingTokenException refusal =
          refusal(
              MissingFencingTokenException.class,
              () ->
                  jpa.sessionFactory.inTransaction(
                      s ->
                          s.createNativeMutationQuery("update profile_detail set score = 99")
                              .executeUpdate()));
      assertThat(refusal.resource()).isEqualTo("profiles");
    }
    try (FencingScope scope = Fencing.bind(jpa.current("profiles"))) {
      jpa.sessionFactory.inTransaction(
          s -> {
            Profile p = s.find(Profile.class, "p");
            p.score = 2;
            p.visits = 3;
          });
    }
    assertThat(jpa.queryLong("SELECT score FROM profile_detail")).isEqualTo(2);
    assertThat(jpa.queryLong("SELECT visits FROM profile")).isEqualTo(3);
  }

  @Test
  void aBulkWriteOfAPerRowSecondaryTableIsRefusedAndTheEntitysOwnWritesPass() {
    jpa.seed("badge:a", new Badge("a", 1));
    jpa.seed("badge:b", new Badge("b", 1));

    try (FencingScope scope = Fencing.bind(jpa.current("badge:a"))) {
      refusal(
          MissingFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s ->
                      s.createNativeMutationQuery("update badge_detail set points = 99")
                          .executeUpdate()));
      jpa.sessionFactory.inTransaction(
          s -> {
            Badge a = s.find(Badge.class, "a");
            a.points = 5; // the secondary table only
          });
      jpa.sessionFactory.inTransaction(
          s -> {
            Badge a = s.find(Badge.class, "a");
            a.points = 6;
            a.level = 7; // both tables
          });
      // an update of the primary table only leaves no announcement for the secondary one
      refusal(
          MissingFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s -> {
                    s.find(Badge.class, "a").level = 8;
                    s.flush();
                    s.createNativeMutationQuery("update badge_detail set points = 99")
                        .executeUpdate();
                  }));
    }
    assertThat(jpa.queryLong("SELECT points FROM badge_detail WHERE id = 'a'")).isEqualTo(6);
    assertThat(jpa.queryLong("SELECT points FROM badge_detail WHERE id = 'b'")).isEqualTo(1);
    assertThat(jpa.queryLong("SELECT level FROM badge WHERE id = 'a'")).isEqualTo(7);
  }
}
