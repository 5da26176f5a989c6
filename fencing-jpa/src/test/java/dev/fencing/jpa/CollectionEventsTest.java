package dev.fencing.jpa;

import static dev.fencing.jpa.JpaFixture.refusal;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Changes of collections only: Hibernate fires no entity update for them, only collection events,
 * so a missing token is caught there (with no token bound the DataSource alone would let them
 * through).
 */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class CollectionEventsTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa = JpaFixture.start(db, Document.class, Team.class, Person.class);
  }

  @AfterEach
  void reset() {
    jpa.reset();
  }

  @AfterAll
  static void stop() {
    jpa.close();
  }

  @Nested
  class ElementCollection {
    private final Document document = new Document("spec", "draft");

    @Test
    void addingATagWithTheCurrentTokenIsWritten() {
      jpa.seed("docs", document);

      try (FencingScope scope = Fencing.bind(jpa.current("docs"))) {
        jpa.sessionFactory.inTransaction(
            s -> s.find(Document.class, document.id).tags.add("final"));
      }

      assertThat(jpa.count("document_tag")).isEqualTo(2);
    }

    @Test
    void addingATagWithAStaleTokenIsRefused() {
      jpa.seed("docs", document);

      try (FencingScope scope = Fencing.bind(jpa.stale("docs"))) {
        refusal(
            StaleFencingTokenException.class,
            () ->
                jpa.sessionFactory.inTransaction(
                    s -> s.find(Document.class, document.id).tags.add("final")));
      }

      assertThat(jpa.count("document_tag")).isEqualTo(1);
    }

    @Test
    void addingATagWithNoTokenIsRefused() {
      jpa.seed("docs", document);

      MissingFencingTokenException refusal =
          refusal(
              MissingFencingTokenException.class,
              () ->
                  jpa.sessionFactory.inTransaction(
                      s -> s.find(Document.class, document.id).tags.add("final")));

      assertThat(refusal.resource()).isEqualTo("docs");
      assertThat(refusal.getMessage()).contains(Document.class.getName());
      assertThat(jpa.count("document_tag")).isEqualTo(1);
    }

    @Test // replacing the collection also makes the owner dirty: both events refuse
    void replacingTheCollectionWithNoTokenIsRefused() {
      jpa.seed("docs", document);

      refusal(
          MissingFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s -> s.find(Document.class, document.id).tags = new HashSet<>(Set.of("x"))));

      assertThat(jpa.queryLong("SELECT count(*) FROM document_tag WHERE tags = 'draft'"))
          .isEqualTo(1);
      assertThat(jpa.count("document_tag")).isEqualTo(1);
    }

    @Test
    void clearingTheCollectionWithNoTokenIsRefused() {
      jpa.seed("docs", document);

      refusal(
          MissingFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s -> s.find(Document.class, document.id).tags.clear()));

      assertThat(jpa.count("document_tag")).isEqualTo(1);
    }
  }

  @Nested
  class ManyToManyJoinTable {
    private final Person ada = new Person("ada");
    private final Person bob = new Person("bob");
    private final Team team = new Team("core");

    private void seed() {
      team.members.add(ada);
      jpa.seed("teams", ada, bob, team);
    }

    @Test
    void addingAMemberWithTheCurrentTokenIsWritten() {
      seed();

      try (FencingScope scope = Fencing.bind(jpa.current("teams"))) {
        jpa.sessionFactory.inTransaction(
            s -> s.find(Team.class, team.id).members.add(s.find(Person.class, bob.id)));
      }

      assertThat(jpa.count("team_member")).isEqualTo(2);
    }

    @Test
    void addingAMemberWithAStaleTokenIsRefused() {
      seed();

      try (FencingScope scope = Fencing.bind(jpa.stale("teams"))) {
        refusal(
            StaleFencingTokenException.class,
            () ->
                jpa.sessionFactory.inTransaction(
                    s -> s.find(Team.class, team.id).members.add(s.find(Person.class, bob.id))));
      }

      assertThat(jpa.count("team_member")).isEqualTo(1);
    }

    @Test
    void addingAMemberWithNoTokenIsRefused() {
      seed();

      refusal(
          MissingFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s -> s.find(Team.class, team.id).members.add(s.find(Person.class, bob.id))));

      assertThat(jpa.count("team_member")).isEqualTo(1);
    }

    @Test
    void removingAMemberWithNoTokenIsRefused() {
      seed();

      refusal(
          MissingFencingTokenException.class,
          () -> jpa.sessionFactory.inTransaction(s -> s.find(Team.class, team.id).members.clear()));

      assertThat(jpa.count("team_member")).isEqualTo(1);
    }

    @Test
    void removingTheTeamWithNoTokenRemovesNeitherItNorItsJoinRows() {
      // Hibernate deletes the join rows before the team's own delete event fires.
      seed();

      refusal(
          MissingFencingTokenException.class,
          () -> jpa.sessionFactory.inTransaction(s -> s.remove(s.find(Team.class, team.id))));

      assertThat(jpa.count("team")).isEqualTo(1);
      assertThat(jpa.count("team_member")).isEqualTo(1);
    }

    @Test
    void removingTheTeamWithTheCurrentTokenRemovesItsJoinRowsButNotThePeople() {
      seed();

      try (FencingScope scope = Fencing.bind(jpa.current("teams"))) {
        jpa.sessionFactory.inTransaction(s -> s.remove(s.find(Team.class, team.id)));
      }

      assertThat(jpa.count("team")).isZero();
      assertThat(jpa.count("team_member")).isZero();
      assertThat(jpa.count("person")).isEqualTo(2);
    }

    @Test
    void peopleAreNotFencedAndAreWrittenWithoutAToken() {
      jpa.sessionFactory.inTransaction(s -> s.persist(new Person("carol")));

      assertThat(jpa.count("person")).isEqualTo(1);
    }
  }
}
