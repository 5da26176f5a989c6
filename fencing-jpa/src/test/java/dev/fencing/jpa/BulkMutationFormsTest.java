package dev.fencing.jpa;

import static dev.fencing.jpa.JpaFixture.refusal;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import jakarta.persistence.criteria.CriteriaDelete;
import jakarta.persistence.criteria.CriteriaUpdate;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.hibernate.Session;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Mutation queries in the forms Hibernate turns into statements of its own — HQL on a {@code
 * JOINED} hierarchy (one statement per table, in CTEs), HQL {@code insert ... select}, criteria
 * update and delete — with another resource's token bound: each is refused before it writes, for a
 * fixed resource and for per-row resources alike (attack of 2026-12-03, held).
 */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class BulkMutationFormsTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa = JpaFixture.start(db, Shed.class, ToolShed.class, LedgerEntry.class, Account.class);
  }

  @BeforeEach
  void seed() {
    ToolShed shed = new ToolShed();
    shed.id = 1;
    jpa.seed("sheds", shed);
    jpa.seed("ledger", new LedgerEntry("rent", 5));
    jpa.seed("account:1", new Account(1, 10));
  }

  @AfterEach
  void reset() {
    jpa.reset();
  }

  @AfterAll
  static void stop() {
    jpa.close();
  }

  static Stream<Arguments> forms() {
    return Stream.of(
        form(
            "JOINED update",
            s ->
                s.createMutationQuery("update ToolShed set name = 'x', tools = 3").executeUpdate()),
        form("JOINED delete", s -> s.createMutationQuery("delete from ToolShed").executeUpdate()),
        form(
            "JOINED insert",
            s ->
                s.createMutationQuery(
                        "insert into ToolShed (id, name, size, tools) values (7, 'n', 1, 2)")
                    .executeUpdate()),
        form(
            "insert select, one resource",
            s ->
                s.createMutationQuery(
                        "insert into LedgerEntry (text, amount)"
                            + " select e.text, e.amount from LedgerEntry e")
                    .executeUpdate()),
        form(
            "insert select, per-row resources",
            s ->
                s.createMutationQuery(
                        "insert into Account (number, balance)"
                            + " select a.number + 100, a.balance from Account a")
                    .executeUpdate()),
        form(
            "criteria update",
            s -> {
              CriteriaUpdate<LedgerEntry> update =
                  s.getCriteriaBuilder().createCriteriaUpdate(LedgerEntry.class);
              update.from(LedgerEntry.class);
              update.set("amount", 0L);
              s.createMutationQuery(update).executeUpdate();
            }),
        form(
            "criteria delete",
            s -> {
              CriteriaDelete<LedgerEntry> delete =
                  s.getCriteriaBuilder().createCriteriaDelete(LedgerEntry.class);
              delete.from(LedgerEntry.class);
              s.createMutationQuery(delete).executeUpdate();
            }));
  }

  private static Arguments form(String name, Consumer<Session> work) {
    return Arguments.of(name, work);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("forms")
  void anotherResourcesTokenWritesNothing(String name, Consumer<Session> work) {
    try (FencingScope scope = Fencing.bind(jpa.current("other"))) {
      refusal(MissingFencingTokenException.class, () -> jpa.sessionFactory.inTransaction(work));
    }

    assertThat(jpa.count("shed")).isEqualTo(1);
    assertThat(jpa.count("tool_shed")).isEqualTo(1);
    assertThat(jpa.queryLong("SELECT count(*) FROM shed WHERE name = ''")).isEqualTo(1);
    assertThat(jpa.queryLong("SELECT sum(amount) FROM ledger_entry")).isEqualTo(5);
    assertThat(jpa.count("ledger_entry")).isEqualTo(1);
    assertThat(jpa.count("account")).isEqualTo(1);
  }
}
