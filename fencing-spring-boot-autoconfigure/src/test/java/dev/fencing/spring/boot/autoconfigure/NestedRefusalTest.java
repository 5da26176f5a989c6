package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingExceptions;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.testing.TestDatabase;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * {@code Propagation.NESTED} after a refusal: the inner write's refusal rolls the whole database
 * transaction back, so the rollback to the savepoint fails; its exception now carries the refusal
 * ({@link FencingExceptions#find}), and an application that catches it and writes on in the outer
 * transaction is refused too (the connection keeps the transaction failed until {@code
 * rollback()}): neither the outer write before nor the one after commits.
 */
class NestedRefusalTest {
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  DataSourceAutoConfiguration.class,
                  JdbcTemplateAutoConfiguration.class,
                  DataSourceTransactionManagerAutoConfiguration.class,
                  FencingAutoConfiguration.class));

  @Test
  void aCaughtNestedRefusalLeavesNothingOfTheOuterTransactionCommitted() throws Exception {
    try (TestDatabase db = TestDatabase.create("nested_refusal")) {
      PerClassDatabase.execute(db, "CREATE TABLE nested_entry (text text NOT NULL)");
      runner
          .withPropertyValues(PerClassDatabase.properties(db))
          .run(
              context -> {
                assertThat(context).hasNotFailed();
                JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
                PlatformTransactionManager manager =
                    context.getBean(PlatformTransactionManager.class);
                LeaseClient leases = context.getBean(LeaseClient.class);
                TransactionTemplate nested = new TransactionTemplate(manager);
                nested.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
                AtomicReference<Throwable> inner = new AtomicReference<>();
                AtomicReference<Throwable> after = new AtomicReference<>();
                try (Superseded zombie = Superseded.take(leases, "nested")) {
                  FencingToken stale = zombie.stale();
                  Throwable outer =
                      catchThrowable(
                          () ->
                              new TransactionTemplate(manager)
                                  .executeWithoutResult(
                                      status -> {
                                        jdbc.update("INSERT INTO nested_entry VALUES ('W1')");
                                        try (FencingScope scope = Fencing.bind(stale)) {
                                          inner.set(
                                              catchThrowable(
                                                  () ->
                                                      nested.executeWithoutResult(
                                                          s ->
                                                              jdbc.update(
                                                                  "INSERT INTO nested_entry"
                                                                      + " VALUES ('W2')"))));
                                        }
                                        // the application carries on in the outer transaction
                                        after.set(
                                            catchThrowable(
                                                () ->
                                                    jdbc.update(
                                                        "INSERT INTO nested_entry"
                                                            + " VALUES ('W3')")));
                                      }));
                  assertThat(inner.get()).isNotNull();
                  assertThat(FencingExceptions.find(inner.get()))
                      .get()
                      .isInstanceOf(StaleFencingTokenException.class);
                  assertThat(after.get()).isNotNull();
                  assertThat(FencingExceptions.find(after.get())).isPresent();
                  assertThat(outer).isNotNull(); // the outer commit fails: nothing was committed
                  assertThat(FencingExceptions.find(outer)).isPresent();
                }
                assertThat(jdbc.queryForList("SELECT text FROM nested_entry", String.class))
                    .isEmpty();
              });
    }
  }
}
