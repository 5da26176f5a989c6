package dev.fencing.jpa;

import static dev.fencing.jpa.JpaFixture.refusal;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.FencingToken;
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
 * A {@code StatelessSession} loads no state: its update, delete and upsert of a per-row entity
 * write the row its identifier names, whatever the instance's {@code @Fenced} attribute says. That
 * row is judged as the database holds it: a detached {@link Account} of {@code account:1} whose
 * number was changed to 2 is not updated, deleted or upserted with {@code account:2}'s token alone
 * (before, each of these three writes committed: a client holding one account's lease rewrote or
 * deleted another account's row), nor with a zombie's stale token for {@code account:1}; with both
 * current tokens the move passes.
 */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class StatelessPerRowTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa = JpaFixture.start(db, Account.class, Wallet.class);
  }

  @AfterEach
  void reset() {
    jpa.reset();
  }

  @AfterAll
  static void stop() {
    jpa.close();
  }

  /** A seeded account 1, detached and renumbered 2. */
  private static Account accountOneRenumberedTwo() {
    Account account = new Account(1, 100);
    jpa.seed("account:1", account);
    account.number = 2;
    account.balance = 0;
    return account;
  }

  @Test
  void anUpdateNeedsTheTokenOfTheRowsResourceInTheDatabase() {
    Account account = accountOneRenumberedTwo();

    try (FencingScope scope = Fencing.bind(jpa.current("account:2"))) {
      MissingFencingTokenException refusal =
          refusal(
              MissingFencingTokenException.class,
              () -> jpa.sessionFactory.inStatelessTransaction(s -> s.update(account)));
      assertThat(refusal.resource()).isEqualTo("account:1");
    }

    assertThat(jpa.queryLong("SELECT number FROM account")).isEqualTo(1);
    assertThat(jpa.queryLong("SELECT balance FROM account")).isEqualTo(100);
  }

  @Test
  void aDeleteNeedsTheTokenOfTheRowsResourceInTheDatabase() {
    Account account = accountOneRenumberedTwo();

    try (FencingScope scope = Fencing.bind(jpa.current("account:2"))) {
      MissingFencingTokenException refusal =
          refusal(
              MissingFencingTokenException.class,
              () -> jpa.sessionFactory.inStatelessTransaction(s -> s.delete(account)));
      assertThat(refusal.resource()).isEqualTo("account:1");
    }

    assertThat(jpa.count("account")).isEqualTo(1);
  }

  @Test
  void anUpsertOfAnExistingRowNeedsTheTokenOfItsResourceInTheDatabase() {
    Account account = accountOneRenumberedTwo();

    try (FencingScope scope = Fencing.bind(jpa.current("account:2"))) {
      MissingFencingTokenException refusal =
          refusal(
              MissingFencingTokenException.class,
              () -> jpa.sessionFactory.inStatelessTransaction(s -> s.upsert(account)));
      assertThat(refusal.resource()).isEqualTo("account:1");
    }

    assertThat(jpa.queryLong("SELECT number FROM account")).isEqualTo(1);
    assertThat(jpa.queryLong("SELECT balance FROM account")).isEqualTo(100);
  }

  /** The zombie of the row's resource: its stale token is refused, with nothing written. */
  @Test
  void aZombieOfTheRowsResourceDeletesNothing() {
    Account account = accountOneRenumberedTwo();
    FencingToken stale = jpa.stale("account:1");

    try (FencingScope scope = Fencing.bind(jpa.current("account:2").token(), stale)) {
      StaleFencingTokenException refusal =
          refusal(
              StaleFencingTokenException.class,
              () -> jpa.sessionFactory.inStatelessTransaction(s -> s.delete(account)));
      assertThat(refusal.resource()).isEqualTo("account:1");
    }

    assertThat(jpa.count("account")).isEqualTo(1);
    assertThat(jpa.rejections(stale)).isEqualTo(1);
  }

  @Test
  void withBothTokensTheRowMoves() {
    Account account = accountOneRenumberedTwo();
    Lease two = jpa.current("account:2");

    try (FencingScope scope = Fencing.bind(two, jpa.current("account:1"))) {
      jpa.sessionFactory.inStatelessTransaction(s -> s.update(account));
    }

    assertThat(jpa.queryLong("SELECT number FROM account")).isEqualTo(2);
    assertThat(jpa.queryLong("SELECT balance FROM account")).isZero();
  }

  /** The current holder's own writes pass as before: the row's resource is the instance's. */
  @Test
  void theCurrentHolderWritesItsOwnRow() {
    Account account = new Account(1, 100);
    jpa.seed("account:1", account);
    account.balance = 7;

    try (FencingScope scope = Fencing.bind(jpa.current("account:1"))) {
      jpa.sessionFactory.inStatelessTransaction(s -> s.update(account));
      assertThat(jpa.queryLong("SELECT balance FROM account")).isEqualTo(7);
      account.balance = 8;
      jpa.sessionFactory.inStatelessTransaction(s -> s.upsert(account));
      assertThat(jpa.queryLong("SELECT balance FROM account")).isEqualTo(8);
      jpa.sessionFactory.inStatelessTransaction(s -> s.delete(account));
    }

    assertThat(jpa.count("account")).isZero();
  }

  /** An upsert of a new row (none in the database) needs the instance's resource only. */
  @Test
  void anUpsertOfANewRowNeedsItsOwnResource() {
    Account account = new Account(5, 50);
    account.id = 1000L;

    try (FencingScope scope = Fencing.bind(jpa.current("account:5"))) {
      jpa.sessionFactory.inStatelessTransaction(s -> s.upsert(account));
    }

    assertThat(jpa.queryLong("SELECT number FROM account WHERE id = 1000")).isEqualTo(5);
  }

  /** An identifier naming the resource names the row written: no other row to judge. */
  @Test
  void anIdentifierResourceIsTheRowsResource() {
    Wallet wallet = new Wallet("w1", 5);
    jpa.seed("wallet:w1", wallet);
    wallet.balance = 9;

    try (FencingScope scope = Fencing.bind(jpa.current("wallet:w1"))) {
      jpa.sessionFactory.inStatelessTransaction(s -> s.update(wallet));
    }

    assertThat(jpa.queryLong("SELECT balance FROM wallet")).isEqualTo(9);
  }
}
