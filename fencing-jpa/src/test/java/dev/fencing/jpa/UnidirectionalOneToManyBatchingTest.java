package dev.fencing.jpa;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.jpa.UnidirectionalOneToManyTest.Coop;
import dev.fencing.jpa.UnidirectionalOneToManyTest.Hen;
import dev.fencing.testing.TestDatabaseExtension;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link UnidirectionalOneToManyTest}'s element keys under JDBC batching: each row's statement is
 * judged when it is added to the batch, inside the collection's write, so the holder's pass and
 * nothing is left announced for a native write after them; a zombie's batch writes nothing.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class UnidirectionalOneToManyBatchingTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa = JpaFixture.start(db, Map.of("hibernate.jdbc.batch_size", "5"), Coop.class, Hen.class);
  }

  @AfterEach
  void reset() {
    jpa.reset();
  }

  @AfterAll
  static void stop() {
    jpa.close();
  }

  private static Coop coopWithHens() {
    Coop coop = new Coop(1, "a");
    for (long id = 1; id <= 3; id++) {
      coop.hens.add(new Hen(id, "a"));
    }
    return coop;
  }

  @Test
  void theHoldersBatchedKeysPassAndLeaveNothingForANativeWrite() {
    try (FencingScope scope = Fencing.bind(jpa.current("coop:a"))) {
      MissingFencingTokenException refusal =
          JpaFixture.refusal(
              MissingFencingTokenException.class,
              () ->
                  jpa.sessionFactory.inTransaction(
                      s -> {
                        s.persist(coopWithHens());
                        s.flush();
                        s.createNativeMutationQuery("UPDATE hen SET owner = 'b'").executeUpdate();
                      }));
      assertThat(refusal.getMessage()).contains("a bulk or native write to table hen");
      assertThat(jpa.count("hen")).isZero();

      jpa.sessionFactory.inTransaction(s -> s.persist(coopWithHens()));
    }
    assertThat(jpa.queryLong("SELECT count(*) FROM hen WHERE coop_id = 1 AND owner = 'a'"))
        .isEqualTo(3);
  }

  @Test
  void aZombiesBatchedKeysWriteNothing() {
    jpa.seed("coop:a", new Coop(1, "a"), new Hen(1, "a"), new Hen(2, "a"));
    try (FencingScope scope = Fencing.bind(jpa.stale("coop:a"))) {
      JpaFixture.refusal(
          StaleFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s -> {
                    Coop coop = s.find(Coop.class, 1L);
                    coop.hens.add(s.find(Hen.class, 1L));
                    coop.hens.add(s.find(Hen.class, 2L));
                  }));
    }
    assertThat(jpa.queryLong("SELECT count(*) FROM hen WHERE coop_id IS NOT NULL")).isZero();
  }
}
