package dev.fencing.jpa;

import static dev.fencing.jpa.JpaFixture.refusal;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.hibernate.SharedSessionContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * JDBC batching of a per-row entity: Hibernate completes each entity's write (and {@link
 * FencingEventMonitor} withdraws its announcement) when the row is added to the batch, before the
 * batch runs at the flush. The row's announcement is used up when the row is added ({@code
 * addBatch}), so batched rows are accepted and nothing is left for a native write after the flush.
 */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class PerRowBatchingTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final int ROWS = 12;

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa =
        JpaFixture.start(
            db,
            Map.of(
                "hibernate.jdbc.batch_size", "5",
                "hibernate.order_updates", "true",
                "hibernate.generate_statistics", "true"),
            Account.class);
  }

  @AfterEach
  void reset() {
    jpa.reset();
    jpa.sessionFactory.getStatistics().clear();
  }

  @AfterAll
  static void stop() {
    jpa.close();
  }

  private static FencingScope bindAll() {
    List<FencingToken> tokens = new ArrayList<>();
    for (int i = 1; i <= ROWS; i++) {
      tokens.add(jpa.current("account:" + i).token());
    }
    return Fencing.bind(tokens.toArray(FencingToken[]::new));
  }

  private static List<Account> accounts(SharedSessionContract s) {
    return s.createSelectionQuery("from Account order by number", Account.class).getResultList();
  }

  private static void nativeWrite(org.hibernate.Session s) {
    s.doWork( // JDBC: no auto-flush
        c -> {
          try (Statement st = c.createStatement()) {
            st.executeUpdate("update account set balance = 0");
          }
        });
  }

  @Test
  void batchedPerRowInsertsUpdatesAndDeletesAreAcceptedAndLeaveNothingBehind() {
    try (FencingScope scope = bindAll()) {
      jpa.sessionFactory.inTransaction(
          s -> {
            for (int i = 1; i <= ROWS; i++) {
              s.persist(new Account(i, 100));
            }
          });
      assertThat(jpa.count("account")).isEqualTo(ROWS);
      assertThat(jpa.sessionFactory.getStatistics().getPrepareStatementCount())
          .as("the inserts were batched: a statement per batch, not per row")
          .isLessThan(ROWS);

      refusal(
          MissingFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s -> {
                    accounts(s).forEach(a -> a.balance = 7);
                    s.flush(); // the batched updates run here, after every entity completed
                    nativeWrite(s); // nothing of the batch's announcements may be left for it
                  }));
      assertThat(jpa.queryLong("SELECT sum(balance) FROM account")).isEqualTo(100L * ROWS);

      jpa.sessionFactory.inTransaction(s -> accounts(s).forEach(a -> a.balance = 7));
      assertThat(jpa.queryLong("SELECT sum(balance) FROM account")).isEqualTo(7L * ROWS);

      refusal(
          MissingFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s -> {
                    accounts(s).forEach(s::remove);
                    s.flush();
                    nativeWrite(s);
                  }));
      assertThat(jpa.count("account")).isEqualTo(ROWS);

      jpa.sessionFactory.inTransaction(s -> accounts(s).forEach(s::remove));
    }
    assertThat(jpa.count("account")).isZero();
  }

  @Test
  void batchedStatelessPerRowInsertsAreAcceptedAndLeaveNothingBehind() {
    List<Account> accounts = new ArrayList<>();
    for (int i = 1; i <= ROWS; i++) {
      accounts.add(new Account(i, 100));
    }
    try (FencingScope scope = bindAll()) {
      refusal(
          MissingFencingTokenException.class,
          () ->
              jpa.sessionFactory.inStatelessTransaction(
                  s -> {
                    s.insertMultiple(accounts); // one batch execution after the last complete
                    s.createNativeMutationQuery("update account set balance = 0").executeUpdate();
                  }));
      assertThat(jpa.count("account")).isZero();

      List<Account> again = new ArrayList<>();
      for (int i = 1; i <= ROWS; i++) {
        again.add(new Account(i, 100));
      }
      jpa.sessionFactory.inStatelessTransaction(s -> s.insertMultiple(again));
    }
    assertThat(jpa.queryLong("SELECT sum(balance) FROM account")).isEqualTo(100L * ROWS);
  }

  /** A plain {@code Statement}'s batch is a native write like any other: no entity announced it. */
  @Test
  void aNativeStatementBatchOfThePerRowTableIsRefused() {
    jpa.seed("account:1", new Account(1, 100));
    jpa.seed("account:2", new Account(2, 100));

    try (FencingScope scope = Fencing.bind(jpa.current("account:1"))) {
      refusal(
          MissingFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s ->
                      s.doWork(
                          c -> {
                            try (Statement st = c.createStatement()) {
                              st.addBatch("update account set balance = 0");
                              st.executeBatch();
                            }
                          })));
    }
    assertThat(jpa.queryLong("SELECT sum(balance) FROM account")).isEqualTo(200);
  }
}
