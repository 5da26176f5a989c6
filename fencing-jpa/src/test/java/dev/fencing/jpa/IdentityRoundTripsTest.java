package dev.fencing.jpa;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.Lease;
import dev.fencing.testing.RoundTrips;
import dev.fencing.testing.TestDatabaseExtension;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.hibernate.Session;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 13 for Hibernate's first write: an {@code IDENTITY} insert, which Hibernate prepares for
 * generated keys, carries the check in its own round trip. A fenced transaction of such inserts
 * takes as many round trips as the same transaction of an unfenced entity. (A stale token refused
 * by the carried check: {@link IdGenerationTest}.)
 */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class IdentityRoundTripsTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa =
        JpaFixture.start(
            db,
            IdentityEntry.class,
            PlainIdentityEntry.class,
            LedgerBalance.class,
            PlainBalance.class);
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
  void aFencedIdentityTransactionTakesAsManyRoundTripsAsAnUnfencedOne() {
    // both statements prepared once before counting (Hibernate's metadata, the pool's warm-up)
    Lease lease = jpa.current("ledger");
    transaction(s -> s.persist(new PlainIdentityEntry("warm-up")));
    try (FencingScope scope = Fencing.bind(lease)) {
      transaction(s -> s.persist(new IdentityEntry("warm-up")));
    }
    long calls = jpa.checkCalls();

    try (RoundTrips trips = new RoundTrips()) {
      trips.reset();
      transaction(
          s -> {
            s.persist(new PlainIdentityEntry("a"));
            s.persist(new PlainIdentityEntry("b"));
          });
      int unfenced = trips.count();
      List<String> sentUnfenced = trips.sent();

      trips.reset();
      try (FencingScope scope = Fencing.bind(lease)) {
        transaction(
            s -> {
              s.persist(new IdentityEntry("a"));
              s.persist(new IdentityEntry("b"));
            });
      }
      int fenced = trips.count();
      List<String> sent = trips.sent();

      assertThat(fenced)
          .as("round trips, fenced %s against unfenced %s", sent, sentUnfenced)
          .isEqualTo(unfenced);
      // the check went with the first insert, before the same Sync, with pgjdbc's RETURNING
      int check = indexOf(sent, "check_one(", 0);
      int insert = indexOf(sent, "insert into identity_entry", check);
      assertThat(check).as("the check sent: %s", sent).isNotNegative();
      assertThat(insert).as("the insert after the check: %s", sent).isPositive();
      assertThat(sent.subList(check, insert)).noneMatch(m -> m.contains("Sync"));
      assertThat(sent.get(insert)).contains("RETURNING");
    }
    assertThat(jpa.checkCalls() - calls).isEqualTo(1);
    assertThat(jpa.count("identity_entry")).isEqualTo(3);
  }

  /**
   * The benchmark's Hibernate transaction in small: find an entity, change it (dirty checking
   * writes it at the flush), persist an {@code IDENTITY} entry. Once the connection has prepared
   * its statements, the fenced one sends the unfenced one's messages plus the Binds and Executes of
   * the check's fast form (a lease's token: the lock, then the read, carried by the {@code
   * IDENTITY} insert as by any other prepared statement), in as many round trips, and neither
   * parses nor describes anything.
   */
  @Test
  void aFencedFindChangePersistTransactionSendsTheUnfencedMessagesAndTheCheck() {
    Lease lease = jpa.current("ledger");
    transaction(s -> s.persist(new PlainBalance(1)));
    try (FencingScope scope = Fencing.bind(lease)) {
      transaction(s -> s.persist(new LedgerBalance(1)));
    }
    for (int i = 0; i < 10; i++) { // past pgjdbc's prepareThreshold (5) for every statement
      plainFindChangePersist();
      try (FencingScope scope = Fencing.bind(lease)) {
        fencedFindChangePersist();
      }
    }
    try (RoundTrips trips = new RoundTrips()) {
      trips.reset();
      plainFindChangePersist();
      int unfenced = trips.count();
      List<String> sentUnfenced = trips.sent();

      trips.reset();
      try (FencingScope scope = Fencing.bind(lease)) {
        fencedFindChangePersist();
      }
      int fenced = trips.count();
      List<String> sent = trips.sent();

      assertThat(fenced)
          .as("round trips, fenced %s against unfenced %s", sent, sentUnfenced)
          .isEqualTo(unfenced);
      assertThat(sent)
          .as("a steady fenced transaction parses and describes nothing")
          .noneMatch(m -> m.startsWith(" FE=> Parse") || m.startsWith(" FE=> Describe"));
      Map<String, Integer> extra = kinds(sent);
      kinds(sentUnfenced).forEach((k, n) -> extra.merge(k, -n, Integer::sum));
      extra.values().removeIf(n -> n == 0);
      assertThat(extra)
          .as("messages beyond the unfenced ones: fenced %s, unfenced %s", sent, sentUnfenced)
          .isEqualTo(Map.of("Bind", 2, "Execute", 2));
    }
  }

  private static void plainFindChangePersist() {
    transaction(
        s -> {
          s.find(PlainBalance.class, 1L).balance++;
          s.persist(new PlainIdentityEntry("entry"));
        });
  }

  private static void fencedFindChangePersist() {
    transaction(
        s -> {
          s.find(LedgerBalance.class, 1L).balance++;
          s.persist(new IdentityEntry("entry"));
        });
  }

  /** The messages by kind (Bind, Execute, Sync, ...), counted. */
  private static Map<String, Integer> kinds(List<String> sent) {
    Map<String, Integer> kinds = new TreeMap<>();
    for (String m : sent) {
      String k = m.trim().substring("FE=> ".length());
      int paren = k.indexOf('(');
      kinds.merge(paren < 0 ? k.trim() : k.substring(0, paren), 1, Integer::sum);
    }
    return kinds;
  }

  /** The index of the first message from {@code from} on that contains {@code text}, or -1. */
  private static int indexOf(List<String> sent, String text, int from) {
    for (int i = Math.max(from, 0); i < sent.size(); i++) {
      if (sent.get(i).toLowerCase(Locale.ROOT).contains(text)) {
        return i;
      }
    }
    return -1;
  }

  private static void transaction(Consumer<Session> work) {
    jpa.sessionFactory.inTransaction(work);
  }
}
