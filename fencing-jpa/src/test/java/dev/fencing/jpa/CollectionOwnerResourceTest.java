package dev.fencing.jpa;

import static dev.fencing.jpa.JpaFixture.refusal;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import org.hibernate.Session;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The collections a fenced entity owns are fenced with the resource of the owner's <em>row</em>:
 *
 * <ul>
 *   <li>a collection write is judged by the owner's row as the session loaded it, not only by the
 *       instance: a non-updatable {@code @Fenced} attribute changed in memory ({@link Plot}) let
 *       the holder of {@code plot:bob} write the element collections of alice's plot (the row keeps
 *       {@code plot:alice}); an update never writes that column, so it is judged (and remembered)
 *       by the row's resource too;
 *   <li>an element collection's or join table's own table is declared like the owner's tables: a
 *       native or bulk write of it needs the owner's token (per-row owner: refused unless the table
 *       is protected), where before it needed none; the owner's own collection writes still pass.
 * </ul>
 */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class CollectionOwnerResourceTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa = JpaFixture.start(db, Plot.class, Account.class, Document.class, Team.class, Person.class);
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
  class NonUpdatableAttribute {
    @Test
    void anotherResourcesHolderCannotWriteTheCollectionsOfARowRenamedInMemory() {
      jpa.seed("plot:alice", new Plot("p1", "alice"));

      try (FencingScope scope = Fencing.bind(jpa.current("plot:bob"))) {
        MissingFencingTokenException refusal =
            refusal(
                MissingFencingTokenException.class,
                () ->
                    jpa.sessionFactory.inTransaction(
                        s -> {
                          Plot plot = s.find(Plot.class, "p1");
                          plot.owner = "bob"; // never written: the row stays alice's
                          plot.tags.add("mallory");
                          plot.steps.add("dig");
                        }));
        assertThat(refusal.resource()).isEqualTo("plot:alice");
      }

      assertThat(jpa.count("plot_tag")).isZero();
      assertThat(jpa.count("plot_step")).isZero();
      assertThat(jpa.queryLong("SELECT count(*) FROM plot WHERE owner = 'alice'")).isEqualTo(1);
    }

    @Test
    void anUpdateIsJudgedByTheRowsResourceAndRemembersIt() {
      jpa.seed("plot:alice", new Plot("p1", "alice"));
      Session session = jpa.entityManager();
      Plot plot;
      try (FencingScope scope = Fencing.bind(jpa.current("plot:alice"))) {
        session.getTransaction().begin();
        plot = session.find(Plot.class, "p1");
        plot.owner = "bob";
        plot.size = 5; // an update of alice's row: alice's token suffices (bob's was required)
        session.getTransaction().commit();
      }
      assertThat(jpa.queryLong("SELECT size FROM plot WHERE owner = 'alice'")).isEqualTo(5);

      try (FencingScope scope = Fencing.bind(jpa.current("plot:bob"))) {
        MissingFencingTokenException refusal =
            refusal(
                MissingFencingTokenException.class,
                () -> {
                  session.getTransaction().begin();
                  plot.tags.add("mallory");
                  session.getTransaction().commit();
                });
        assertThat(refusal.resource()).isEqualTo("plot:alice");
      }
      assertThat(jpa.count("plot_tag")).isZero();
    }

    @Test
    void aZombieCannotWriteTheRowsCollections() {
      jpa.seed("plot:alice", new Plot("p1", "alice"));

      try (FencingScope scope = Fencing.bind(jpa.stale("plot:alice"))) {
        refusal(
            StaleFencingTokenException.class,
            () ->
                jpa.sessionFactory.inTransaction(
                    s -> s.find(Plot.class, "p1").steps.add("zombie")));
      }
      assertThat(jpa.count("plot_step")).isZero();
    }

    @Test
    void theRowsHolderWritesAndReordersItsCollections() {
      jpa.seed("plot:alice", new Plot("p1", "alice"));

      try (FencingScope scope = Fencing.bind(jpa.current("plot:alice"))) {
        jpa.sessionFactory.inTransaction(
            s -> {
              Plot plot = s.find(Plot.class, "p1");
              plot.steps.add("dig");
              plot.steps.add("sow");
              plot.tags.add("north");
            });
        jpa.sessionFactory.inTransaction(
            s -> {
              Plot plot = s.find(Plot.class, "p1");
              plot.steps.remove(0); // reorders the list
              plot.tags.clear();
            });
      }
      assertThat(jpa.queryLong("SELECT count(*) FROM plot_step WHERE steps = 'sow'")).isEqualTo(1);
      assertThat(jpa.count("plot_step")).isEqualTo(1);
      assertThat(jpa.count("plot_tag")).isZero();
    }
  }

  @Nested
  class CollectionTables {
    @Test
    void aNativeWriteOfAFixedResourceOwnersElementCollectionNeedsItsToken() {
      jpa.seed("docs", new Document("spec", "draft"));

      for (String sql :
          new String[] {
            "delete from document_tag",
            "update public.document_tag set tags = 'forged'",
            "insert into document_tag (document_id, tags) select id, 'forged' from document"
          }) {
        MissingFencingTokenException refusal =
            refusal(
                MissingFencingTokenException.class,
                () ->
                    jpa.sessionFactory.inTransaction(
                        s -> s.createNativeMutationQuery(sql).executeUpdate()));
        assertThat(refusal.resource()).isEqualTo("docs");
      }
      try (FencingScope scope = Fencing.bind(jpa.current("teams"))) {
        refusal(
            MissingFencingTokenException.class,
            () ->
                jpa.sessionFactory.inTransaction(
                    s -> s.createNativeMutationQuery("delete from document_tag").executeUpdate()));
      }

      assertThat(jpa.queryLong("SELECT count(*) FROM document_tag WHERE tags = 'draft'"))
          .isEqualTo(1);
      assertThat(jpa.count("document_tag")).isEqualTo(1);
    }

    @Test
    void aNativeWriteOfAJoinTableNeedsItsOwnersToken() {
      Person ada = new Person("ada");
      Team team = new Team("core");
      team.members.add(ada);
      jpa.seed("teams", ada, team);

      refusal(
          MissingFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s -> s.createNativeMutationQuery("delete from team_member").executeUpdate()));

      assertThat(jpa.count("team_member")).isEqualTo(1);
      try (FencingScope scope = Fencing.bind(jpa.current("teams"))) {
        jpa.sessionFactory.inTransaction(
            s -> s.createNativeMutationQuery("delete from team_member").executeUpdate());
      }
      assertThat(jpa.count("team_member")).isZero();
    }

    @Test
    void aNativeWriteOfAPerRowOwnersCollectionTableIsRefusedButItsOwnWritesPass() {
      Account account = new Account(7, 100);
      account.holders.add("ada");
      jpa.seed("account:7", account);

      try (FencingScope scope = Fencing.bind(jpa.current("account:7"))) {
        refusal(
            MissingFencingTokenException.class,
            () ->
                jpa.sessionFactory.inTransaction(
                    s ->
                        s.createNativeMutationQuery("delete from account_holder").executeUpdate()));
        assertThat(jpa.count("account_holder")).isEqualTo(1);

        jpa.sessionFactory.inTransaction(
            s -> {
              Account a = s.find(Account.class, account.id);
              a.holders.add("bob");
              a.holders.add("cy");
              a.holders.remove("ada");
            });
        assertThat(jpa.count("account_holder")).isEqualTo(2);
        jpa.sessionFactory.inStatelessTransaction(
            s -> {
              Account a = s.get(Account.class, account.id);
              s.fetch(a.holders);
              a.holders.add("dee");
              s.update(a); // recreates the collection: a delete and three inserts
            });
        assertThat(jpa.count("account_holder")).isEqualTo(3);
        jpa.sessionFactory.inTransaction(s -> s.remove(s.find(Account.class, account.id)));
      }

      assertThat(jpa.count("account_holder")).isZero();
      assertThat(jpa.count("account")).isZero();
    }
  }
}
