package dev.fencing.jpa;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.testing.TestDatabaseExtension;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.hibernate.FlushMode;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.event.spi.EventType;
import org.hibernate.event.spi.PreInsertEventListener;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A {@code PreInsertEventListener} registered after fencing-jpa's runs a query: its auto-flush
 * event comes after fencing-jpa announced the insert of a per-row entity and before the insert's
 * statement, which must still find the announcement (an auto-flush that writes nothing withdraws
 * nothing). The session flushes at commit: Hibernate itself cannot auto-flush inside a write.
 */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class ListenerQueryTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final AtomicBoolean QUERY = new AtomicBoolean();
  private static final AtomicInteger QUERIED = new AtomicInteger();
  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa = JpaFixture.start(db, IdentityWallet.class);
    PreInsertEventListener reader =
        event -> {
          if (QUERY.get()) {
            QUERIED.incrementAndGet();
            event
                .getSession()
                .createNativeQuery("select 1", Integer.class)
                .addSynchronizedQuerySpace("not_a_wallet")
                .getSingleResult();
          }
          return false;
        };
    jpa.sessionFactory
        .unwrap(SessionFactoryImplementor.class)
        .getEventListenerRegistry()
        .appendListeners(EventType.PRE_INSERT, reader);
  }

  @AfterEach
  void reset() {
    QUERY.set(false);
    QUERIED.set(0);
    jpa.reset();
  }

  @AfterAll
  static void stop() {
    jpa.close();
  }

  @Test
  void aQueryInALaterListenerDoesNotWithdrawTheAnnouncementOfTheInsertAboutToRun() {
    try (FencingScope scope = Fencing.bind(jpa.current("wallet:1"))) {
      jpa.sessionFactory.inTransaction(
          s -> {
            s.setHibernateFlushMode(FlushMode.COMMIT); // the query's auto-flush flushes nothing
            QUERY.set(true);
            s.persist(new IdentityWallet(1, 5)); // IDENTITY: inserted here, not at the flush
          });
    }
    assertThat(QUERIED).hasValue(1);
    assertThat(jpa.queryLong("SELECT sum(balance) FROM identity_wallet")).isEqualTo(5);
  }
}
