package dev.fencing.jpa;

import static dev.fencing.jpa.JpaFixture.refusal;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.event.spi.EventType;
import org.hibernate.event.spi.PreUpdateEventListener;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Another {@code PreUpdateEventListener}, registered after fencing-jpa's, vetoes an update of a
 * per-row entity: Hibernate skips the write (and its post-update event). The announcement
 * fencing-jpa made for that write must not outlive it: a native write of the table later in the
 * same transaction, holding one row's token, is refused (the table is not protected) instead of
 * writing every row.
 */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class VetoingListenerTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final AtomicBoolean VETO = new AtomicBoolean();
  private static final AtomicInteger VETOED = new AtomicInteger();
  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa = JpaFixture.start(db, Account.class);
    PreUpdateEventListener vetoer =
        event -> {
          if (VETO.get()) {
            VETOED.incrementAndGet();
            return true;
          }
          return false;
        };
    jpa.sessionFactory
        .unwrap(SessionFactoryImplementor.class)
        .getEventListenerRegistry()
        .appendListeners(EventType.PRE_UPDATE, vetoer);
  }

  @AfterEach
  void reset() {
    VETO.set(false);
    VETOED.set(0);
    jpa.reset();
  }

  @AfterAll
  static void stop() {
    jpa.close();
  }

  @Test
  void aVetoedUpdateLeavesNoAnnouncementForALaterNativeWrite() {
    jpa.seed("account:1", new Account(1, 100));
    jpa.seed("account:2", new Account(2, 100));

    try (FencingScope scope = Fencing.bind(jpa.current("account:1"))) {
      refusal(
          MissingFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s -> {
                    s.createSelectionQuery("from Account where number = 1", Account.class)
                            .getSingleResult()
                            .balance =
                        5;
                    VETO.set(true);
                    s.flush(); // the update is vetoed: not written
                    VETO.set(false);
                    s.doWork( // JDBC: no auto-flush that would write the entity again
                        c -> {
                          try (Statement st = c.createStatement()) {
                            st.executeUpdate("update account set balance = 0");
                          }
                        });
                  }));
    }
    assertThat(VETOED).hasValue(1);
    assertThat(jpa.queryLong("SELECT sum(balance) FROM account")).isEqualTo(200);
  }

  /** The same when the vetoed update is flushed by the native query's own auto-flush. */
  @Test
  void anUpdateVetoedInTheAutoFlushOfANativeQueryLeavesNoAnnouncementForIt() {
    jpa.seed("account:1", new Account(1, 100));
    jpa.seed("account:2", new Account(2, 100));

    try (FencingScope scope = Fencing.bind(jpa.current("account:1"))) {
      refusal(
          MissingFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s -> {
                    s.createSelectionQuery("from Account where number = 1", Account.class)
                            .getSingleResult()
                            .balance =
                        5;
                    VETO.set(true);
                    s.createNativeQuery("update account set balance = 0", Object.class)
                        .addSynchronizedEntityClass(Account.class)
                        .executeUpdate();
                  }));
    }
    assertThat(VETOED)
        .as("vetoed at each flush attempt (the entity stays dirty)")
        .hasPositiveValue();
    assertThat(jpa.queryLong("SELECT sum(balance) FROM account")).isEqualTo(200);
  }

  /** Without a veto the entity's own write passes, and so does the next one: nothing changed. */
  @Test
  void updatesThatAreNotVetoedAreWritten() {
    jpa.seed("account:1", new Account(1, 100));

    try (FencingScope scope = Fencing.bind(jpa.current("account:1"))) {
      jpa.sessionFactory.inTransaction(
          s -> {
            Account a =
                s.createSelectionQuery("from Account where number = 1", Account.class)
                    .getSingleResult();
            a.balance = 5;
            VETO.set(true);
            s.flush();
            VETO.set(false);
            a.balance = 7;
            s.flush();
          });
    }
    assertThat(VETOED).hasValue(1);
    assertThat(jpa.queryLong("SELECT sum(balance) FROM account")).isEqualTo(7);
  }
}
