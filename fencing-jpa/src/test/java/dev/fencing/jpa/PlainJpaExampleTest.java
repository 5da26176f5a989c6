package dev.fencing.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingExceptions;
import dev.fencing.jdbc.FencingRefusedException;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.Persistence;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * How to fence plain JPA: the persistence unit {@code ledger} of {@code
 * src/test/resources/META-INF/persistence.xml}, a HikariCP pool wrapped in a {@link
 * FencedDataSource}, and a lease bound around each transaction. fencing-jpa on the classpath does
 * the rest for every {@link Fenced} entity ({@link LedgerEntry} here).
 */
class PlainJpaExampleTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final Duration TTL = Duration.ofSeconds(30);
  private static final Duration WAIT = Duration.ofSeconds(5);

  @Test
  @SuppressWarnings("try") // the scope is opened for its effect on the thread
  void fencedLedgerWithPlainJpa() throws Exception {
    JpaFixture.migrate(db); // once, at deployment

    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(db.jdbcUrl());
    config.setUsername(db.user());
    config.setPassword(db.password());

    try (HikariDataSource pool = new HikariDataSource(config);
        // Hibernate's connections come from the fenced pool: each transaction's first write has
        // PostgreSQL check the tokens bound on the writing thread.
        EntityManagerFactory emf =
            Persistence.createEntityManagerFactory(
                "ledger",
                Map.of("jakarta.persistence.nonJtaDataSource", FencedDataSource.wrap(pool)));
        LeaseClient worker1 = LeaseClient.builder(pool).holder("worker-1").build();
        LeaseClient worker2 = LeaseClient.builder(pool).holder("worker-2").build()) {

      // Worker 1 holds the lease and writes: bind the lease for the whole transaction, commit
      // included (the flush happens at commit).
      FencingToken worker1Token;
      try (Lease lease = worker1.acquire("ledger", TTL, WAIT);
          FencingScope scope = Fencing.bind(lease);
          EntityManager em = emf.createEntityManager()) {
        worker1Token = lease.token();
        em.getTransaction().begin();
        em.persist(new LedgerEntry("opening balance", 100));
        em.getTransaction().commit();
      }

      // Worker 1's lease runs out (released here), worker 2 acquires and writes.
      try (Lease lease = worker2.acquire("ledger", TTL, WAIT);
          FencingScope scope = Fencing.bind(lease);
          EntityManager em = emf.createEntityManager()) {
        em.getTransaction().begin();
        em.persist(new LedgerEntry("deposit", 50));
        em.getTransaction().commit();
      }

      // Worker 1 wakes up from a long pause and writes with its old token: refused, nothing
      // written. FencingExceptions.find tells a refusal from any other failure.
      try (FencingScope scope = Fencing.bind(worker1Token);
          EntityManager em = emf.createEntityManager()) {
        em.getTransaction().begin();
        em.persist(new LedgerEntry("withdrawal", -70));
        Throwable failure = catchThrowable(em.getTransaction()::commit);

        FencingRefusedException refusal = FencingExceptions.find(failure).orElseThrow();
        assertThat(refusal instanceof StaleFencingTokenException).isTrue();
        assertThat(refusal.resource()).isEqualTo("ledger");
      }

      try (EntityManager em = emf.createEntityManager()) {
        assertThat(
                em.createQuery("select e.text from LedgerEntry e order by e.id", String.class)
                    .getResultList())
            .containsExactly("opening balance", "deposit");
      }
    }
  }
}
