package dev.fencing.jpa;

import static dev.fencing.jpa.JpaFixture.refusal;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.LeaseLostException;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import jakarta.persistence.EntityManager;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A long-lived EntityManager whose holder was fenced off between two transactions: its next flush
 * is refused by PostgreSQL, and the newer holder's write stands.
 */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class ZombieEntityManagerTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa = JpaFixture.start(db, LedgerEntry.class);
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
  void theZombiesFlushIsRefusedAfterANewerHolderAcquired() {
    LedgerEntry seeded = new LedgerEntry("balance", 100);
    jpa.seed("ledger", seeded);

    EntityManager zombie = jpa.entityManager();
    // The zombie holds the lease and writes; then it pauses past its lease.
    FencingToken zombieToken;
    try (Lease lease = jpa.zombieLease("ledger");
        FencingScope scope = Fencing.bind(lease.token())) {
      zombieToken = lease.token();
      zombie.getTransaction().begin();
      zombie.find(LedgerEntry.class, seeded.id).amount = 90;
      zombie.getTransaction().commit();
    }

    // Its lease expired (released here); a newer holder acquires and writes.
    try (FencingScope scope = Fencing.bind(jpa.current("ledger"))) {
      jpa.sessionFactory.inTransaction(s -> s.find(LedgerEntry.class, seeded.id).amount = 50);
    }

    // The zombie wakes up and carries on with its old token.
    try (FencingScope scope = Fencing.bind(zombieToken)) {
      zombie.getTransaction().begin();
      zombie.find(LedgerEntry.class, seeded.id).amount = 80;
      StaleFencingTokenException refusal =
          refusal(StaleFencingTokenException.class, zombie.getTransaction()::commit);
      assertThat(refusal.presentedToken()).isEqualTo(zombieToken.value());
      assertThat(refusal.maxSeen()).isGreaterThan(zombieToken.value());
    }
    assertThat(jpa.rejections(zombieToken)).isEqualTo(1);

    assertThat(jpa.queryLong("SELECT amount FROM ledger_entry")).isEqualTo(50);
  }

  @Test
  void aZombieStillBindingItsLostLeaseIsRefusedBeforeReachingTheDatabase() {
    LedgerEntry seeded = new LedgerEntry("balance", 100);
    jpa.seed("ledger", seeded);
    Lease lease = jpa.zombieLease("ledger");
    lease.close(); // released (as if expired): the client knows it is lost

    EntityManager zombie = jpa.entityManager();
    try (FencingScope scope = Fencing.bind(lease)) {
      zombie.getTransaction().begin();
      zombie.find(LedgerEntry.class, seeded.id).amount = 80;
      refusal(LeaseLostException.class, zombie.getTransaction()::commit);
    }

    assertThat(jpa.queryLong("SELECT amount FROM ledger_entry")).isEqualTo(100);
  }
}
