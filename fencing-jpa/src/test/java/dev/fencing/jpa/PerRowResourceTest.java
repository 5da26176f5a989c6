package dev.fencing.jpa;

import static dev.fencing.jpa.JpaFixture.refusal;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code @Fenced(prefix = "account:", attribute = "number")}: each row is its own resource, so
 * holding one account's lease does not let a client write another account.
 */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class PerRowResourceTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa = JpaFixture.start(db, Account.class, Wallet.class, Vehicle.class, Truck.class);
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
  void aBulkUpdateOfAnUnprotectedPerRowTableIsRefusedWhateverIsBound() {
    jpa.seed("account:1", new Account(1, 100));
    try (FencingScope scope = Fencing.bind(jpa.current("account:1"))) {
      refusal(
          MissingFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s -> s.createMutationQuery("update Account set balance = 0").executeUpdate()));
      refusal(
          MissingFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s -> s.createNativeMutationQuery("delete from account").executeUpdate()));
      // the entity's own writes, announced by its events, still pass
      jpa.sessionFactory.inTransaction(
          s -> s.createSelectionQuery("from Account", Account.class).getSingleResult().balance = 7);
    }

    assertThat(jpa.queryLong("SELECT sum(balance) FROM account")).isEqualTo(7);
  }

  /** The same when a comment stands between the keywords and the table. */
  @Test
  void aCommentBeforeAPerRowTableDoesNotLetABulkWriteThrough() {
    jpa.seed("account:1", new Account(1, 100));
    jpa.seed("account:2", new Account(2, 100));
    try (FencingScope scope = Fencing.bind(jpa.current("account:1"))) {
      for (String sql :
          new String[] {
            "update /*x*/ account set balance = 0", "delete --x\n from account",
          }) {
        refusal(
            MissingFencingTokenException.class,
            () ->
                jpa.sessionFactory.inTransaction(
                    s -> s.createNativeMutationQuery(sql).executeUpdate()));
      }
    }

    assertThat(jpa.queryLong("SELECT sum(balance) FROM account")).isEqualTo(200);
  }

  @Test
  void anAccountIsWrittenWithItsOwnToken() {
    try (FencingScope scope = Fencing.bind(jpa.current("account:1"))) {
      jpa.sessionFactory.inTransaction(s -> s.persist(new Account(1, 100)));
    }

    assertThat(jpa.count("account")).isEqualTo(1);
  }

  @Test
  void anAccountIsNotWrittenWithAnotherAccountsToken() {
    try (FencingScope scope = Fencing.bind(jpa.current("account:2"))) {
      MissingFencingTokenException refusal =
          refusal(
              MissingFencingTokenException.class,
              () -> jpa.sessionFactory.inTransaction(s -> s.persist(new Account(1, 100))));
      assertThat(refusal.resource()).isEqualTo("account:1");
    }

    assertThat(jpa.count("account")).isZero();
  }

  @Test
  void anAccountIsNotWrittenWithItsStaleToken() {
    try (FencingScope scope = Fencing.bind(jpa.stale("account:1"))) {
      StaleFencingTokenException refusal =
          refusal(
              StaleFencingTokenException.class,
              () -> jpa.sessionFactory.inTransaction(s -> s.persist(new Account(1, 100))));
      assertThat(refusal.resource()).isEqualTo("account:1");
    }

    assertThat(jpa.count("account")).isZero();
  }

  @Test
  void updatingAnAccountReadsTheResourceFromTheEntityState() {
    Account one = new Account(1, 100);
    Account two = new Account(2, 100);
    jpa.seed("account:1", one);
    jpa.seed("account:2", two);

    try (FencingScope scope = Fencing.bind(jpa.current("account:2"))) {
      refusal(
          MissingFencingTokenException.class,
          () -> jpa.sessionFactory.inTransaction(s -> s.find(Account.class, one.id).balance = 0));
      jpa.sessionFactory.inTransaction(s -> s.find(Account.class, two.id).balance = 0);
    }

    assertThat(balanceOf(1)).isEqualTo(100);
    assertThat(balanceOf(2)).isZero();
  }

  @Test
  void aCollectionChangeIsFencedWithItsOwnersResource() {
    Account one = new Account(1, 100);
    jpa.seed("account:1", one);

    try (FencingScope scope = Fencing.bind(jpa.current("account:2"))) {
      MissingFencingTokenException refusal =
          refusal(
              MissingFencingTokenException.class,
              () ->
                  jpa.sessionFactory.inTransaction(
                      s -> s.find(Account.class, one.id).holders.add("bob")));
      assertThat(refusal.resource()).isEqualTo("account:1");
    }
    assertThat(jpa.count("account_holder")).isZero();

    try (FencingScope scope = Fencing.bind(jpa.current("account:1"))) {
      jpa.sessionFactory.inTransaction(s -> s.find(Account.class, one.id).holders.add("bob"));
    }
    assertThat(jpa.count("account_holder")).isEqualTo(1);
  }

  @Test
  void movingARowToAnotherResourceNeedsBothTokens() {
    Account account = new Account(1, 100);
    jpa.seed("account:1", account);
    Lease three = jpa.current("account:3");

    try (FencingScope scope = Fencing.bind(three)) {
      MissingFencingTokenException refusal =
          refusal(
              MissingFencingTokenException.class,
              () ->
                  jpa.sessionFactory.inTransaction(
                      s -> s.find(Account.class, account.id).number = 3));
      assertThat(refusal.resource()).isEqualTo("account:1");
    }
    assertThat(balanceOf(1)).isEqualTo(100);

    try (FencingScope scope = Fencing.bind(three, jpa.current("account:1"))) {
      jpa.sessionFactory.inTransaction(s -> s.find(Account.class, account.id).number = 3);
    }
    assertThat(balanceOf(3)).isEqualTo(100);
  }

  /**
   * A move refused for its old resource announces no row write: the bulk write that follows in the
   * same transaction, after the application caught the refusal, is judged as unannounced (refused
   * on this unprotected table) instead of using up an announcement for a row that was never
   * written. (Hibernate has marked the transaction for rollback by then; the wrapper must refuse
   * the statement anyway.)
   */
  @Test
  void aMoveRefusedForItsOldResourceLeavesNoAnnouncementForALaterBulkWrite() {
    Account account = new Account(1, 100);
    jpa.seed("account:1", account);
    Lease three = jpa.current("account:3");

    try (FencingScope scope = Fencing.bind(three)) {
      jpa.sessionFactory.inTransaction(
          s -> {
            s.find(Account.class, account.id).number = 3;
            refusal(MissingFencingTokenException.class, s::flush);
            s.clear();
            refusal(
                MissingFencingTokenException.class,
                () -> s.createNativeMutationQuery("delete from account").executeUpdate());
            s.getTransaction().setRollbackOnly();
          });
    }
    assertThat(balanceOf(1)).isEqualTo(100);
  }

  /**
   * An entity over two tables whose update writes one of them (Hibernate skips a table none of
   * whose columns changed) leaves no announcement for the other: a native write of that table later
   * in the transaction, holding one row's token, is refused (the table is not protected) instead of
   * writing every row.
   */
  @Test
  void anUpdateThatSkipsOneOfItsTablesLeavesNoAnnouncementForIt() {
    jpa.seed("vehicle:x", new Truck("x", 1));
    jpa.seed("vehicle:y", new Truck("y", 1));

    try (FencingScope scope = Fencing.bind(jpa.current("vehicle:x"))) {
      refusal(
          MissingFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s -> {
                    s.find(Truck.class, "x").mileage = 5; // a column of vehicle, none of truck
                    s.flush();
                    s.createNativeMutationQuery("update truck set load = 99").executeUpdate();
                  }));
    }
    assertThat(jpa.queryLong("SELECT load FROM truck WHERE id = 'y'")).isEqualTo(1);
    assertThat(jpa.queryLong("SELECT mileage FROM vehicle WHERE id = 'x'")).isZero();
  }

  @Test
  void severalAccountsInOneTransactionAreCheckedInOneCall() {
    long calls = jpa.checkCalls();
    long tokens = jpa.tokensChecked();

    try (FencingScope scope = Fencing.bind(jpa.current("account:1"), jpa.current("account:2"))) {
      jpa.sessionFactory.inTransaction(
          s -> {
            s.persist(new Account(1, 100));
            s.persist(new Account(2, 100));
          });
    }

    assertThat(jpa.count("account")).isEqualTo(2);
    assertThat(jpa.checkCalls() - calls).isEqualTo(1);
    assertThat(jpa.tokensChecked() - tokens).isEqualTo(2);
  }

  @Test
  void theIdentifierCanNameTheResource() {
    try (FencingScope scope = Fencing.bind(jpa.current("wallet:w1"))) {
      jpa.sessionFactory.inTransaction(s -> s.persist(new Wallet("w1", 5)));
      MissingFencingTokenException refusal =
          refusal(
              MissingFencingTokenException.class,
              () -> jpa.sessionFactory.inTransaction(s -> s.persist(new Wallet("w2", 5))));
      assertThat(refusal.resource()).isEqualTo("wallet:w2");
    }

    assertThat(jpa.queryLong("SELECT count(*) FROM wallet WHERE id = 'w1'")).isEqualTo(1);
    assertThat(jpa.count("wallet")).isEqualTo(1);
  }

  private static long balanceOf(long number) {
    return jpa.queryLong("SELECT balance FROM account WHERE number = ?", number);
  }
}
